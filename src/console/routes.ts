/**
 * The console's one list of pages. Each capability keeps its pages in its own folder
 * (`console-pages.ts`), beside its API routes, and calls the same service.
 */

import { accountPages } from './pages/account.js';
import { agentPages } from './pages/agents.js';
import { analyticsPages } from './pages/analytics.js';
import { apiKeyPages } from './pages/api-keys.js';
import { auditPages } from './pages/audit.js';
import { brandingPages } from './pages/branding.js';
import { callPages } from './pages/calls.js';
import { campaignPages } from './pages/campaigns.js';
import { doNotCallPages } from './pages/do-not-call.js';
import { emailPages } from './pages/emails.js';
import { memberPages } from './pages/members.js';
import { overviewPages } from './pages/overview.js';
import { phoneNumberPages } from './pages/phone-numbers.js';
import { planPages } from './pages/plans.js';
import { signInPages } from './pages/sign-in.js';
import { subscriptionFormPages } from './pages/subscription-forms.js';
import { subscriptionPages } from './pages/subscriptions.js';
import { toolsSecretPages } from './pages/tools-secret.js';
import { usagePages } from './pages/usage.js';
import { userFormPages } from './pages/user-forms.js';
import { userPages } from './pages/users.js';
import { webhookDeliveryPages } from './pages/webhook-deliveries.js';
import { webhookPages } from './pages/webhooks.js';
import type { ConsolePages } from './plugin.js';

export const CONSOLE_PAGES: ConsolePages[] = [
  signInPages,
  overviewPages,
  agentPages,
  callPages,
  doNotCallPages,
  phoneNumberPages,
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
  toolsSecretPages,
  userFormPages,
  subscriptionFormPages,
  campaignPages,
  auditPages,
  analyticsPages,
  webhookDeliveryPages,
];
