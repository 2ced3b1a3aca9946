/**
 * The console's one list of pages. Each capability keeps its pages in its own folder
 * (`console-pages.ts`), beside its API routes, and calls the same service.
 */

import { emailPages } from '../emails/console-pages.js';
import { webhookPages } from '../events/console-pages.js';
import { accountPages } from '../members/account-pages.js';
import { memberPages } from '../members/console-pages.js';
import { overviewPages } from './overview.js';
import type { ConsolePages } from './plugin.js';
import { signInPages } from './sign-in.js';

export const CONSOLE_PAGES: ConsolePages[] = [
  signInPages,
  overviewPages,
  memberPages,
  accountPages,
  emailPages,
  webhookPages,
];
