/**
 * Webhook deliveries by hand, in the console and the partner API alike: a delivery's request and
 * response (headers, the first 4 KiB of each body, or why no answer came), "send a test event"
 * (a signed `webhook.test` delivered through the queue) and "resend" (a new delivery of the same
 * event). Each console action is its API call: the same service, the same refusal (a disabled
 * endpoint is 409, another tenant's ids 404), once per form key as once per Idempotency-Key.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../events/helpers.js';
import { createTenant, type TestTenant } from '../support/app.js';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { type ConsoleClient, consoleClient } from './http.js';

let f: ConsoleFixture;
let owner: ConsoleClient;
let other: TestTenant;
const receivers: Receiver[] = [];

beforeAll(async () => {
  f = await startConsole({
    env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
    adapters: () => ({ resolveHost: async () => [{ address: '93.184.215.14', family: 4 }] }),
  });
  owner = consoleClient(f.t);
  await owner.signIn(f.owner.email, f.owner.password);
  other = await createTenant(f.t, { name: 'Other agency' });
});
afterAll(() => f?.close());
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function endpointFor(tenant: TestTenant) {
  const receiver = await startReceiver();
  receivers.push(receiver);
  const created = await tenant.request('POST', '/api/v1/webhook-endpoints', {
    url: receiver.url,
    events: ['user.created'],
    description: 'CRM sync',
  });
  expect(created.status, created.raw).toBe(201);
  receiver.secret = created.body.data.secret;
  return { receiver, endpoint: created.body.data as { id: string; url: string } };
}

const formKeyIn = (page: string, action: string) =>
  new RegExp(
    `action="${action}"[^>]*>\\s*<input type="hidden" name="_csrf" value="[^"]+"><input type="hidden" name="form_key" value="([^"]+)">`,
  ).exec(page)?.[1];
const deliveryIdOf = (location: unknown) => /deliveries\/(del_\w+)$/.exec(String(location))?.[1] ?? '';

describe('send a test event', () => {
  it('delivers a signed webhook.test to the endpoint alone, once per form, and shows its exchange', async () => {
    const { receiver, endpoint } = await endpointFor(f.tenant);
    const page = (await owner.get(`/console/webhooks/${endpoint.id}`)).body;
    const formKey = formKeyIn(page, `/console/webhooks/${endpoint.id}/test`);
    expect(formKey).toBeDefined();
    const sent = await owner.post(`/console/webhooks/${endpoint.id}/test`, { form_key: formKey ?? '' });
    expect(sent.status).toBe(303);
    const deliveryId = deliveryIdOf(sent.headers.location);
    expect(deliveryId).toMatch(/^del_/);
    // The same form again (a double click, a refresh) sends nothing more and opens the same delivery.
    const again = await owner.post(`/console/webhooks/${endpoint.id}/test`, { form_key: formKey ?? '' });
    expect(deliveryIdOf(again.headers.location)).toBe(deliveryId);

    await f.t.services.jobRunner.drain();
    expect(receiver.received).toHaveLength(1);
    const [delivered] = receiver.received;
    expect(delivered.error).toBeUndefined(); // verified with the endpoint's secret
    const body = JSON.parse(delivered.body);
    expect(body.type).toBe('webhook.test');
    expect(body.data.object).toMatchObject({ id: endpoint.id, url: endpoint.url, events: ['user.created'] });

    const detail = await owner.get(`/console/webhooks/${endpoint.id}/deliveries/${deliveryId}`);
    expect(detail.status).toBe(200);
    expect(detail.body).toContain('Delivery of webhook.test');
    expect(detail.body).toContain(`<code>${delivered.headers['webhook-id']}</code>`);
    expect(detail.body).toContain('<code>webhook-signature</code>');
    expect(detail.body).toContain('<strong>HTTP 200</strong>');
    expect(detail.body).toContain('<code>text/plain</code>');
    // The receiver answered 10,000 characters: the first 4 KiB are kept, no more.
    expect(detail.body).toContain(`>${'x'.repeat(4096)}</pre>`);
    expect(detail.body).not.toContain('x'.repeat(4097));

    const api = await f.tenant.request(
      'GET',
      `/api/v1/webhook-endpoints/${endpoint.id}/deliveries/${deliveryId}`,
    );
    expect(api.status).toBe(200);
    expect(api.body.data).toMatchObject({
      id: deliveryId,
      event_type: 'webhook.test',
      status: 'succeeded',
      attempts: 1,
      resent_from: null,
      error: null,
    });
    expect(api.body.data.request.headers['webhook-id']).toBe(delivered.headers['webhook-id']);
    expect(JSON.parse(api.body.data.request.body)).toEqual(body);
    expect(api.body.data.response).toMatchObject({ status: 200, body: 'x'.repeat(4096) });
    expect(api.body.data.response.headers['content-type']).toBe('text/plain');
  });

  it('is the API call POST /webhook-endpoints/{id}/test, once per Idempotency-Key', async () => {
    const { receiver, endpoint } = await endpointFor(f.tenant);
    const headers = { 'idempotency-key': `test-${endpoint.id}` };
    const first = await f.tenant.request(
      'POST',
      `/api/v1/webhook-endpoints/${endpoint.id}/test`,
      undefined,
      headers,
    );
    expect(first.status, first.raw).toBe(201);
    expect(first.body.data).toMatchObject({ event_type: 'webhook.test', status: 'pending', attempts: 0 });
    expect(first.headers.location).toBe(
      `http://voiceplane.test/api/v1/webhook-endpoints/${endpoint.id}/deliveries/${first.body.data.id}`,
    );
    const replay = await f.tenant.request(
      'POST',
      `/api/v1/webhook-endpoints/${endpoint.id}/test`,
      undefined,
      headers,
    );
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.data.id).toBe(first.body.data.id);
    await f.t.services.jobRunner.drain();
    expect(receiver.received).toHaveLength(1);
    // The events list shows it, as any event of the tenant.
    const listed = await f.tenant.request('GET', '/api/v1/events?type=webhook.test');
    expect(listed.body.data.map((e: { id: string }) => e.id)).toContain(first.body.data.event_id);
  });

  it('records why no answer came, and an error answer with its body', async () => {
    const { receiver, endpoint } = await endpointFor(f.tenant);
    receiver.answer = () => 500;
    receiver.answerBody = 'database down';
    const sent = await f.tenant.request('POST', `/api/v1/webhook-endpoints/${endpoint.id}/test`);
    await f.t.services.jobRunner.drain();
    const failed = await owner.get(`/console/webhooks/${endpoint.id}/deliveries/${sent.body.data.id}`);
    expect(failed.body).toContain('<strong>HTTP 500</strong>');
    expect(failed.body).toContain('database down');

    const gone = await f.tenant.request('POST', '/api/v1/webhook-endpoints', {
      url: 'http://127.0.0.1:1/hook',
      events: ['user.created'],
    });
    const unanswered = await f.tenant.request('POST', `/api/v1/webhook-endpoints/${gone.body.data.id}/test`);
    await f.t.services.jobRunner.drain();
    const detail = await f.tenant.request(
      'GET',
      `/api/v1/webhook-endpoints/${gone.body.data.id}/deliveries/${unanswered.body.data.id}`,
    );
    expect(detail.body.data.response).toBeNull();
    expect(detail.body.data.error).toMatch(/ECONNREFUSED|connect/);
    const page = await owner.get(
      `/console/webhooks/${gone.body.data.id}/deliveries/${unanswered.body.data.id}`,
    );
    expect(page.body).toContain('No answer: ');
    // The endpoint list says it is failing, since when.
    const list = (await owner.get('/console/webhooks')).body;
    expect(list).toContain('Failing since');
  });
});

describe('resend', () => {
  it('sends the same event again as a new delivery, in the console and the API alike', async () => {
    const { receiver, endpoint } = await endpointFor(f.tenant);
    const user = await f.tenant.request('POST', '/api/v1/users', {
      email: `resend-${Date.now()}@example.com`,
      name: 'Ada',
      password: 'correct horse',
    });
    expect(user.status).toBe(201);
    await f.t.services.jobRunner.drain();
    const log = await f.tenant.request('GET', `/api/v1/webhook-endpoints/${endpoint.id}/deliveries`);
    const original = log.body.data[0];
    expect(original).toMatchObject({ event_type: 'user.created', status: 'succeeded' });

    const detail = (await owner.get(`/console/webhooks/${endpoint.id}/deliveries/${original.id}`)).body;
    const action = `/console/webhooks/${endpoint.id}/deliveries/${original.id}/resend`;
    const formKey = formKeyIn(detail, action) ?? '';
    const resent = await owner.post(action, { form_key: formKey });
    expect(resent.status).toBe(303);
    const fromConsole = deliveryIdOf(resent.headers.location);
    expect((await owner.post(action, { form_key: formKey })).headers.location).toBe(resent.headers.location);

    const fromApi = await f.tenant.request(
      'POST',
      `/api/v1/webhook-endpoints/${endpoint.id}/deliveries/${original.id}/resend`,
    );
    expect(fromApi.status, fromApi.raw).toBe(201);
    expect(fromApi.body.data).toMatchObject({
      event_id: original.event_id,
      event_type: 'user.created',
      status: 'pending',
      resent_from: original.id,
    });
    await f.t.services.jobRunner.drain();
    // Three deliveries of one event: the same webhook-id each time.
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([
      original.event_id,
      original.event_id,
      original.event_id,
    ]);
    const page = (await owner.get(`/console/webhooks/${endpoint.id}/deliveries/${fromConsole}`)).body;
    expect(page).toContain(
      `<a href="/console/webhooks/${endpoint.id}/deliveries/${original.id}">${original.id}</a>`,
    );
    const after = await f.tenant.request('GET', `/api/v1/webhook-endpoints/${endpoint.id}/deliveries`);
    expect(after.body.data).toHaveLength(3);
    expect(after.body.data.find((d: { id: string }) => d.id === original.id)).toMatchObject({ attempts: 1 });
  });
});

describe('the same refusals as the API', () => {
  it('a disabled endpoint sends nothing by hand: 409 in both, and no button', async () => {
    const { receiver, endpoint } = await endpointFor(f.tenant);
    const sent = await f.tenant.request('POST', `/api/v1/webhook-endpoints/${endpoint.id}/test`);
    await f.t.services.jobRunner.drain();
    await f.tenant.request('PATCH', `/api/v1/webhook-endpoints/${endpoint.id}`, { enabled: false });
    const api = await f.tenant.request('POST', `/api/v1/webhook-endpoints/${endpoint.id}/test`);
    expect(api.status).toBe(409);
    expect(api.body.error.message).toBe('This endpoint is disabled: enable it first, then send to it.');
    const page = await owner.get(`/console/webhooks/${endpoint.id}`);
    expect(page.body).not.toContain('Send test event');
    expect(page.body).not.toContain('>Resend<');
    const console = await owner.post(`/console/webhooks/${endpoint.id}/test`, {});
    expect(console.status).toBe(409);
    expect(console.body).toContain('This endpoint is disabled: enable it first, then send to it.');
    const resend = await owner.post(
      `/console/webhooks/${endpoint.id}/deliveries/${sent.body.data.id}/resend`,
      {},
    );
    expect(resend.status).toBe(409);
    await f.t.services.jobRunner.drain();
    expect(receiver.received).toHaveLength(1);
  });

  it("another tenant's endpoint or delivery is not found, on every page and action", async () => {
    const { endpoint } = await endpointFor(other);
    const sent = await other.request('POST', `/api/v1/webhook-endpoints/${endpoint.id}/test`);
    expect(sent.status).toBe(201);
    const deliveryId = sent.body.data.id;
    const { endpoint: mine } = await endpointFor(f.tenant);
    const pages = [
      `/console/webhooks/${endpoint.id}/deliveries/${deliveryId}`,
      `/console/webhooks/${mine.id}/deliveries/${deliveryId}`,
    ];
    for (const url of pages) expect((await owner.get(url)).status, url).toBe(404);
    const actions = [
      `/console/webhooks/${endpoint.id}/test`,
      `/console/webhooks/${endpoint.id}/deliveries/${deliveryId}/resend`,
      `/console/webhooks/${mine.id}/deliveries/${deliveryId}/resend`,
    ];
    for (const url of actions) expect((await owner.post(url, {})).status, url).toBe(404);
    const api: [string, string][] = [
      ['GET', `/api/v1/webhook-endpoints/${endpoint.id}/deliveries/${deliveryId}`],
      ['GET', `/api/v1/webhook-endpoints/${mine.id}/deliveries/${deliveryId}`],
      ['POST', `/api/v1/webhook-endpoints/${endpoint.id}/test`],
      ['POST', `/api/v1/webhook-endpoints/${endpoint.id}/deliveries/${deliveryId}/resend`],
      ['POST', `/api/v1/webhook-endpoints/${mine.id}/deliveries/${deliveryId}/resend`],
    ];
    for (const [method, url] of api) {
      const answer = await f.tenant.request(method as 'GET' | 'POST', url);
      expect(answer.status, url).toBe(404);
    }
    // Nothing was sent on the other tenant's behalf.
    const theirs = await other.request('GET', `/api/v1/webhook-endpoints/${endpoint.id}/deliveries`);
    expect(theirs.body.data).toHaveLength(1);
  });

  it('a viewer reads a delivery but sends nothing (403)', async () => {
    const { endpoint } = await endpointFor(f.tenant);
    const sent = await f.tenant.request('POST', `/api/v1/webhook-endpoints/${endpoint.id}/test`);
    const viewer = await f.addMember('viewer');
    const client = consoleClient(f.t);
    await client.signIn(viewer.email, viewer.password);
    const page = await client.get(`/console/webhooks/${endpoint.id}/deliveries/${sent.body.data.id}`);
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('>Resend<');
    expect((await client.get(`/console/webhooks/${endpoint.id}`)).body).not.toContain('Send test event');
    expect((await client.post(`/console/webhooks/${endpoint.id}/test`, {})).status).toBe(403);
    expect(
      (await client.post(`/console/webhooks/${endpoint.id}/deliveries/${sent.body.data.id}/resend`, {}))
        .status,
    ).toBe(403);
  });
});
