/**
 * The SDK (packages/sdk) as a partner uses it, against the real server listening on a port:
 * typed resources with the envelope unwrapped, typed errors carrying code, details and request id,
 * auto-pagination, a create retried after a lost answer creating one user (the generated
 * Idempotency-Key), 429 retried after Retry-After, user sessions, a call triggered through its
 * URL, and event signatures checked with the SDK's helper.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Voiceplane,
  VoiceplaneConnectionError,
  VoiceplaneError,
  VoiceplaneSignatureError,
  verifyEvent,
} from '../../packages/sdk/src/index.js';
import { agentFixture } from '../calls/helpers.js';
import { type Receiver, startReceiver } from '../events/helpers.js';
import { createPlan, createTenant, startTestApp, type TestApp, type TestTenant } from '../support/app.js';

let t: TestApp;
let tenant: TestTenant;
let baseUrl: string;
let vp: Voiceplane;
let receiver: Receiver | undefined;

beforeAll(async () => {
  t = await startTestApp({ env: { SIMULATED_CALL_SECONDS: '0', WEBHOOK_ALLOW_PRIVATE: 'true' } });
  tenant = await createTenant(t);
  baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  vp = new Voiceplane({ apiKey: tenant.key, baseUrl });
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

const email = (name: string) => `${name}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;

describe('resources', () => {
  it('creates, reads, lists and deletes a user with the envelope unwrapped', async () => {
    const created = await vp.users.create({
      email: email('ada'),
      name: 'Ada Lovelace',
      password: 'correct horse',
    });
    expect(created.id).toMatch(/^usr_/);
    const read = await vp.users.retrieve(created.id);
    expect(read).toMatchObject({ id: created.id, email: created.email, name: 'Ada Lovelace' });
    const page = await vp.users.list({ search: created.email });
    expect(page.data.map((user) => user.id)).toEqual([created.id]);
    expect(page.pagination).toMatchObject({ page: 1, total: 1, has_more: false });
    expect(await page.nextPage()).toBeUndefined();
    const deleted = await vp.users.del(created.id);
    expect(deleted.id).toBe(created.id);
  });

  it('creates an agent with a typed configuration, sets the default voice and reads a version’s config', async () => {
    const owner = await vp.users.create({
      email: email('cfg'),
      name: 'Config Owner',
      password: 'correct horse',
    });
    await vp.agents.setDefaults({ voice: { provider: 'cartesia', voice_id: 'sonic' }, model: null });
    const defaults = await vp.agents.defaults();
    expect(defaults.effective.voice).toEqual({ provider: 'cartesia', voice_id: 'sonic' });
    expect(defaults.allowed.engine).toBe('simulated');
    const agent = await vp.agents.create({
      user_id: owner.id,
      name: 'Configured',
      phone_number: '+14155550142',
      prompt: 'Hi {name}.',
      welcome_message: 'Hello.',
      config: { language: 'de-DE', model: { temperature: 0.2 }, voicemail: { action: 'hang_up' } },
    });
    expect(agent.draft.config).toMatchObject({ language: 'de-DE', voice: { provider: 'cartesia' } });
    await vp.agents.publish(agent.id);
    const versions = await vp.agents.versions(agent.id);
    expect(versions.data[0].config.model.temperature).toBe(0.2);
    await vp.agents.setDefaults({ voice: null, model: null });
  });

  it('iterates every item of every page, and a page awaited alone is one page', async () => {
    const marker = `pager${Date.now()}`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (await vp.users.create({ email: email(marker), name: `Pager ${i}`, password: 'correct horse' })).id,
      );
    const first = await vp.users.list({ search: marker, limit: 2, sort_order: 'asc' });
    expect(first.data).toHaveLength(2);
    expect(first.pagination).toMatchObject({ page: 1, limit: 2, total: 5, pages: 3, has_more: true });
    const seen: string[] = [];
    for await (const user of vp.users.list({ search: marker, limit: 2, sort_order: 'asc' }))
      seen.push(user.id);
    expect(seen).toEqual(ids);
    // From a later page on.
    const rest: string[] = [];
    for await (const user of vp.users.list({ search: marker, limit: 2, page: 2, sort_order: 'asc' }))
      rest.push(user.id);
    expect(rest).toEqual(ids.slice(2));
  });

  it('subscribes a user to a plan and changes nothing on a refused change', async () => {
    const plan = await createPlan(t, tenant.id, { name: `Starter ${Date.now()}` });
    const user = await vp.users.create({
      email: email('sub'),
      name: 'Sub Scriber',
      password: 'correct horse',
    });
    const listed = await vp.plans.retrieve(plan.id);
    expect(listed.id).toBe(plan.id);
    const subscription = await vp.subscriptions.create({ user_id: user.id, plan_id: plan.id });
    expect(subscription).toMatchObject({ user_id: user.id, plan_id: plan.id, status: 'active' });
    const same = await vp.subscriptions
      .changePlan(subscription.id, { plan_id: plan.id })
      .catch((error) => error);
    expect(same).toBeInstanceOf(VoiceplaneError);
    expect(same).toMatchObject({ status: 422, code: 'unprocessable_entity' });
    expect((await vp.subscriptions.retrieve(subscription.id)).plan_id).toBe(plan.id);
  });

  it('tops a user up once per generated key, and lists and reads the top-up', async () => {
    const plan = await createPlan(t, tenant.id, { name: `Invoice ${Date.now()}`, provider: 'agency' });
    const user = await vp.users.create({ email: email('top'), name: 'Topped Up', password: 'correct horse' });
    await vp.subscriptions.create({ user_id: user.id, plan_id: plan.id });
    const topUp = await vp.topUps.create(user.id, { minutes: 30 });
    expect(topUp).toMatchObject({ user_id: user.id, minutes: 30, billing: 'agency', status: 'succeeded' });
    expect((await vp.topUps.retrieve(user.id, topUp.id)).id).toBe(topUp.id);
    const listed: string[] = [];
    for await (const item of vp.topUps.list(user.id)) listed.push(item.id);
    expect(listed).toEqual([topUp.id]);
  });
});

describe('errors', () => {
  it('raises the envelope as a VoiceplaneError with code, status, details and the request id', async () => {
    const missing = await vp.users.retrieve('usr_doesnotexist00000000').catch((error) => error);
    expect(missing).toBeInstanceOf(VoiceplaneError);
    expect(missing).toMatchObject({ status: 404, code: 'not_found' });
    expect(missing.requestId).toMatch(/^req_/);

    const invalid = await vp.users
      .create({ email: 'not-an-email', name: '', password: 'x' })
      .catch((error) => error);
    expect(invalid).toMatchObject({ status: 422, code: 'validation_failed' });
    expect(invalid.details).toBeDefined();
    expect(JSON.stringify(invalid.details)).toContain('email');

    const stranger = new Voiceplane({ apiKey: 'vp_test_notakey', baseUrl, maxRetries: 0 });
    await expect(stranger.plans.list()).rejects.toMatchObject({ status: 401, code: 'authentication_failed' });
  });

  it('raises a VoiceplaneConnectionError when nothing answers', async () => {
    const nowhere = new Voiceplane({ apiKey: tenant.key, baseUrl: 'http://127.0.0.1:9', maxRetries: 1 });
    await expect(nowhere.plans.list()).rejects.toBeInstanceOf(VoiceplaneConnectionError);
  });
});

describe('retries', () => {
  it('a create whose answer was lost is retried with the same generated Idempotency-Key: one user', async () => {
    const keys: (string | null)[] = [];
    let dropped = false;
    // The request reaches the server and is carried out; the answer is lost on the way back.
    const losingFetch: typeof fetch = async (input, init) => {
      keys.push(new Headers(init?.headers).get('idempotency-key'));
      const response = await fetch(input, init);
      if (!dropped) {
        dropped = true;
        await response.text();
        throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
      }
      return response;
    };
    const client = new Voiceplane({ apiKey: tenant.key, baseUrl, fetch: losingFetch });
    const address = email('lost');
    const user = await client.users.create({
      email: address,
      name: 'Lost Answer',
      password: 'correct horse',
    });
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    const listed = await vp.users.list({ search: address });
    expect(listed.data.map((u) => u.id)).toEqual([user.id]);
  });

  it('a write without an Idempotency-Key is not repeated after a lost answer', async () => {
    let calls = 0;
    const losingFetch: typeof fetch = async (input, init) => {
      calls++;
      await (await fetch(input, init)).text();
      throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
    };
    const client = new Voiceplane({ apiKey: tenant.key, baseUrl, fetch: losingFetch });
    const marker = `+1415555${String(Date.now()).slice(-4)}`;
    await expect(client.doNotCall.add({ phone_number: marker })).rejects.toBeInstanceOf(
      VoiceplaneConnectionError,
    );
    expect(calls).toBe(1);
  });

  it('waits out a 429 for the seconds Retry-After gives, then succeeds; with no retries left it raises rate_limited', async () => {
    const limited = await createTenant(t, { name: 'Limited Agency' });
    const patched = await t.admin('PATCH', `/admin/v1/tenants/${limited.id}`, {
      rate_limit: { requests_per_second: 1, burst: 1 },
    });
    expect(patched.status, patched.raw).toBe(200);
    const attempts: number[] = [];
    const counting: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      attempts.push(response.status);
      return response;
    };
    const client = new Voiceplane({ apiKey: limited.key, baseUrl, fetch: counting });
    // Three at once against a bucket of one: two are refused, wait their second and pass.
    const pages = await Promise.all([client.plans.list(), client.plans.list(), client.plans.list()]);
    expect(pages).toHaveLength(3);
    expect(attempts.filter((status) => status === 429).length).toBeGreaterThanOrEqual(2);
    expect(attempts.filter((status) => status === 200)).toHaveLength(3);

    const impatient = new Voiceplane({ apiKey: limited.key, baseUrl, maxRetries: 0 });
    const [, refused] = await Promise.all([
      impatient.plans.list().catch(() => undefined),
      impatient.plans.list().then(
        () => undefined,
        (error: VoiceplaneError) => error,
      ),
    ]);
    if (!(refused instanceof VoiceplaneError)) throw new Error('expected a VoiceplaneError');
    expect(refused).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(refused.headers.get('retry-after')).toBe('1');
  });
});

describe('user sessions', () => {
  it('signs a user in, reads the signed-in user with the session token, signs out', async () => {
    const address = email('session');
    const user = await vp.users.create({
      email: address,
      name: 'Session User',
      password: 'correct horse battery',
    });
    const session = await vp.sessions.signIn({
      tenant_id: tenant.id,
      email: address,
      password: 'correct horse battery',
    });
    expect(session.token).toMatch(/^vps_/);
    expect((await vp.sessions.me(session.token)).id).toBe(user.id);
    await vp.sessions.signOut(session.token);
    await expect(vp.sessions.me(session.token)).rejects.toMatchObject({ status: 401 });
    await expect(
      vp.sessions.signIn({ tenant_id: tenant.id, email: address, password: 'wrong password' }),
    ).rejects.toMatchObject({ status: 401, code: 'authentication_failed' });
  });
});

describe('calls and signed events', () => {
  it('triggers a call through its URL and verifies the call.queued event delivered to the endpoint', async () => {
    const fixture = await agentFixture(t, { credits: 10 });
    const client = new Voiceplane({ apiKey: fixture.tenant.key, baseUrl });
    receiver = await startReceiver();
    const endpoint = await client.webhookEndpoints.create({ url: receiver.url, events: ['call.queued'] });
    receiver.secret = endpoint.secret;

    // The trigger URL is its own credential: no API key is needed.
    const anonymous = new Voiceplane({ baseUrl });
    const queued = await anonymous.agents.trigger(fixture.agent.webhook_id, {
      phone: '+14155550177',
      name: 'Ada',
      product: 'solar panels',
    });
    expect(queued.status).toBe('queued');
    expect((await client.calls.retrieve(queued.id)).id).toBe(queued.id);

    await t.services.jobRunner.drain();
    const [delivery] = await receiver.waitFor(1);
    const event = verifyEvent({ payload: delivery.body, headers: delivery.headers, secret: endpoint.secret });
    expect(event.type).toBe('call.queued');
    expect(JSON.stringify(event)).toContain(queued.id);

    // During a rotation both secrets are tried.
    expect(
      verifyEvent({
        payload: delivery.body,
        headers: delivery.headers,
        secret: ['whsec_b3RoZXI=', endpoint.secret],
      }).id,
    ).toBe(event.id);
    const refusals = [
      {
        payload: delivery.body.replace('queued', 'started'),
        headers: delivery.headers,
        secret: endpoint.secret,
      },
      { payload: delivery.body, headers: delivery.headers, secret: 'whsec_b3RoZXI=' },
      {
        payload: delivery.body,
        headers: delivery.headers,
        secret: endpoint.secret,
        now: Math.floor(Date.now() / 1000) + 600,
      },
      {
        payload: delivery.body,
        headers: { ...delivery.headers, 'webhook-signature': undefined },
        secret: endpoint.secret,
      },
    ];
    for (const refused of refusals) expect(() => verifyEvent(refused)).toThrow(VoiceplaneSignatureError);
    // A timestamp from the past is refused too, and an empty signature never matches.
    const sentAt = Number(delivery.headers['webhook-timestamp']);
    expect(() =>
      verifyEvent({
        payload: delivery.body,
        headers: delivery.headers,
        secret: endpoint.secret,
        now: sentAt + 301,
      }),
    ).toThrow(VoiceplaneSignatureError);
    expect(() =>
      verifyEvent({
        payload: delivery.body,
        headers: { ...delivery.headers, 'webhook-signature': 'v1,' },
        secret: endpoint.secret,
      }),
    ).toThrow(VoiceplaneSignatureError);
    // After a rotation the previous secret is often unset: it is skipped, not a crash.
    expect(
      verifyEvent({ payload: delivery.body, headers: delivery.headers, secret: [endpoint.secret, undefined] })
        .id,
    ).toBe(event.id);

    const events = await client.events.list({ type: 'call.queued' });
    expect(events.data.map((e) => e.id)).toContain(event.id);
  });
});
