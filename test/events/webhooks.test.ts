/**
 * Event webhooks end to end: endpoints (CRUD, scopes, isolation, secret once), user events
 * recorded with the change and delivered to a real receiver that verifies them with
 * `standardwebhooks`, the retry schedule with the same webhook-id, a hanging endpoint beside a
 * healthy one, rotate-secret's double signature, and the events list.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createTenant, createUser, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { expectError, expectInvalidFields } from '../support/expect.js';
import { type Receiver, startReceiver } from './helpers.js';

const clock = new ManualClock(new Date());
let t: TestApp;
let a: TestTenant;
const receivers: Receiver[] = [];

beforeAll(async () => {
  t = await startTestApp({
    clock,
    env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
    // Names in these tests resolve without DNS, to a public documentation address.
    adapters: () => ({ resolveHost: async () => [{ address: '93.184.215.14', family: 4 }] }),
  });
  a = await createTenant(t, { name: 'A' });
});
afterAll(() => t.close());
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function receiverFor(tenant: TestTenant, events: string[] = ['*']) {
  const receiver = await startReceiver();
  receivers.push(receiver);
  const created = await tenant.request('POST', '/api/v1/webhook-endpoints', { url: receiver.url, events });
  expect(created.status, created.raw).toBe(201);
  receiver.secret = created.body.data.secret;
  return { receiver, endpoint: created.body.data };
}

async function removeEndpoint(tenant: TestTenant, id: string) {
  expect((await tenant.request('DELETE', `/api/v1/webhook-endpoints/${id}`)).status).toBe(200);
}

describe('webhook endpoints', () => {
  it('creates with the secret once, then reads, lists, updates and deletes it', async () => {
    const tenant = await createTenant(t, { name: 'Crud' });
    const created = await tenant.request('POST', '/api/v1/webhook-endpoints', {
      url: 'https://hooks.example.com/in',
      events: ['user.created', 'credits.low'],
      description: 'CRM',
    });
    expect(created.status, created.raw).toBe(201);
    const { secret, ...endpoint } = created.body.data;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(endpoint).toEqual({
      id: expect.stringMatching(/^we_/),
      url: 'https://hooks.example.com/in',
      events: ['user.created', 'credits.low'],
      description: 'CRM',
      enabled: true,
      failing_since: null,
      created_at: clock.now().toISOString(),
    });
    expect(created.headers.location).toBe(`http://voiceplane.test/api/v1/webhook-endpoints/${endpoint.id}`);
    const fetched = await tenant.request('GET', `/api/v1/webhook-endpoints/${endpoint.id}`);
    expect(fetched.body.data).toEqual(endpoint);
    expect(fetched.raw).not.toContain(secret);
    const list = await tenant.request('GET', '/api/v1/webhook-endpoints');
    expect(list.body.data).toEqual([endpoint]);
    expect(list.raw).not.toContain(secret);

    const patched = await tenant.request('PATCH', `/api/v1/webhook-endpoints/${endpoint.id}`, {
      events: ['*'],
      enabled: false,
      description: null,
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ events: ['*'], enabled: false, description: null });

    expect((await tenant.request('DELETE', `/api/v1/webhook-endpoints/${endpoint.id}`)).status).toBe(200);
    expectError(await tenant.request('GET', `/api/v1/webhook-endpoints/${endpoint.id}`), 404, 'not_found');
    expect((await tenant.request('GET', '/api/v1/webhook-endpoints')).body.data).toEqual([]);
  });

  it('422 on unknown event types, an empty filter or unknown fields; nothing stored', async () => {
    const tenant = await createTenant(t, { name: 'Invalid' });
    const url = 'https://hooks.example.com/in';
    expectInvalidFields(
      await tenant.request('POST', '/api/v1/webhook-endpoints', { url, events: ['user.exploded'] }),
      ['events.0'],
    );
    expectInvalidFields(await tenant.request('POST', '/api/v1/webhook-endpoints', { url, events: [] }), [
      'events',
    ]);
    expectInvalidFields(
      await tenant.request('POST', '/api/v1/webhook-endpoints', { url, events: ['*'], x: 1 }),
      ['x'],
    );
    expectInvalidFields(
      await tenant.request('POST', '/api/v1/webhook-endpoints', { url: 'ftp://x.example', events: ['*'] }),
      ['url'],
    );
    expect((await tenant.request('GET', '/api/v1/webhook-endpoints')).body.pagination.total).toBe(0);
  });

  it('needs webhooks:read / webhooks:write and keeps tenants apart', async () => {
    const tenant = await createTenant(t, { name: 'Scopes' });
    const other = await createTenant(t, { name: 'Other' });
    const { endpoint } = await receiverFor(tenant);
    const reader = await createTenant(t, { name: 'Reader', scopes: ['webhooks:read'] });
    const none = await createTenant(t, { name: 'None', scopes: ['users:read'] });
    expectError(
      await reader.request('POST', '/api/v1/webhook-endpoints', { url: 'https://x.example', events: ['*'] }),
      403,
      'permission_denied',
    );
    expect((await reader.request('GET', '/api/v1/webhook-endpoints')).status).toBe(200);
    expectError(await none.request('GET', '/api/v1/webhook-endpoints'), 403, 'permission_denied');
    expectError(await none.request('GET', '/api/v1/events'), 403, 'permission_denied');
    for (const [method, path] of [
      ['GET', ''],
      ['PATCH', ''],
      ['DELETE', ''],
      ['POST', '/rotate-secret'],
      ['GET', '/deliveries'],
    ] as const) {
      const response = await other.request(
        method,
        `/api/v1/webhook-endpoints/${endpoint.id}${path}`,
        method === 'PATCH' ? { enabled: false } : undefined,
      );
      expectError(response, 404, 'not_found');
    }
    expect((await tenant.request('GET', `/api/v1/webhook-endpoints/${endpoint.id}`)).body.data.enabled).toBe(
      true,
    );
    await removeEndpoint(tenant, endpoint.id);
  });
});

describe('delivery', () => {
  it('user.created and user.deleted reach the receiver, signed, verified by standardwebhooks', async () => {
    const { receiver, endpoint } = await receiverFor(a, ['user.created', 'user.deleted']);
    const user = await createUser(a, { phone: '+14155550123' });
    expect(await t.services.jobRunner.drain()).toBe(1);
    const [created] = await receiver.waitFor(1);
    expect(created.error).toBeUndefined();
    expect(created.headers['content-type']).toBe('application/json');
    const event = JSON.parse(created.body);
    expect(created.verified).toEqual(event);
    expect(event).toEqual({
      id: created.headers['webhook-id'],
      type: 'user.created',
      created_at: user.created_at,
      data: {
        object: {
          id: user.id,
          name: user.name,
          email: user.email,
          phone: '+14155550123',
          status: 'active',
          created_at: user.created_at,
          plan_id: null,
          plan_name: null,
        },
      },
    });
    expect(event.id).toMatch(/^evt_/);

    // What a partner's verification refuses: a tampered body, a 5-minute-old timestamp.
    const wh = new Webhook(receiver.secret);
    const headers = created.headers as Record<string, string>;
    expect(() => wh.verify(created.body.replace(user.id, 'usr_forged'), headers)).toThrow();
    const old = new Date(Date.now() - 5 * 60_000 - 1000);
    expect(() =>
      wh.verify(created.body, {
        'webhook-id': event.id,
        'webhook-timestamp': String(Math.floor(old.getTime() / 1000)),
        'webhook-signature': wh.sign(event.id, old, created.body),
      }),
    ).toThrow(/too old/);

    clock.advance(1000);
    expect((await a.request('DELETE', `/api/v1/users/${user.id}`)).status).toBe(200);
    await t.services.jobRunner.drain();
    const [, deleted] = await receiver.waitFor(2);
    expect(deleted.error).toBeUndefined();
    expect(JSON.parse(deleted.body)).toMatchObject({
      type: 'user.deleted',
      data: { object: { id: user.id, deleted_at: expect.any(String) } },
    });

    const log = await a.request('GET', `/api/v1/webhook-endpoints/${endpoint.id}/deliveries`);
    expect(log.body.data.map((d: any) => [d.event_type, d.status, d.attempts, d.last_response_code])).toEqual(
      [
        ['user.deleted', 'succeeded', 1, 200],
        ['user.created', 'succeeded', 1, 200],
      ],
    );
    await removeEndpoint(a, endpoint.id);
  });

  it('500 three times, then 200: delivered on the 4th attempt with the same webhook-id', async () => {
    const { receiver, endpoint } = await receiverFor(a, ['user.created']);
    receiver.answer = () => (receiver.received.length <= 3 ? 500 : 200);
    await createUser(a);
    await t.services.jobRunner.drain();
    const delays = [5_000, 5 * 60_000, 30 * 60_000];
    for (const [i, delay] of delays.entries()) {
      expect(receiver.received).toHaveLength(i + 1);
      const log = await a.request('GET', `/api/v1/webhook-endpoints/${endpoint.id}/deliveries`);
      expect(log.body.data[0]).toMatchObject({
        status: 'pending',
        attempts: i + 1,
        last_response_code: 500,
        next_attempt_at: new Date(clock.now().getTime() + delay).toISOString(),
      });
      // Not before its time.
      clock.advance(delay - 1000);
      await t.services.jobRunner.drain();
      expect(receiver.received).toHaveLength(i + 1);
      clock.advance(1000);
      await t.services.jobRunner.drain();
    }
    const all = await receiver.waitFor(4);
    expect(all.every((r) => r.error === undefined)).toBe(true);
    expect(new Set(all.map((r) => r.headers['webhook-id'])).size).toBe(1);
    const log = await a.request('GET', `/api/v1/webhook-endpoints/${endpoint.id}/deliveries`);
    expect(log.body.data[0]).toMatchObject({ status: 'succeeded', attempts: 4, last_response_code: 200 });
    expect(
      (await a.request('GET', `/api/v1/webhook-endpoints/${endpoint.id}`)).body.data.failing_since,
    ).toBeNull();

    // A manual retry sends it again now, same id.
    const retried = await a.request(
      'POST',
      `/api/v1/webhook-endpoints/${endpoint.id}/deliveries/${log.body.data[0].id}/retry`,
    );
    expect(retried.status, retried.raw).toBe(200);
    expect(retried.body.data.status).toBe('pending');
    await t.services.jobRunner.drain();
    const again = await receiver.waitFor(5);
    expect(again[4].headers['webhook-id']).toBe(all[0].headers['webhook-id']);
    await removeEndpoint(a, endpoint.id);
  });

  it('a hanging endpoint does not delay another endpoint’s delivery', async () => {
    const slow = await receiverFor(a, ['user.created']);
    const fast = await receiverFor(a, ['user.created']);
    let release: (status: number) => void = () => {};
    slow.receiver.answer = () => new Promise<number>((resolve) => (release = resolve));
    await createUser(a);
    const drained = t.services.jobRunner.drain();
    const [delivered] = await fast.receiver.waitFor(1);
    expect(delivered.error).toBeUndefined();
    await slow.receiver.waitFor(1);
    // The slow one still has no answer while the fast one is delivered.
    release(200);
    await drained;
    const log = await a.request('GET', `/api/v1/webhook-endpoints/${slow.endpoint.id}/deliveries`);
    expect(log.body.data[0].status).toBe('succeeded');
    await removeEndpoint(a, slow.endpoint.id);
    await removeEndpoint(a, fast.endpoint.id);
  });

  it('rotate-secret: the old and the new secret both sign for 24 h', async () => {
    const { receiver, endpoint } = await receiverFor(a, ['user.created']);
    const oldSecret = receiver.secret;
    const rotated = await a.request('POST', `/api/v1/webhook-endpoints/${endpoint.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.secret).not.toBe(oldSecret);
    receiver.secret = rotated.body.data.secret;
    await createUser(a);
    await t.services.jobRunner.drain();
    const [received] = await receiver.waitFor(1);
    expect(received.error).toBeUndefined();
    expect(String(received.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(() =>
      new Webhook(oldSecret).verify(received.body, received.headers as Record<string, string>),
    ).not.toThrow();

    clock.advance(24 * 3_600_000 + 1000);
    await createUser(a);
    await t.services.jobRunner.drain();
    const [, later] = await receiver.waitFor(2);
    expect(later.error).toBeUndefined();
    expect(String(later.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(() =>
      new Webhook(oldSecret).verify(later.body, later.headers as Record<string, string>),
    ).toThrow();
    await removeEndpoint(a, endpoint.id);
  });
});

describe('GET /api/v1/events', () => {
  it('lists the last 30 days newest first, filtered by type, one tenant only', async () => {
    const tenant = await createTenant(t, { name: 'Events' });
    const other = await createTenant(t, { name: 'Others' });
    const first = await createUser(tenant);
    clock.advance(31 * 24 * 3_600_000);
    const second = await createUser(tenant);
    clock.advance(1000);
    await tenant.request('DELETE', `/api/v1/users/${second.id}`);
    await createUser(other);
    const all = await tenant.request('GET', '/api/v1/events');
    expect(all.status).toBe(200);
    expect(all.body.data.map((e: any) => [e.type, e.data.object.id])).toEqual([
      ['user.deleted', second.id],
      ['user.created', second.id],
    ]);
    expect(all.body.pagination.total).toBe(2);
    expect(JSON.stringify(all.body)).not.toContain(first.id);
    const created = await tenant.request('GET', '/api/v1/events?type=user.created');
    expect(created.body.data.map((e: any) => e.type)).toEqual(['user.created']);
    expectInvalidFields(await tenant.request('GET', '/api/v1/events?type=nope'), ['type']);
  });

  it('pages through them and the delivery log with the same total on a full page, the last one and past the end', async () => {
    const tenant = await createTenant(t, { name: 'Paged events' });
    const endpoint = await tenant.request('POST', '/api/v1/webhook-endpoints', {
      url: 'https://hooks.example.com/paged',
      events: ['user.created'],
    });
    expect(endpoint.status).toBe(201);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await createUser(tenant)).id);
      clock.advance(1000);
    }
    const pages = await Promise.all(
      [1, 2, 3, 4].map((page) => tenant.request('GET', `/api/v1/events?limit=2&page=${page}`)),
    );
    expect(pages.map((page) => page.body.data.map((e: any) => e.data.object.id))).toEqual([
      [ids[4], ids[3]],
      [ids[2], ids[1]],
      [ids[0]],
      [],
    ]);
    for (const page of pages) expect(page.body.pagination).toMatchObject({ total: 5, pages: 3, limit: 2 });
    expect(pages.map((page) => page.body.pagination.has_more)).toEqual([true, true, false, false]);

    const log = await Promise.all(
      [1, 2, 3, 4].map((page) =>
        tenant.request(
          'GET',
          `/api/v1/webhook-endpoints/${endpoint.body.data.id}/deliveries?limit=2&page=${page}`,
        ),
      ),
    );
    expect(log.map((page) => page.body.data.length)).toEqual([2, 2, 1, 0]);
    expect(log.flatMap((page) => page.body.data.map((d: any) => d.event_type))).toEqual(
      Array(5).fill('user.created'),
    );
    for (const page of log) expect(page.body.pagination).toMatchObject({ total: 5, pages: 3, limit: 2 });
  });
});
