/**
 * The forms of the agency console and the operator console in the audit log: every registered
 * POST under /console and /operator is either sent here — a successful form leaves exactly one
 * entry with the signed-in member (or staff member) as actor — or named in EXEMPT with the reason
 * it records nothing. A new form fails this test until it is one or the other.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeRoutes } from '../../src/core/audit/http.js';
import type { PageResponse } from '../console/http.js';
import { type ConsoleClient, consoleClient } from '../console/http.js';
import {
  addStaff,
  codeOf,
  type OperatorClient,
  operatorClient,
  type TestStaff,
} from '../operator/console-helpers.js';
import {
  createPlan,
  createTenant,
  createUser,
  startTestApp,
  type TestApp,
  type TestTenant,
} from '../support/app.js';

/** Form posts that record no entry, and why. */
const EXEMPT: Record<string, string> = {
  'POST /console/sign-in': 'signing in changes no audited object (the session is the member’s own)',
  'POST /console/sign-in/two-factor': 'the second step of signing in',
  'POST /console/sign-out': 'signing out ends the member’s own session',
  'POST /console/emails/test': 'sends a test email to the member; nothing is stored',
  'POST /operator/sign-in': 'signing in to the operator console',
  'POST /operator/sign-out': 'signing out of the operator console',
  'POST /console/phone-numbers/:phone_number/simulate':
    'stands in for the voice engine’s inbound call (simulated engine only): the call is the engine’s, as a real one',
  'POST /portal': 'the client portal: end users acting on their own account, no audited actor',
  'POST /portal/*': 'the client portal: end users acting on their own account, no audited actor',
};

const OWNER_PASSWORD = 'owner password 123';

let t: TestApp;
let acme: TestTenant;
let ownerId: string;
let member: ConsoleClient;
let staff: OperatorClient;
let owner: TestStaff;
const memberHeaders: Record<string, string> = {};
const staffHeaders: Record<string, string> = {};
let sequence = 0;

interface Sent {
  page: PageResponse;
  requestId: string;
}

/** A form post whose request id names its entries. */
async function send(
  client: ConsoleClient | OperatorClient,
  headers: Record<string, string>,
  url: string,
  fields: Record<string, string> = {},
): Promise<Sent> {
  sequence++;
  const requestId = `req_form_${sequence}`;
  headers['x-request-id'] = requestId;
  try {
    return { page: await client.post(url, fields), requestId };
  } finally {
    delete headers['x-request-id'];
  }
}
const asMember = (url: string, fields?: Record<string, string>) => send(member, memberHeaders, url, fields);
const asStaff = (url: string, fields?: Record<string, string>) => send(staff, staffHeaders, url, fields);

async function ok<T = any>(response: { status: number; raw: string; body: any } | Promise<any>): Promise<T> {
  const answer = await response;
  if (answer.status >= 400) throw new Error(`setup: ${answer.status} ${answer.raw}`);
  return answer.body?.data;
}

const agentInput = (userId: string) => ({
  user_id: userId,
  name: 'Reception',
  phone_number: '+14155550199',
  prompt: 'Call {name} about {product}.',
  welcome_message: 'Hello {name}, this is Acme.',
});

async function newAgent(publish = false) {
  const user = await createUser(acme);
  await ok(t.admin('POST', `/admin/v1/users/${user.id}/credits`, { minutes: 100 }));
  const agent = await ok(acme.request('POST', '/api/v1/agents', agentInput(user.id)));
  if (publish) await ok(acme.request('POST', `/api/v1/agents/${agent.id}/publish`));
  return agent;
}

async function subscribedUser() {
  const plan = await createPlan(t, acme.id);
  const user = await createUser(acme);
  const subscription = await ok(
    acme.request('POST', '/api/v1/subscriptions', { user_id: user.id, plan_id: plan.id }),
  );
  return { user, subscription };
}

async function campaignId(start = false) {
  const agent = await newAgent(true);
  const created = await ok(
    acme.request('POST', '/api/v1/campaigns', {
      agent_id: agent.id,
      name: 'Spring',
      recipients: [{ phone: '+14155510000' }],
    }),
  );
  if (start) await ok(acme.request('POST', `/api/v1/campaigns/${created.id}/start`));
  return created.id as string;
}

async function otherMember() {
  sequence++;
  return ok(
    t.admin('POST', `/admin/v1/tenants/${acme.id}/members`, {
      email: `staffer${sequence}@acme.example`,
      password: 'member pw 12345',
      role: 'viewer',
    }),
  );
}

