/**
 * The console's one list of pages. Each capability keeps its pages in its own folder
 * (`console-pages.ts`), beside its API routes, and calls the same service.
 */

import { agentPages } from '../agents/console-pages.js';
import { apiKeyPages } from '../api-keys/console-pages.js';
import { brandingPages } from '../branding/console-pages.js';
import { callPages } from '../calls/console-pages.js';
import { doNotCallPages } from '../do-not-call/console-pages.js';
import { emailPages } from '../emails/console-pages.js';
import { webhookPages } from '../events/console-pages.js';
import { accountPages } from '../members/account-pages.js';
import { memberPages } from '../members/console-pages.js';
import { planPages } from '../plans/console-pages.js';
import { subscriptionPages } from '../subscriptions/console-pages.js';
import { usagePages } from '../usage/console-pages.js';
import { userPages } from '../users/console-pages.js';
import { overviewPages } from './overview.js';
import type { ConsolePages } from './plugin.js';
import { signInPages } from './sign-in.js';

export const CONSOLE_PAGES: ConsolePages[] = [
  signInPages,
  overviewPages,
  agentPages,
  callPages,
  doNotCallPages,
  apiKeyPages,
  planPages,
  userPages,
  subscriptionPages,
  usagePages,
  memberPages,
  accountPages,
  emailPages,
  brandingPages,
  webhookPages,
];
