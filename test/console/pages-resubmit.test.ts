/**
 * Refreshing after a create form never creates twice: an API key and a webhook endpoint (and a
 * rotated secret) are answered POST → 303 → GET, the secret shown once on the page the redirect
 * leads to and gone on a second visit; the test-call form carries a key used as the API's
 * Idempotency-Key, so the same form posted again answers the call it placed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../support/app.js';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { type ConsoleClient, consoleClient } from './http.js';

let f: ConsoleFixture;
let owner: ConsoleClient;

beforeAll(async () => {
  f = await startConsole({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', SIMULATED_CALL_SECONDS: '61' } });
  owner = consoleClient(f.t);
  expect((await owner.signIn(f.owner.email, f.owner.password)).status).toBe(303);
});
afterAll(async () => {
  await f?.close();
});

async function keyCount(): Promise<number> {
  const rows = await f.t.services.database.db
    .selectFrom('api_keys')
    .select('id')
    .where('tenant_id', '=', f.tenant.id)
    .execute();
  return rows.length;
}

describe('a new API key', () => {
  it('is created once however often the form is resubmitted, and its secret is shown once', async () => {
    await owner.get('/console/api-keys/new');
    const before = await keyCount();
    const fields = { name: 'Refresh me', env: 'test', scopes: ['users:read'] };
    const posted = await owner.post('/console/api-keys', fields);
    expect(posted.status).toBe(303);
    const location = String(posted.headers.location);
    expect(await keyCount()).toBe(before + 1);

    const shown = await owner.get(location);
    expect(shown.status).toBe(200);
    const key = /<code id="new-api-key">([^<]+)<\/code>/.exec(shown.body)?.[1];
    expect(key).toMatch(/_test_/);
    // A refresh of the result page: no new key, and the secret is not shown again.
    const again = await owner.get(location);
    expect(again.body).not.toContain(key!);
    expect(await keyCount()).toBe(before + 1);
    // The secret never travelled in clear in a cookie.
    expect([...owner.cookies.values()].join(' ')).not.toContain(key!);
  });

  it('shows the secret only to the session that created it', async () => {
    await owner.get('/console/api-keys/new');
    const posted = await owner.post('/console/api-keys', {
      name: 'Mine',
      env: 'test',
      scopes: ['users:read'],
    });
    const sealed = owner.cookies.get('vp_once');
    expect(sealed).toBeDefined();
    const admin = await f.addMember('owner');
    const other = consoleClient(f.t);
    await other.signIn(admin.email, admin.password);
    other.cookies.set('vp_once', sealed!);
    const stolen = await other.get(String(posted.headers.location));
    expect(stolen.body).not.toContain('id="new-api-key"');
  });
});

describe('a new webhook endpoint', () => {
  it('redirects to its page, which shows the signing secret once; rotation likewise', async () => {
    await owner.get('/console/webhooks/new');
    const before = (await f.t.services.events.list(f.tenant.id, { page: 1, limit: 100 })).pagination.total;
    const posted = await owner.post('/console/webhooks', {
      url: 'http://127.0.0.1:9/refresh',
      events: '*',
    });
    expect(posted.status).toBe(303);
    const location = String(posted.headers.location);
    expect(location).toMatch(/^\/console\/webhooks\/[A-Za-z0-9_]+$/);
    const shown = await owner.get(location);
    const secret = /<code id="signing-secret">([^<]+)<\/code>/.exec(shown.body)?.[1];
    expect(secret).toMatch(/^whsec_/);
    const again = await owner.get(location);
    expect(again.status).toBe(200);
    expect(again.body).not.toContain(secret!);
    expect((await f.t.services.events.list(f.tenant.id, { page: 1, limit: 100 })).pagination.total).toBe(
      before + 1,
    );

    const rotated = await owner.post(`${location}/rotate`, {});
    expect(rotated.status).toBe(303);
    const rotatedPage = await owner.get(location);
    const newSecret = /<code id="signing-secret">([^<]+)<\/code>/.exec(rotatedPage.body)?.[1];
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(secret);
    expect((await owner.get(location)).body).not.toContain(newSecret!);
  });
});

describe('a test call', () => {
  it('is placed once when the same form is posted twice', async () => {
    const user = await createUser(f.tenant);
    expect((await f.t.admin('POST', `/admin/v1/users/${user.id}/credits`, { minutes: 50 })).status).toBe(201);
    const created = await f.tenant.request('POST', '/api/v1/agents', {
      user_id: user.id,
      name: 'Resubmit agent',
      phone_number: '+14155550100',
      prompt: 'Call {name}.',
      welcome_message: 'Hello {name}.',
    });
    const agentId = created.body.data.id;
    expect((await f.tenant.request('POST', `/api/v1/agents/${agentId}/publish`)).status).toBe(200);
    const page = await owner.get(`/console/agents/${agentId}`);
    const formKey = /name="form_key" value="([^"]+)"/.exec(page.body)?.[1];
    expect(formKey).toBeDefined();
    const calls = async () =>
      (await f.tenant.request('GET', `/api/v1/calls?limit=100&agent_id=${agentId}`)).body.pagination.total;

    const fields = { form_key: formKey!, phone: '+14155550123', name: 'Ada' };
    const first = await owner.post(`/console/agents/${agentId}/calls`, fields);
    expect(first.status).toBe(303);
    const second = await owner.post(`/console/agents/${agentId}/calls`, fields);
    expect(second.status).toBe(303);
    expect(second.headers.location).toBe(first.headers.location);
    expect(await calls()).toBe(1);

    // A newly rendered form has a new key: that is a second call.
    const fresh = /name="form_key" value="([^"]+)"/.exec(
      (await owner.get(`/console/agents/${agentId}`)).body,
    )?.[1];
    expect(fresh).not.toBe(formKey);
    const third = await owner.post(`/console/agents/${agentId}/calls`, { ...fields, form_key: fresh! });
    expect(third.status).toBe(303);
    expect(third.headers.location).not.toBe(first.headers.location);
    expect(await calls()).toBe(2);
  });
});