let phoneSequence = 0;
const nextNumber = () => `+1415555${String(6100 + ++phoneSequence).padStart(4, '0')}`;

/** A number the engine holds, imported for Acme through the operator API. */
async function importedNumber(): Promise<string> {
  const number = nextNumber();
  await ok(t.admin('POST', '/admin/v1/phone-numbers', { phone_number: number, tenant_id: acme.id }));
  return number;
}

async function endpointId() {
  const created = await ok(
    acme.request('POST', '/api/v1/webhook-endpoints', {
      url: 'https://hooks.example.com/vp',
      events: ['call.queued'],
    }),
  );
  return created.id as string;
}

const verificationValues = new Map<string, string>();
const tokensSeen: string[] = [];
async function domainId() {
  sequence++;
  const added = await ok(
    t.admin('POST', `/admin/v1/tenants/${acme.id}/domains`, { hostname: `d${sequence}.acme.example` }),
  );
  verificationValues.set(added.verification.name, added.verification.value);
  return added.id as string;
}

async function memberInvitation() {
  sequence++;
  const { invitation, url } = await t.services.members.invite(
    acme.id,
    { memberId: ownerId, label: 'Owner' },
    { email: `joiner${sequence}@acme.example`, role: 'viewer' },
  );
  const token = url.split('/').pop() as string;
  tokensSeen.push(token);
  return { id: invitation.id, token };
}

type Actor = 'member' | 'operator_staff';
interface Scenario {
  actor: Actor;
  /** Entries the form records (the operator's new tenant is two objects: the tenant and its owner). */
  entries?: number;
  run: () => Promise<Sent>;
}

const member_ = (run: () => Promise<Sent>): Scenario => ({ actor: 'member', run });
const staff_ = (run: () => Promise<Sent>): Scenario => ({ actor: 'operator_staff', run });

