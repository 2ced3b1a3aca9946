/** Shared set-up for the agent and call tests: a tenant, an owner with credits, published agents. */
import { operatorDefaults } from '../../src/agents/config.js';
import { findPublishedVersion } from '../../src/agents/service.js';
import { type Clock, systemClock } from '../../src/core/clock.js';
import type { Config } from '../../src/core/config/config.js';
import type { Database } from '../../src/core/db/database.js';
import { createTelephony } from '../../src/telephony/index.js';
import type { DialRequest, TelephonyAdapter } from '../../src/telephony/port.js';
import type { TestApp, TestResponse, TestTenant } from '../support/app.js';
import { createTenant, createUser } from '../support/app.js';

export interface AgentFixture {
  tenant: TestTenant;
  userId: string;
  agent: any;
}

export const AGENT_INPUT = {
  name: 'Reception',
  phone_number: '+14155550199',
  prompt: 'Call {name} about {product}.',
  welcome_message: 'Hello {name}, this is Acme.',
};

export async function createAgent(
  t: TestApp,
  tenantId: string,
  userId: string,
  overrides: Record<string, unknown> = {},
) {
  const response = await t.admin('POST', `/admin/v1/tenants/${tenantId}/agents`, {
    user_id: userId,
    ...AGENT_INPUT,
    ...overrides,
  });
  if (response.status !== 201) throw new Error(`agent: ${response.raw}`);
  return response.body.data;
}

export async function publish(t: TestApp, agentId: string) {
  const response = await t.admin('POST', `/admin/v1/agents/${agentId}/publish`);
  if (response.status !== 200) throw new Error(`publish: ${response.raw}`);
  return response.body.data;
}

export async function grantCredits(t: TestApp, userId: string, minutes: number) {
  const response = await t.admin('POST', `/admin/v1/users/${userId}/credits`, { minutes });
  if (response.status !== 201) throw new Error(`credits: ${response.raw}`);
  return response.body.data.balance_minutes as number;
}

export async function balanceOf(t: TestApp, userId: string): Promise<number> {
  const response = await t.admin('GET', `/admin/v1/users/${userId}/credits`);
  return response.body.data.balance_minutes;
}

/** A tenant, an owner with `credits` minutes and a published agent (unless `publish: false`). */
export async function agentFixture(
  t: TestApp,
  options: { credits?: number; publish?: boolean; tenant?: TestTenant; agent?: Record<string, unknown> } = {},
): Promise<AgentFixture> {
  const tenant = options.tenant ?? (await createTenant(t));
  const user = await createUser(tenant);
  if ((options.credits ?? 100) !== 0) await grantCredits(t, user.id, options.credits ?? 100);
  let agent = await createAgent(t, tenant.id, user.id, options.agent);
  if (options.publish !== false) agent = await publish(t, agent.id);
  return { tenant, userId: user.id, agent };
}

/** POSTs to a webhook id: `body` is JSON-encoded unless it is a string (sent as is). */
export function trigger(
  t: TestApp,
  webhookId: string,
  body: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<TestResponse> {
  return t.inject({
    method: 'POST',
    url: `/webhooks/agents/${webhookId}/trigger`,
    headers,
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export async function countRows(t: TestApp): Promise<{ calls: number; jobs: number }> {
  const db = t.services.database.db;
  const calls = await db
    .selectFrom('calls')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  const jobs = await db
    .selectFrom('jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('queue', 'like', 'calls.%')
    .executeTakeFirstOrThrow();
  return { calls: Number(calls.n), jobs: Number(jobs.n) };
}

export async function getCall(t: TestApp, callId: string) {
  const response = await t.admin('GET', `/admin/v1/calls/${callId}`);
  if (response.status !== 200) throw new Error(`call: ${response.raw}`);
  return response.body.data;
}

/**
 * A carrier a test can swap mid-suite: the configured one (TELEPHONY) until `during` puts another
 * in front of it. Pass `swappable.adapters` as startTestApp's `adapters`.
 */
export class SwappableTelephony implements TelephonyAdapter {
  readonly name = 'swappable';
  private configured: TelephonyAdapter | undefined;
  private current: TelephonyAdapter | undefined;

  constructor(private readonly clock: Clock = systemClock) {}

  readonly adapters = ({ config, database }: { config: Config; database: Database }) => {
    this.configured = createTelephony(config, {
      db: database.db,
      clock: this.clock,
      findAgentVersion: (tenantId, agentId, version) =>
        findPublishedVersion(database.db, tenantId, agentId, version, operatorDefaults(config.agents)),
    });
    this.current = this.configured;
    return { telephony: this as TelephonyAdapter };
  };

  /** The configured carrier, for adapters that wrap it. */
  get real(): TelephonyAdapter {
    if (!this.configured) throw new Error('SwappableTelephony: pass .adapters to startTestApp');
    return this.configured;
  }

  dial(request: DialRequest) {
    return (this.current ?? this.real).dial(request);
  }

  progress(callId: string, tenantId: string) {
    return (this.current ?? this.real).progress(callId, tenantId);
  }

  findDial(request: DialRequest, sentAt: Date) {
    return (this.current ?? this.real).findDial(request, sentAt);
  }

  get dialSettleMs() {
    return (this.current ?? this.real).dialSettleMs;
  }

  async during<T>(adapter: TelephonyAdapter, work: () => Promise<T>): Promise<T> {
    this.current = adapter;
    try {
      return await work();
    } finally {
      this.current = this.configured;
    }
  }
}
