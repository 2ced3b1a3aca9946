/**
 * What keeps the audit log complete as routes are added: every registered POST/PUT/PATCH/DELETE
 * route of the partner API and the operator API is walked; each is either called here — a
 * successful write leaves exactly one entry, with the caller as its actor — or named in
 * EXEMPT with the reason it records nothing. A new write route fails this test until it is one
 * or the other. (The console's and the operator console's forms: audit-forms.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeRoutes } from '../../src/core/audit/http.js';
import {
  createPlan,
  createTenant,
  createUser,
  type Method,
  startTestApp,
  type TestApp,
  type TestResponse,
  type TestTenant,
} from '../support/app.js';

/** Write routes that record no entry, and why. */
const EXEMPT: Record<string, string> = {
  'POST /auth/v1/sessions':
    'an end user signs in to the partner’s dashboard: no operator, member or key acts',
  'DELETE /auth/v1/sessions': 'an end user signs out: their own session, no audited actor',
  'POST /auth/v1/password-resets': 'an end user asks for a reset link: no audited actor',
  'POST /auth/v1/password-resets/confirm': 'an end user sets a password with a link: no audited actor',
  'POST /webhooks/agents/:agentWebhookId/trigger':
    'the call-trigger webhook: its URL is the only credential, no actor',
  'POST /admin/v1/simulator/inbound-calls':
    'stands in for the voice engine’s inbound call (tests and demos): the call is the engine’s, as a real one',
};

let t: TestApp;
let acme: TestTenant;
let sequence = 0;

interface Call {
  response: TestResponse;
  requestId: string;
}

type Caller = (method: Method, url: string, body?: unknown) => Promise<Call>;

/** Every secret value a scenario sent or was answered (passwords, keys, signing secrets, tokens). */
const secretsSeen = new Set<string>();
const SECRET_NAME = /password|secret|token|^key$/i;
function collectSecrets(value: unknown, name = ''): void {
  if (typeof value === 'string') {
    if (SECRET_NAME.test(name) && value.length >= 8) secretsSeen.add(value);
  } else if (Array.isArray(value)) {
    for (const item of value) collectSecrets(item, name);
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) collectSecrets(item, key);
  }
}

const tagged =
  (
    send: (
      method: Method,
      url: string,
      body: unknown,
      headers: Record<string, string>,
    ) => Promise<TestResponse>,
  ) =>
  async (method: Method, url: string, body?: unknown): Promise<Call> => {
    sequence++;
    const requestId = `req_route_${sequence}`;
    const response = await send(method, url, body, { 'x-request-id': requestId });
    collectSecrets(body);
    collectSecrets(response.body);
    return { response, requestId };
  };

const partner: Caller = (method, url, body) =>
  tagged((m, u, b, h) => acme.request(m, u, b, h))(method, url, body);
const admin: Caller = (method, url, body) => tagged((m, u, b, h) => t.admin(m, u, b, h))(method, url, body);

const agentInput = (userId: string) => ({
  user_id: userId,
  name: 'Reception',
  phone_number: '+14155550199',
  prompt: 'Call {name} about {product}.',
  welcome_message: 'Hello {name}, this is Acme.',
});

async function ok(response: TestResponse | Promise<TestResponse>): Promise<any> {
  const answer = await response;
  if (answer.status >= 400) throw new Error(`setup: ${answer.status} ${answer.raw}`);
  return answer.body?.data;
}

async function newAgent(publish = false) {
  const user = await createUser(acme);
  await ok(t.admin('POST', `/admin/v1/users/${user.id}/credits`, { minutes: 100 }));
  const agent = await ok(acme.request('POST', '/api/v1/agents', agentInput(user.id)));
  if (publish) await ok(acme.request('POST', `/api/v1/agents/${agent.id}/publish`));
  return { agent, user };
}

async function subscribed() {
  const plan = await createPlan(t, acme.id);
  const user = await createUser(acme);
  const subscription = await ok(
    acme.request('POST', '/api/v1/subscriptions', { user_id: user.id, plan_id: plan.id }),
  );
  return { plan, user, subscription };
}

async function campaign(start = false) {
  const { agent } = await newAgent(true);
  const created = await ok(
    acme.request('POST', '/api/v1/campaigns', {
      agent_id: agent.id,
      name: 'Spring',
      recipients: [{ phone: '+14155510000' }, { phone: '+14155512345' }],
    }),
  );
  if (start) await ok(acme.request('POST', `/api/v1/campaigns/${created.id}/start`));
  return created;
}