const SCENARIOS: Record<string, Scenario> = {
  'POST /console/agents/defaults': member_(() => asMember('/console/agents/defaults', {})),
  'POST /console/agents': member_(async () =>
    asMember('/console/agents', { ...agentInput((await createUser(acme)).id) }),
  ),
  'POST /console/agents/:id': member_(async () => {
    const agent = await newAgent();
    return asMember(`/console/agents/${agent.id}`, {
      name: 'Front desk',
      phone_number: agent.phone_number,
      prompt: agent.prompt,
      welcome_message: agent.welcome_message,
    });
  }),
  'POST /console/agents/:id/config': member_(async () =>
    asMember(`/console/agents/${(await newAgent()).id}/config`, {}),
  ),
  'POST /console/agents/:id/publish': member_(async () =>
    asMember(`/console/agents/${(await newAgent()).id}/publish`),
  ),
  'POST /console/agents/:id/rotate-webhook': member_(async () =>
    asMember(`/console/agents/${(await newAgent()).id}/rotate-webhook`),
  ),
  'POST /console/agents/:id/delete': member_(async () =>
    asMember(`/console/agents/${(await newAgent()).id}/delete`),
  ),
  'POST /console/agents/:id/calls': member_(async () =>
    asMember(`/console/agents/${(await newAgent(true)).id}/calls`, { phone: '+14155550123', name: 'Ada' }),
  ),
  'POST /console/do-not-call': member_(() =>
    asMember('/console/do-not-call', { phone_number: '+14155550877' }),
  ),
  'POST /console/do-not-call/remove': member_(async () => {
    await ok(acme.request('POST', '/api/v1/do-not-call', { phone_number: '+14155550878' }));
    return asMember('/console/do-not-call/remove', { phone_number: '+14155550878' });
  }),
  'POST /console/api-keys': member_(() =>
    asMember('/console/api-keys', { name: 'CRM', env: 'test', scopes: 'users:read' }),
  ),
  'POST /console/api-keys/:id/revoke': member_(async () => {
    const key = await ok(
      t.admin('POST', `/admin/v1/tenants/${acme.id}/api-keys`, { scopes: ['users:read'] }),
    );
    return asMember(`/console/api-keys/${key.id}/revoke`);
  }),
  'POST /console/plans/processor-account': member_(() =>
    asMember('/console/plans/processor-account', { processor_account_id: 'acct_1AcmeVoice' }),
  ),
  'POST /console/plans': member_(() =>
    asMember('/console/plans', {
      name: 'Growth',
      provider: 'agency',
      currency: 'usd',
      monthly_price: '49',
      annual_price: '490',
      included_minutes: '300',
      overage_rate: '0.1',
      topup_rate: '0.1',
      trial_period_days: '0',
    }),
  ),
  'POST /console/plans/:id/archive': member_(async () =>
    asMember(`/console/plans/${(await createPlan(t, acme.id)).id}/archive`),
  ),
  'POST /console/users/:id/block': member_(async () =>
    asMember(`/console/users/${(await createUser(acme)).id}/block`),
  ),
  'POST /console/users/:id/unblock': member_(async () => {
    const user = await createUser(acme);
    await ok(t.admin('PATCH', `/admin/v1/users/${user.id}`, { status: 'blocked' }));
    return asMember(`/console/users/${user.id}/unblock`);
  }),
  'POST /console/users/:id/delete': member_(async () =>
    asMember(`/console/users/${(await createUser(acme)).id}/delete`),
  ),
  'POST /console/users/:id/credits': member_(async () =>
    asMember(`/console/users/${(await createUser(acme)).id}/credits`, { minutes: '15', reason: 'Goodwill' }),
  ),
  'POST /console/users/:id/top-ups': member_(async () =>
    asMember(`/console/users/${(await subscribedUser()).user.id}/top-ups`, {
      minutes: '20',
      form_key: `topup-form-key-${++sequence}`,
    }),
  ),
  'POST /console/members/invitations': member_(() =>
    asMember('/console/members/invitations', { email: `invitee${++sequence}@acme.example`, role: 'viewer' }),
  ),
  'POST /console/members/invitations/:id/revoke': member_(async () =>
    asMember(`/console/members/invitations/${(await memberInvitation()).id}/revoke`),
  ),
  'POST /console/members/:id/role': member_(async () =>
    asMember(`/console/members/${(await otherMember()).id}/role`, { role: 'admin' }),
  ),
  'POST /console/members/:id/remove': member_(async () =>
    asMember(`/console/members/${(await otherMember()).id}/remove`),
  ),
  'POST /console/invitations/:token': member_(async () => {
    // The invitee has no session: the entry names the member the link creates.
    const joiner = consoleClient(t, memberHeaders);
    const { token } = await memberInvitation();
    await joiner.get(`/console/invitations/${token}`);
    return send(joiner, memberHeaders, `/console/invitations/${token}`, {
      name: 'Joiner',
      password: 'joiner pw 12345',
    });
  }),
  'POST /console/emails/settings': member_(() =>
    asMember('/console/emails/settings', {
      smtp_url: 'smtp://mailer@smtp.acme.example:587',
      from: 'Acme <hello@acme.example>',
      smtp_password: 'smtp-secret-5521',
    }),
  ),
  'POST /console/branding': member_(() =>
    asMember('/console/branding', { brand_name: 'Acme Voice', slug: 'acme' }),
  ),
  'POST /console/branding/domains': member_(() =>
    asMember('/console/branding/domains', { hostname: 'talk.acme.example' }),
  ),
  'POST /console/branding/domains/:id/verify': member_(async () =>
    asMember(`/console/branding/domains/${await domainId()}/verify`),
  ),
  'POST /console/branding/domains/:id/remove': member_(async () =>
    asMember(`/console/branding/domains/${await domainId()}/remove`),
  ),
  'POST /console/webhooks': member_(() =>
    asMember('/console/webhooks', { url: 'https://hooks.example.com/console', events: 'call.queued' }),
  ),
  'POST /console/webhooks/:id': member_(async () =>
    asMember(`/console/webhooks/${await endpointId()}`, {
      url: 'https://hooks.example.com/edited',
      events: 'call.queued',
    }),
  ),
  'POST /console/webhooks/:id/enable': member_(async () => {
    const id = await endpointId();
    await ok(acme.request('PATCH', `/api/v1/webhook-endpoints/${id}`, { enabled: false }));
    return asMember(`/console/webhooks/${id}/enable`);
  }),
  'POST /console/webhooks/:id/disable': member_(async () =>
    asMember(`/console/webhooks/${await endpointId()}/disable`),
  ),
  'POST /console/webhooks/:id/rotate': member_(async () =>
    asMember(`/console/webhooks/${await endpointId()}/rotate`),
  ),
  'POST /console/webhooks/:id/delete': member_(async () =>
    asMember(`/console/webhooks/${await endpointId()}/delete`),
  ),
  'POST /console/webhooks/:id/deliveries/:delivery/retry': member_(async () => {
    const id = await endpointId();
    const agent = await newAgent(true);
    await ok(acme.request('POST', '/api/v1/calls', { agent_id: agent.id, phone: '+14155550123' }));
    let deliveries = await ok(acme.request('GET', `/api/v1/webhook-endpoints/${id}/deliveries`));
    if (deliveries.length === 0) {
      await t.services.jobRunner.drain();
      deliveries = await ok(acme.request('GET', `/api/v1/webhook-endpoints/${id}/deliveries`));
    }
    return asMember(`/console/webhooks/${id}/deliveries/${deliveries[0].id}/retry`);
  }),
  'POST /console/webhooks/:id/test': member_(async () =>
    asMember(`/console/webhooks/${await endpointId()}/test`, { form_key: `test-event-${++sequence}` }),
  ),
  'POST /console/webhooks/:id/deliveries/:delivery/resend': member_(async () => {
    const id = await endpointId();
    const sent = await ok(acme.request('POST', `/api/v1/webhook-endpoints/${id}/test`));
    return asMember(`/console/webhooks/${id}/deliveries/${sent.id}/resend`, {
      form_key: `resend-${++sequence}`,
    });
  }),
  'POST /console/phone-numbers/:phone_number': member_(async () => {
    const number = await importedNumber();
    const agent = await newAgent(true);
    return asMember(`/console/phone-numbers/${encodeURIComponent(number)}`, {
      inbound_agent_id: agent.id,
      label: 'Front desk',
    });
  }),
  'POST /console/tools-secret/rotate': member_(async () => {
    const status = await t.services.tools.secretStatus(acme.id);
    return asMember('/console/tools-secret/rotate', { rotated_at: status.rotated_at ?? '' });
  }),
  'POST /console/users': member_(() =>
    asMember('/console/users', {
      name: 'Grace',
      email: `grace${++sequence}@example.com`,
      access: 'password',
      password: 'grace pw 12345',
    }),
  ),
  'POST /console/users/:id/edit': member_(async () => {
    const user = await createUser(acme);
    return asMember(`/console/users/${user.id}/edit`, { name: 'Renamed', email: user.email, phone: '' });
  }),
  'POST /console/users/:id/invitation': member_(async () =>
    asMember(`/console/users/${(await createUser(acme)).id}/invitation`),
  ),
  'POST /console/users/:id/subscription': member_(async () => {
    const plan = await createPlan(t, acme.id);
    return asMember(`/console/users/${(await createUser(acme)).id}/subscription`, { plan_id: plan.id });
  }),
  'POST /console/subscriptions/:id/cancel': member_(async () =>
    asMember(`/console/subscriptions/${(await subscribedUser()).subscription.id}/cancel`),
  ),
  'POST /console/campaigns': member_(async () =>
    asMember('/console/campaigns', {
      name: 'Autumn',
      agent_id: (await newAgent(true)).id,
      rows: 'phone,name\n+14155550301,Ada',
    }),
  ),
  'POST /console/campaigns/:id/:action': member_(async () =>
    asMember(`/console/campaigns/${await campaignId()}/start`),
  ),
  'POST /console/account/password': member_(() =>
    asMember('/console/account/password', {
      current_password: OWNER_PASSWORD,
      new_password: 'a new owner pw 987',
    }),
  ),
  'POST /console/account/two-factor/enable': member_(async () => {
    const setup = (await member.get('/console/account/two-factor')).body;
    const sealed = /name="setup" value="([^"]+)"/.exec(setup)?.[1] ?? '';
    totpSecret = /\b([A-Z2-7]{32})\b/.exec(setup)?.[1] ?? '';
    return asMember('/console/account/two-factor/enable', { setup: sealed, code: codeOf(totpSecret) });
  }),
  'POST /console/account/two-factor/disable': member_(() =>
    asMember('/console/account/two-factor/disable', { code: codeOf(totpSecret, 1) }),
  ),

  'POST /operator/tenants': {
    actor: 'operator_staff',
    entries: 2,
    run: () =>
      asStaff('/operator/tenants', { name: 'Initech', owner_email: `boss${++sequence}@initech.example` }),
  },
  'POST /operator/tenants/:id/wallet': staff_(() =>
    asStaff(`/operator/tenants/${acme.id}/wallet`, { wholesale_rate: '0.05', currency: 'usd' }),
  ),
  'POST /operator/tenants/:id/wallet/credit': staff_(() =>
    asStaff(`/operator/tenants/${acme.id}/wallet/credit`, { minutes: '100', reason: 'Launch' }),
  ),
  'POST /operator/tenants/:id/processor': staff_(() =>
    asStaff(`/operator/tenants/${acme.id}/processor`, {
      processor_account_id: 'acct_1Operator',
      application_fee_percent: '2',
    }),
  ),
  'POST /operator/tenants/:id/branding': staff_(() =>
    asStaff(`/operator/tenants/${acme.id}/branding`, { brand_name: 'Acme by Ops', slug: 'acme-ops' }),
  ),
  'POST /operator/tenants/:id/domains': staff_(() =>
    asStaff(`/operator/tenants/${acme.id}/domains`, { hostname: 'ops.acme.example' }),
  ),
  'POST /operator/tenants/:id/domains/:domainId/verify': staff_(async () =>
    asStaff(`/operator/tenants/${acme.id}/domains/${await domainId()}/verify`),
  ),
  'POST /operator/tenants/:id/domains/:domainId/remove': staff_(async () =>
    asStaff(`/operator/tenants/${acme.id}/domains/${await domainId()}/remove`),
  ),
  'POST /operator/jobs/:id/retry': staff_(async () => {
    const { rows } = await sql<{ id: string }>`
      INSERT INTO jobs (queue, payload, status, run_at, attempts, max_attempts, last_error, created_at, finished_at)
      VALUES ('emails.send', '{}', 'failed', now(), 10, 10, 'smtp refused', now(), now()) RETURNING id::text AS id`.execute(
      t.services.database.db,
    );
    return asStaff(`/operator/jobs/${rows[0].id}/retry`);
  }),
  'POST /operator/tenants/:id/suspend': staff_(async () => {
    const other = await createTenant(t, { name: `Initech ${++sequence}` });
    return asStaff(`/operator/tenants/${other.id}/suspend`, { reason: 'Unpaid invoice' });
  }),
  'POST /operator/tenants/:id/lift': staff_(async () => {
    const other = await createTenant(t, { name: `Hooli ${++sequence}` });
    await ok(t.admin('POST', `/admin/v1/tenants/${other.id}/suspend`, {}));
    return asStaff(`/operator/tenants/${other.id}/lift`);
  }),
  'POST /operator/phone-numbers': staff_(() =>
    asStaff('/operator/phone-numbers', { phone_number: nextNumber(), tenant_id: acme.id }),
  ),
  'POST /operator/phone-numbers/:number/reassign': staff_(async () => {
    const other = await createTenant(t, { name: `Globex ${++sequence}` });
    const number = await importedNumber();
    return asStaff(`/operator/phone-numbers/${encodeURIComponent(number)}/reassign`, { tenant_id: other.id });
  }),
  'POST /operator/phone-numbers/:number/release': staff_(async () =>
    asStaff(`/operator/phone-numbers/${encodeURIComponent(await importedNumber())}/release`),
  ),
  'POST /operator/brand': staff_(() =>
    asStaff('/operator/brand', { name: 'Callwise', logo_url: '', primary_color: '#0b5cad' }),
  ),
  'POST /operator/staff/invitations': staff_(() =>
    asStaff('/operator/staff/invitations', { email: `ops${++sequence}@platform.example`, role: 'support' }),
  ),
  'POST /operator/staff/invitations/:id/revoke': staff_(async () => {
    const { invitation } = await t.services.staff.invite(
      { email: `ops${++sequence}@platform.example`, role: 'support' },
      owner.id,
    );
    return asStaff(`/operator/staff/invitations/${invitation.id}/revoke`);
  }),
  'POST /operator/staff/:id/role': staff_(async () =>
    asStaff(`/operator/staff/${(await addStaff(t, 'support')).id}/role`, { role: 'admin' }),
  ),
  'POST /operator/staff/:id/remove': staff_(async () =>
    asStaff(`/operator/staff/${(await addStaff(t, 'support')).id}/remove`),
  ),
  'POST /operator/invitations/:token': staff_(async () => {
    const { token } = await t.services.staff.invite(
      { email: `ops${++sequence}@platform.example`, role: 'support' },
      owner.id,
    );
    tokensSeen.push(token);
    const invitee = operatorClient(t, staffHeaders);
    const form = (await invitee.get(`/operator/invitations/${token}`)).body;
    const sealed = /name="setup" value="([^"]+)"/.exec(form)?.[1] ?? '';
    const secret = /\b([A-Z2-7]{32})\b/.exec(form)?.[1] ?? '';
    return send(invitee, staffHeaders, `/operator/invitations/${token}`, {
      setup: sealed,
      name: 'New Ops',
      password: 'new ops password 1',
      code: codeOf(secret),
    });
  }),
};

