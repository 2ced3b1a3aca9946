/**
 * The voiceplane partner API for TypeScript:
 *
 *   const vp = new Voiceplane({ apiKey: process.env.VOICEPLANE_API_KEY, baseUrl: 'https://api.example.com' });
 *   const user = await vp.users.create({ email: 'ada@example.com', name: 'Ada', password: '…' });
 *   for await (const call of vp.calls.list({ status: 'completed' })) console.log(call.id);
 *
 * See README.md for retries, idempotency, errors, pagination and event signatures.
 */
import { Agents, Calls, DoNotCall } from './calling.js';
import { Campaigns } from './campaigns.js';
import { AuditEvents, Events, WebhookEndpoints } from './notifications.js';
import { Plans, Subscriptions, TopUps, Usage, Users } from './resources.js';
import { Sessions } from './sessions.js';
import { Tools } from './tools.js';
import { type ClientOptions, createTransport } from './transport.js';

export class Voiceplane {
  readonly users: Users;
  readonly plans: Plans;
  readonly subscriptions: Subscriptions;
  /** Minutes a user buys beyond the plan's (docs/top-ups.md). */
  readonly topUps: TopUps;
  /** A user's month: minutes, calls, amounts due (docs/usage.md). */
  readonly usage: Usage;
  readonly agents: Agents;
  readonly calls: Calls;
  /** Batch calls to a list of recipients (docs/campaigns.md). */
  readonly campaigns: Campaigns;
  readonly doNotCall: DoNotCall;
  readonly webhookEndpoints: WebhookEndpoints;
  readonly events: Events;
  /** Who changed what in the tenant, kept 400 days (scope `audit:read`). */
  readonly auditEvents: AuditEvents;
  /** User sessions of your white-label dashboard (/auth/v1). */
  readonly sessions: Sessions;
  /** The tools secret agents' tool requests are signed with (docs/tools.md). */
  readonly tools: Tools;

  constructor(options: ClientOptions) {
    if (!options?.baseUrl) throw new TypeError('Voiceplane: baseUrl is required');
    const send = createTransport(options);
    this.users = new Users(send);
    this.plans = new Plans(send);
    this.subscriptions = new Subscriptions(send);
    this.topUps = new TopUps(send);
    this.usage = new Usage(send);
    this.agents = new Agents(send);
    this.calls = new Calls(send);
    this.campaigns = new Campaigns(send);
    this.doNotCall = new DoNotCall(send);
    this.webhookEndpoints = new WebhookEndpoints(send);
    this.events = new Events(send);
    this.auditEvents = new AuditEvents(send);
    this.sessions = new Sessions(send);
    this.tools = new Tools(send);
  }
}

export {
  type ErrorCode,
  type ErrorDetails,
  VoiceplaneConnectionError,
  VoiceplaneError,
  VoiceplaneSignatureError,
} from './errors.js';
export type { components, operations, paths } from './openapi.js';
export type { Page, PageRequest, Pagination } from './pagination.js';
export type { Data } from './resources.js';
export { type Event, type VerifyEventOptions, verifyEvent } from './signatures.js';
export { type ToolRequest, type VerifyToolRequestOptions, verifyToolRequest } from './tools.js';
export { type ClientOptions, type RequestOptions, SDK_VERSION } from './transport.js';