async function endpoint() {
  return ok(
    acme.request('POST', '/api/v1/webhook-endpoints', {
      url: 'https://hooks.example.com/vp',
      events: ['call.queued'],
    }),
  );
}

let phoneSequence = 0;
async function importedNumber() {
  phoneSequence++;
  const phone = `+1415555${String(7000 + phoneSequence)}`;
  await ok(t.admin('POST', '/admin/v1/phone-numbers', { phone_number: phone, tenant_id: acme.id }));
  return encodeURIComponent(phone);
}

const verificationValues = new Map<string, string>();
async function domain() {
  sequence++;
  const added = await ok(
    t.admin('POST', `/admin/v1/tenants/${acme.id}/domains`, { hostname: `portal${sequence}.acme.example` }),
  );
  verificationValues.set(added.verification.name, added.verification.value);
  return added;
}

/**
 * One successful call per audited route: the actor it must be recorded as, and the call (setup
 * before it is the scenario's own and may record entries of its own request ids).
 */
const SCENARIOS: Record<
  string,
  { actor: 'api_key' | 'operator_token'; status?: number; run: () => Promise<Call> }
> = {
  'POST /api/v1/users': {
    actor: 'api_key',
    run: () =>
      partner('POST', '/api/v1/users', {
        email: `u${++sequence}@example.com`,
        name: 'Ada',
        password: 'pw-12345678',
      }),
  },
  'PATCH /api/v1/users/:id': {
    actor: 'api_key',
    run: async () => partner('PATCH', `/api/v1/users/${(await createUser(acme)).id}`, { name: 'Ada L.' }),
  },
  'DELETE /api/v1/users/:id': {
    actor: 'api_key',
    run: async () => partner('DELETE', `/api/v1/users/${(await createUser(acme)).id}`),
  },
  'POST /api/v1/subscriptions': {
    actor: 'api_key',
    run: async () => {
      const plan = await createPlan(t, acme.id);
      const user = await createUser(acme);
      return partner('POST', '/api/v1/subscriptions', { user_id: user.id, plan_id: plan.id });
    },
  },
  'POST /api/v1/subscriptions/:id/cancel': {
    actor: 'api_key',
    run: async () => partner('POST', `/api/v1/subscriptions/${(await subscribed()).subscription.id}/cancel`),
  },
  'PATCH /api/v1/subscriptions/:id/plan': {
    actor: 'api_key',
    run: async () => {
      const { subscription } = await subscribed();
      const other = await createPlan(t, acme.id, { name: 'Pro', monthly_price: 4900, annual_price: 49000 });
      return partner('PATCH', `/api/v1/subscriptions/${subscription.id}/plan`, { plan_id: other.id });
    },
  },
  'POST /api/v1/users/:id/top-ups': {
    actor: 'api_key',
    run: async () =>
      partner('POST', `/api/v1/users/${(await subscribed()).user.id}/top-ups`, { minutes: 30 }),
  },
  'POST /api/v1/agents': {
    actor: 'api_key',
    run: async () => partner('POST', '/api/v1/agents', agentInput((await createUser(acme)).id)),
  },
  'PATCH /api/v1/agents/:id': {
    actor: 'api_key',
    run: async () =>
      partner('PATCH', `/api/v1/agents/${(await newAgent()).agent.id}`, { name: 'Front desk' }),
  },
  'DELETE /api/v1/agents/:id': {
    actor: 'api_key',
    run: async () => partner('DELETE', `/api/v1/agents/${(await newAgent()).agent.id}`),
  },
  'POST /api/v1/agents/:id/publish': {
    actor: 'api_key',
    run: async () => partner('POST', `/api/v1/agents/${(await newAgent()).agent.id}/publish`),
  },
  'POST /api/v1/agents/:id/rotate-webhook': {
    actor: 'api_key',
    run: async () => partner('POST', `/api/v1/agents/${(await newAgent()).agent.id}/rotate-webhook`),
  },
  'PUT /api/v1/agent-defaults': {
    actor: 'api_key',
    run: () =>
      partner('PUT', '/api/v1/agent-defaults', {
        voice: { provider: 'cartesia', voice_id: 'c1' },
        model: null,
      }),
  },
  'POST /api/v1/do-not-call': {
    actor: 'api_key',
    run: () => partner('POST', '/api/v1/do-not-call', { phone_number: '+14155550777' }),
  },
  'DELETE /api/v1/do-not-call/:phone_number': {
    actor: 'api_key',
    run: async () => {
      await ok(acme.request('POST', '/api/v1/do-not-call', { phone_number: '+14155550778' }));
      return partner('DELETE', `/api/v1/do-not-call/${encodeURIComponent('+14155550778')}`);
    },
  },
  'POST /api/v1/webhook-endpoints': {
    actor: 'api_key',
    run: () =>
      partner('POST', '/api/v1/webhook-endpoints', {
        url: 'https://hooks.example.com/a',
        events: ['call.queued'],
      }),
  },
  'PATCH /api/v1/webhook-endpoints/:id': {
    actor: 'api_key',
    run: async () =>
      partner('PATCH', `/api/v1/webhook-endpoints/${(await endpoint()).id}`, { enabled: false }),
  },
  'DELETE /api/v1/webhook-endpoints/:id': {
    actor: 'api_key',
    run: async () => partner('DELETE', `/api/v1/webhook-endpoints/${(await endpoint()).id}`),
  },
  'POST /api/v1/webhook-endpoints/:id/rotate-secret': {
    actor: 'api_key',
    run: async () => partner('POST', `/api/v1/webhook-endpoints/${(await endpoint()).id}/rotate-secret`),
  },
  'POST /api/v1/webhook-endpoints/:id/deliveries/:delivery_id/retry': {
    actor: 'api_key',
    run: async () => {
      const hook = await endpoint();
      const { agent } = await newAgent(true);
      await ok(acme.request('POST', '/api/v1/calls', { agent_id: agent.id, phone: '+14155550123' }));
      let deliveries = await ok(acme.request('GET', `/api/v1/webhook-endpoints/${hook.id}/deliveries`));
      if (deliveries.length === 0) {
        await t.services.jobRunner.drain();
        deliveries = await ok(acme.request('GET', `/api/v1/webhook-endpoints/${hook.id}/deliveries`));
      }
      return partner('POST', `/api/v1/webhook-endpoints/${hook.id}/deliveries/${deliveries[0].id}/retry`);
    },
  },
  'POST /api/v1/webhook-endpoints/:id/test': {
    actor: 'api_key',
    status: 201,
    run: async () => partner('POST', `/api/v1/webhook-endpoints/${(await endpoint()).id}/test`),
  },
  'POST /api/v1/webhook-endpoints/:id/deliveries/:delivery_id/resend': {
    actor: 'api_key',
    status: 201,
    run: async () => {
      const hook = await endpoint();
      const sent = await ok(acme.request('POST', `/api/v1/webhook-endpoints/${hook.id}/test`));
      return partner('POST', `/api/v1/webhook-endpoints/${hook.id}/deliveries/${sent.id}/resend`);
    },
  },
  'POST /api/v1/calls': {
    actor: 'api_key',
    run: async () =>
      partner('POST', '/api/v1/calls', { agent_id: (await newAgent(true)).agent.id, phone: '+14155550123' }),
  },
  'POST /api/v1/tools-secret/rotate': {
    actor: 'api_key',
    run: () => partner('POST', '/api/v1/tools-secret/rotate'),
  },
  'PATCH /api/v1/phone-numbers/:phone_number': {
    actor: 'api_key',
    run: async () =>
      partner('PATCH', `/api/v1/phone-numbers/${await importedNumber()}`, {
        inbound_agent_id: null,
        label: 'Front',
      }),
  },
  'POST /api/v1/campaigns': {
    actor: 'api_key',
    run: async () =>
      partner('POST', '/api/v1/campaigns', {
        agent_id: (await newAgent(true)).agent.id,
        name: 'Summer',
        recipients: [{ phone: '+14155550101' }],
      }),
  },
  'POST /api/v1/campaigns/:id/recipients': {
    actor: 'api_key',
    run: async () =>
      partner('POST', `/api/v1/campaigns/${(await campaign()).id}/recipients`, {
        recipients: [{ phone: '+14155550102' }],
      }),
  },
  'POST /api/v1/campaigns/:id/start': {
    actor: 'api_key',
    run: async () => partner('POST', `/api/v1/campaigns/${(await campaign()).id}/start`),
  },
  'POST /api/v1/campaigns/:id/pause': {
    actor: 'api_key',
    run: async () => partner('POST', `/api/v1/campaigns/${(await campaign(true)).id}/pause`),
  },
  'POST /api/v1/campaigns/:id/resume': {
    actor: 'api_key',
    run: async () => {
      const paused = await campaign(true);
      await ok(acme.request('POST', `/api/v1/campaigns/${paused.id}/pause`));
      return partner('POST', `/api/v1/campaigns/${paused.id}/resume`);
    },
  },
  'POST /api/v1/campaigns/:id/cancel': {
    actor: 'api_key',
    run: async () => partner('POST', `/api/v1/campaigns/${(await campaign(true)).id}/cancel`),
  },
  'POST /api/v1/campaigns/:id/retry': {
    actor: 'api_key',
    run: async () => {
      const running = await campaign(true);
      for (let round = 0; round < 5; round++) {
        await t.services.jobRunner.drain();
        const current = await ok(acme.request('GET', `/api/v1/campaigns/${running.id}`));
        if (current.status === 'completed') break;
      }
      return partner('POST', `/api/v1/campaigns/${running.id}/retry`);
    },
  },

  'POST /admin/v1/tenants': {
    actor: 'operator_token',
    run: () => admin('POST', '/admin/v1/tenants', { name: 'Initech' }),
  },
  'PATCH /admin/v1/tenants/:id': {
    actor: 'operator_token',
    run: () => admin('PATCH', `/admin/v1/tenants/${acme.id}`, { max_concurrent_calls: 20 }),
  },
  'PATCH /admin/v1/tenants/:id/branding': {
    actor: 'operator_token',
    run: () => admin('PATCH', `/admin/v1/tenants/${acme.id}/branding`, { brand_name: 'Acme Voice' }),
  },
  'POST /admin/v1/tenants/:id/domains': {
    actor: 'operator_token',
    run: () => admin('POST', `/admin/v1/tenants/${acme.id}/domains`, { hostname: 'voice.acme.example' }),
  },
  'POST /admin/v1/tenants/:id/domains/:domain_id/verify': {
    actor: 'operator_token',
    run: async () => admin('POST', `/admin/v1/tenants/${acme.id}/domains/${(await domain()).id}/verify`),
  },
  'DELETE /admin/v1/tenants/:id/domains/:domain_id': {
    actor: 'operator_token',
    run: async () => admin('DELETE', `/admin/v1/tenants/${acme.id}/domains/${(await domain()).id}`),
  },
  'POST /admin/v1/tenants/:id/api-keys': {
    actor: 'operator_token',
    run: () => admin('POST', `/admin/v1/tenants/${acme.id}/api-keys`, { scopes: ['users:read'] }),
  },
  'DELETE /admin/v1/api-keys/:id': {
    actor: 'operator_token',
    run: async () => {
      const key = await ok(
        t.admin('POST', `/admin/v1/tenants/${acme.id}/api-keys`, { scopes: ['users:read'] }),
      );
      return admin('DELETE', `/admin/v1/api-keys/${key.id}`);
    },
  },
  'POST /admin/v1/tenants/:id/plans': {
    actor: 'operator_token',
    run: () =>
      admin('POST', `/admin/v1/tenants/${acme.id}/plans`, {
        name: 'Starter',
        provider: 'agency',
        currency: 'usd',
        monthly_price: 2900,
        annual_price: 29000,
        included_minutes: 100,
        overage_rate: 0.12,
        topup_rate: 0.1,
      }),
  },
  'PATCH /admin/v1/plans/:id': {
    actor: 'operator_token',
    run: async () =>
      admin('PATCH', `/admin/v1/plans/${(await createPlan(t, acme.id)).id}`, { name: 'Starter+' }),
  },
  'DELETE /admin/v1/plans/:id': {
    actor: 'operator_token',
    run: async () => admin('DELETE', `/admin/v1/plans/${(await createPlan(t, acme.id)).id}`),
  },
  'PATCH /admin/v1/users/:id': {
    actor: 'operator_token',
    run: async () => admin('PATCH', `/admin/v1/users/${(await createUser(acme)).id}`, { status: 'blocked' }),
  },
  'POST /admin/v1/users/:id/credits': {
    actor: 'operator_token',
    run: async () => admin('POST', `/admin/v1/users/${(await createUser(acme)).id}/credits`, { minutes: 10 }),
  },
  'PUT /admin/v1/users/:id/payment-method': {
    actor: 'operator_token',
    run: async () =>
      admin('PUT', `/admin/v1/users/${(await createUser(acme)).id}/payment-method`, {
        token: 'pm_card_visa',
      }),
  },
  'DELETE /admin/v1/users/:id/payment-method': {
    actor: 'operator_token',
    run: async () => {
      const user = await createUser(acme);
      await ok(t.admin('PUT', `/admin/v1/users/${user.id}/payment-method`, { token: 'pm_card_visa' }));
      return admin('DELETE', `/admin/v1/users/${user.id}/payment-method`);
    },
  },
  'POST /admin/v1/tenants/:id/agents': {
    actor: 'operator_token',
    run: async () =>
      admin('POST', `/admin/v1/tenants/${acme.id}/agents`, agentInput((await createUser(acme)).id)),
  },
  'PATCH /admin/v1/agents/:id': {
    actor: 'operator_token',
    run: async () =>
      admin('PATCH', `/admin/v1/agents/${(await newAgent()).agent.id}`, { prompt: 'Be brief.' }),
  },
  'POST /admin/v1/agents/:id/publish': {
    actor: 'operator_token',
    run: async () => admin('POST', `/admin/v1/agents/${(await newAgent()).agent.id}/publish`),
  },
  'POST /admin/v1/agents/:id/rotate-webhook': {
    actor: 'operator_token',
    run: async () => admin('POST', `/admin/v1/agents/${(await newAgent()).agent.id}/rotate-webhook`),
  },
  'PUT /admin/v1/tenants/:id/agent-defaults': {
    actor: 'operator_token',
    run: () => admin('PUT', `/admin/v1/tenants/${acme.id}/agent-defaults`, { voice: null, model: null }),
  },
  'POST /admin/v1/tenants/:id/members': {
    actor: 'operator_token',
    run: () =>
      admin('POST', `/admin/v1/tenants/${acme.id}/members`, {
        email: `m${++sequence}@acme.example`,
        password: 'member pw 1234',
      }),
  },
  'PUT /admin/v1/tenants/:id/wallet': {
    actor: 'operator_token',
    run: () => admin('PUT', `/admin/v1/tenants/${acme.id}/wallet`, { wholesale_rate: 0.05, currency: 'usd' }),
  },
  'POST /admin/v1/tenants/:id/wallet/credits': {
    actor: 'operator_token',
    run: async () => {
      await ok(
        t.admin('PUT', `/admin/v1/tenants/${acme.id}/wallet`, { wholesale_rate: 0.05, currency: 'usd' }),
      );
      return admin('POST', `/admin/v1/tenants/${acme.id}/wallet/credits`, { minutes: 500 });
    },
  },
  'POST /admin/v1/tenants/:id/wallet/payment-method': {
    actor: 'operator_token',
    run: async () => {
      await ok(
        t.admin('PUT', `/admin/v1/tenants/${acme.id}/wallet`, { wholesale_rate: 0.05, currency: 'usd' }),
      );
      return admin('POST', `/admin/v1/tenants/${acme.id}/wallet/payment-method`, { token: 'pm_card_visa' });
    },
  },
  'POST /admin/v1/tenants/:id/suspend': {
    actor: 'operator_token',
    run: async () => {
      const other = await createTenant(t, { name: 'Initech' });
      return admin('POST', `/admin/v1/tenants/${other.id}/suspend`, { reason: 'Unpaid invoice' });
    },
  },
  'POST /admin/v1/tenants/:id/unsuspend': {
    actor: 'operator_token',
    run: async () => {
      const other = await createTenant(t, { name: 'Hooli' });
      await ok(t.admin('POST', `/admin/v1/tenants/${other.id}/suspend`, {}));
      return admin('POST', `/admin/v1/tenants/${other.id}/unsuspend`);
    },
  },
  'POST /admin/v1/phone-numbers': {
    actor: 'operator_token',
    run: () => admin('POST', '/admin/v1/phone-numbers', { phone_number: '+14155556000', tenant_id: acme.id }),
  },
  'PATCH /admin/v1/phone-numbers/:phone_number': {
    actor: 'operator_token',
    run: async () => {
      const other = await createTenant(t, { name: 'Globex' });
      return admin('PATCH', `/admin/v1/phone-numbers/${await importedNumber()}`, { tenant_id: other.id });
    },
  },
  'DELETE /admin/v1/phone-numbers/:phone_number': {
    actor: 'operator_token',
    run: async () => admin('DELETE', `/admin/v1/phone-numbers/${await importedNumber()}`),
  },
};