let totpSecret = '';

const formRoutes = () =>
  writeRoutes(t.app)
    .filter((route) => /^\/(console|operator|portal)(\/|$)/.test(route.url))
    .map((route) => `${route.method} ${route.url}`);

beforeAll(async () => {
  t = await startTestApp({
    env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
    adapters: () => ({
      resolveHost: async () => [{ address: '93.184.215.14', family: 4 }],
      resolveTxt: async (name: string) => [[verificationValues.get(name) ?? '']],
    }),
  });
  acme = await createTenant(t, { name: 'Acme' });
  await ok(t.admin('POST', '/admin/v1/phone-numbers', { phone_number: '+14155550199', tenant_id: acme.id }));
  const created = await ok(
    t.admin('POST', `/admin/v1/tenants/${acme.id}/members`, {
      email: 'owner@acme.example',
      password: OWNER_PASSWORD,
      role: 'owner',
    }),
  );
  ownerId = created.id;
  member = consoleClient(t, memberHeaders);
  expect((await member.signIn('owner@acme.example', OWNER_PASSWORD)).status).toBe(303);
  owner = await addStaff(t, 'owner');
  staff = operatorClient(t, staffHeaders);
  expect((await staff.signIn(owner)).status).toBe(303);
}, 120_000);
afterAll(async () => {
  await t?.close();
});