const apiRoutes = () =>
  writeRoutes(t.app)
    .filter((route) => /^\/(api|admin|auth|webhooks)\//.test(route.url))
    .map((route) => `${route.method} ${route.url}`);

beforeAll(async () => {
  t = await startTestApp({
    env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
    // Names resolve without DNS (to a documentation address); a domain's TXT record holds its value.
    adapters: () => ({
      resolveHost: async () => [{ address: '93.184.215.14', family: 4 }],
      resolveTxt: async (name: string) => [[verificationValues.get(name) ?? '']],
    }),
  });
  acme = await createTenant(t, { name: 'Acme' });
  // An agent calls from one of its tenant's numbers.
  await ok(t.admin('POST', '/admin/v1/phone-numbers', { phone_number: '+14155550199', tenant_id: acme.id }));
}, 120_000);
afterAll(async () => {
  await t?.close();
});

describe('every write route of the partner and operator APIs', { timeout: 600_000 }, () => {
  it('is either audited (a scenario below) or exempt with a reason', () => {
    const routes = apiRoutes();
    expect(routes.length).toBeGreaterThan(50);
    const unaccounted = routes.filter((route) => !SCENARIOS[route] && !EXEMPT[route]);
    expect(unaccounted).toEqual([]);
    // Both lists name only routes that exist, and no route is in both.
    const known = new Set(routes);
    expect(Object.keys(SCENARIOS).filter((route) => !known.has(route))).toEqual([]);
    expect(Object.keys(EXEMPT).filter((route) => !known.has(route) || SCENARIOS[route])).toEqual([]);
  });

  it('each audited route leaves exactly one entry, with its caller as actor', async () => {
    const wrong: string[] = [];
    for (const [route, scenario] of Object.entries(SCENARIOS)) {
      let call: Call;
      try {
        call = await scenario.run();
      } catch (error) {
        wrong.push(`${route}: ${(error as Error).message}`);
        continue;
      }
      const expected = scenario.status;
      if (expected ? call.response.status !== expected : call.response.status >= 400) {
        wrong.push(`${route}: answered ${call.response.status} ${call.response.raw.slice(0, 200)}`);
        continue;
      }
      const rows = await t.services.database.db
        .selectFrom('audit_events')
        .select(['actor_type', 'actor_id', 'action'])
        .where('request_id', '=', call.requestId)
        .execute();
      const actorId = scenario.actor === 'api_key' ? acme.keyId : 'admin_token';
      if (rows.length !== 1 || rows[0].actor_type !== scenario.actor || rows[0].actor_id !== actorId) {
        wrong.push(`${route}: ${JSON.stringify(rows)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('a call its guard refuses (a listed number) leaves no entry: the entry is in the call’s own statement', async () => {
    const { agent } = await newAgent(true);
    await ok(acme.request('POST', '/api/v1/do-not-call', { phone_number: '+14155550999' }));
    const refused = await partner('POST', '/api/v1/calls', { agent_id: agent.id, phone: '+14155550999' });
    expect(refused.response.status).toBe(422);
    const rows = await t.services.database.db
      .selectFrom('audit_events')
      .select('id')
      .where('request_id', '=', refused.requestId)
      .execute();
    expect(rows).toEqual([]);
  });

  it('no secret value sent or answered reaches any entry', async () => {
    // The scenarios sent passwords and card tokens and were answered API keys and signing secrets.
    expect(secretsSeen.size).toBeGreaterThanOrEqual(5);
    const stored = JSON.stringify(
      await t.services.database.db.selectFrom('audit_events').selectAll().execute(),
    );
    expect([...secretsSeen].filter((secret) => stored.includes(secret))).toEqual([]);
  });

  it('the runtime guard logged no audited write answered without an entry', () => {
    const missing = t.logs.filter((line) => line.includes('audit_missing'));
    expect(missing).toEqual([]);
  });
});