describe('every form of the consoles', { timeout: 600_000 }, () => {
  it('is either audited (a scenario below) or exempt with a reason', () => {
    const routes = formRoutes();
    expect(routes.length).toBeGreaterThan(60);
    expect(routes.filter((route) => !SCENARIOS[route] && !EXEMPT[route])).toEqual([]);
    const known = new Set(routes);
    expect(Object.keys(SCENARIOS).filter((route) => !known.has(route))).toEqual([]);
    expect(Object.keys(EXEMPT).filter((route) => !known.has(route) || SCENARIOS[route])).toEqual([]);
  });

  it('each audited form leaves exactly one entry, with the signed-in person as actor', async () => {
    const wrong: string[] = [];
    for (const [route, scenario] of Object.entries(SCENARIOS)) {
      let sent: Sent;
      try {
        sent = await scenario.run();
      } catch (error) {
        wrong.push(`${route}: ${(error as Error).message}`);
        continue;
      }
      if (sent.page.status >= 400) {
        const alert =
          /role="alert"[^>]*>([\s\S]{0,300})/.exec(sent.page.body)?.[1] ?? sent.page.body.slice(0, 300);
        wrong.push(`${route}: answered ${sent.page.status} ${alert.replace(/\s+/g, ' ')}`);
        continue;
      }
      const rows = await t.services.database.db
        .selectFrom('audit_events')
        .select(['actor_type', 'actor_id', 'action'])
        .where('request_id', '=', sent.requestId)
        .execute();
      const expected = scenario.entries ?? 1;
      // The signed-in owner; an invitation link's entry names the member or staff member it creates.
      const signedIn = scenario.actor === 'member' ? ownerId : owner.id;
      const joining = route.endsWith('/invitations/:token');
      const right = rows.every(
        (row) =>
          row.actor_type === scenario.actor &&
          (joining ? row.actor_id !== signedIn : row.actor_id === signedIn),
      );
      if (rows.length !== expected || !right) wrong.push(`${route}: ${JSON.stringify(rows)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('no password, TOTP secret, SMTP password or invitation link reaches any entry', async () => {
    const secrets = [
      OWNER_PASSWORD,
      'a new owner pw 987',
      'smtp-secret-5521',
      'joiner pw 12345',
      'new ops password 1',
      owner.password,
      owner.secret,
      totpSecret,
      ...tokensSeen,
    ];
    expect(totpSecret).toMatch(/^[A-Z2-7]{32}$/);
    expect(tokensSeen.length).toBeGreaterThanOrEqual(2);
    const stored = JSON.stringify(
      await t.services.database.db.selectFrom('audit_events').selectAll().execute(),
    );
    expect(secrets.filter((secret) => stored.includes(secret))).toEqual([]);
  });

  it('the runtime guard logged no form answered without its entry', () => {
    expect(t.logs.filter((line) => line.includes('audit_missing'))).toEqual([]);
  });
});
