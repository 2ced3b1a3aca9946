/**
 * The business pages (API keys, plans, users, subscriptions) over plain HTTP, for what a browser
 * hides: another tenant's users, plans, subscriptions and keys answer the 404 page and cannot be
 * acted on; a viewer sees no write control and a forged POST from a viewer (with a valid CSRF
 * token from the viewer's own page) is refused with 403, changing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlan, createTenant, createUser, type TestTenant } from '../support/app.js';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { type ConsoleClient, consoleClient } from './http.js';

let f: ConsoleFixture;
let other: TestTenant;
let theirs: { user: string; plan: string; subscription: string };
let mine: { user: string; plan: string; subscription: string };

async function business(tenant: TestTenant) {
  const user = await createUser(tenant, { name: 'Grace Hopper' });
  const plan = await createPlan(f.t, tenant.id, { name: 'Starter', provider: 'agency' });
  const subscribed = await tenant.request('POST', '/api/v1/subscriptions', {
    user_id: user.id,
    plan_id: plan.id,
  });
  expect(subscribed.status).toBe(201);
  return { user: user.id, plan: plan.id as string, subscription: subscribed.body.data.id as string };
}

beforeAll(async () => {
  f = await startConsole();
  other = await createTenant(f.t, { name: 'Other Agency' });
  mine = await business(f.tenant);
  theirs = await business(other);
});
afterAll(() => f?.close());

async function ownerClient(): Promise<ConsoleClient> {
  const client = consoleClient(f.t);
  expect((await client.signIn(f.owner.email, f.owner.password)).status).toBe(303);
  return client;
}

describe("another tenant's business", () => {
  it('answers the 404 page for their user, plan and subscription', async () => {
    const client = await ownerClient();
    for (const url of [
      `/console/users/${theirs.user}`,
      `/console/plans/${theirs.plan}`,
      `/console/subscriptions/${theirs.subscription}`,
    ]) {
      const page = await client.get(url);
      expect(page.status, url).toBe(404);
      expect(page.body).not.toContain('Grace Hopper');
    }
    // The same pages of the member's own tenant open.
    for (const url of [
      `/console/users/${mine.user}`,
      `/console/plans/${mine.plan}`,
      `/console/subscriptions/${mine.subscription}`,
    ]) {
      expect((await client.get(url)).status, url).toBe(200);
    }
    // Lists never show them either.
    const subscriptions = await client.get('/console/subscriptions');
    expect(subscriptions.body).toContain(mine.subscription);
    expect(subscriptions.body).not.toContain(theirs.subscription);
    const filtered = await client.get(`/console/subscriptions?user_id=${theirs.user}`);
    expect(filtered.status).toBe(200);
    expect(filtered.body).not.toContain(theirs.subscription);
  });

  it('cannot block, credit, delete, archive or revoke them (404), and nothing changes', async () => {
    const client = await ownerClient();
    await client.get('/console/users');
    const balanceBefore = (await f.t.admin('GET', `/admin/v1/users/${theirs.user}/credits`)).body.data
      .balance_minutes;
    const attempts: [string, Record<string, string>][] = [
      [`/console/users/${theirs.user}/block`, {}],
      [`/console/users/${theirs.user}/credits`, { minutes: '500', reason: 'sneaky' }],
      [`/console/users/${theirs.user}/delete`, {}],
      [`/console/plans/${theirs.plan}/archive`, {}],
      [`/console/api-keys/${other.keyId}/revoke`, {}],
    ];
    for (const [url, fields] of attempts) {
      const answer = await client.post(url, fields);
      expect(answer.status, url).toBe(404);
    }
    const user = await other.request('GET', `/api/v1/users/${theirs.user}`);
    expect(user.body.data.status).toBe('active');
    const credits = await f.t.admin('GET', `/admin/v1/users/${theirs.user}/credits`);
    expect(credits.body.data.balance_minutes).toBe(balanceBefore);
    expect((await other.request('GET', `/api/v1/plans/${theirs.plan}`)).status).toBe(200);
  });
});

describe('a viewer', () => {
  it('sees every page without a single write control', async () => {
    const viewer = await f.addMember('viewer');
    const client = consoleClient(f.t);
    await client.signIn(viewer.email, viewer.password);
    const pages = {
      '/console/api-keys': ['Create API key', 'Revoke'],
      '/console/plans': ['Create plan'],
      [`/console/plans/${mine.plan}`]: ['Archive plan'],
      '/console/users': [],
      [`/console/users/${mine.user}`]: ['Block', 'Delete user', 'Grant credits'],
      '/console/subscriptions': [],
      [`/console/subscriptions/${mine.subscription}`]: [],
    };
    for (const [url, hidden] of Object.entries(pages)) {
      const page = await client.get(url);
      expect(page.status, url).toBe(200);
      for (const control of hidden) expect(page.body, `${url} shows ${control}`).not.toContain(control);
      // No form but the sign-out button.
      expect(page.body.match(/<form method="post"/g) ?? [], url).toHaveLength(1);
    }
    expect((await client.get('/console/api-keys/new')).status).toBe(403);
    expect((await client.get('/console/plans/new')).status).toBe(403);
  });

  it("is refused a forged POST carrying the viewer's own valid CSRF token (403), and nothing changes", async () => {
    const viewer = await f.addMember('viewer');
    const client = consoleClient(f.t);
    await client.signIn(viewer.email, viewer.password);
    // The token comes from a page of the viewer's own session: only the role refuses these.
    await client.get(`/console/users/${mine.user}`);
    for (const [url, fields] of [
      [`/console/users/${mine.user}/block`, {}],
      [`/console/users/${mine.user}/credits`, { minutes: '60' }],
      [`/console/users/${mine.user}/delete`, {}],
      [`/console/plans/${mine.plan}/archive`, {}],
      [`/console/api-keys/${f.tenant.keyId}/revoke`, {}],
      ['/console/api-keys', { name: 'Sneaky', env: 'live', scopes: ['users:read'] }],
      ['/console/plans', { name: 'Sneaky' }],
    ] as [string, Record<string, string | string[]>][]) {
      const answer = await client.post(url, fields);
      expect(answer.status, url).toBe(403);
      expect(answer.body).toContain('Your role (viewer) cannot do this');
    }
    const user = await f.tenant.request('GET', `/api/v1/users/${mine.user}`);
    expect(user.body.data.status).toBe('active');
    expect((await f.tenant.request('GET', `/api/v1/plans/${mine.plan}`)).status).toBe(200);
    expect((await f.tenant.request('GET', '/api/v1/users')).status).toBe(200);
    const keys = await f.t.admin('GET', `/admin/v1/tenants/${f.tenant.id}/api-keys`);
    expect(keys.body.data.map((key: { name: string | null }) => key.name)).not.toContain('Sneaky');
  });
});

describe('forms over HTTP', () => {
  it('refuses an API key without scopes beside the field, and an admin revokes a key (401 afterwards)', async () => {
    const client = await ownerClient();
    await client.get('/console/api-keys/new');
    const refused = await client.post('/console/api-keys', { name: 'No scopes', env: 'test' });
    expect(refused.status).toBe(422);
    expect(refused.body).toContain('id="scopes-error"');
    expect(refused.body).toContain('Choose at least one scope.');
    expect(refused.body).toContain('value="No scopes"');

    const posted = await client.post('/console/api-keys', {
      name: 'Revoke me',
      env: 'test',
      scopes: ['users:read', 'plans:read'],
    });
    expect(posted.status).toBe(303);
    expect(posted.headers.location).toBe('/console/api-keys/created');
    const created = await client.get('/console/api-keys/created');
    expect(created.status).toBe(200);
    const key = /<code id="new-api-key">([^<]+)<\/code>/.exec(created.body)?.[1];
    expect(key).toMatch(/_test_/);
    const id = /<dd class="mono">(key_[^<]+)<\/dd>/.exec(created.body)?.[1];
    expect((await f.t.partner(key!, 'GET', '/api/v1/plans')).status).toBe(200);
    // The list never shows a secret again.
    const list = await client.get('/console/api-keys');
    expect(list.body).toContain('Revoke me');
    expect(list.body).not.toContain(key!);

    const revoked = await client.post(`/console/api-keys/${id}/revoke`, {});
    expect(revoked.status).toBe(303);
    expect((await f.t.partner(key!, 'GET', '/api/v1/plans')).status).toBe(401);
    expect((await client.get('/console/api-keys')).body).toContain('is revoked.');
  });

  it('deletes a user through the same service as the API: the subscription is canceled', async () => {
    const client = await ownerClient();
    const doomed = await business(f.tenant);
    await client.get(`/console/users/${doomed.user}`);
    const deleted = await client.post(`/console/users/${doomed.user}/delete`, {});
    expect(deleted.status).toBe(303);
    expect(deleted.headers.location).toBe('/console/users');
    expect((await f.tenant.request('GET', `/api/v1/users/${doomed.user}`)).status).toBe(404);
    const subscription = await f.tenant.request('GET', `/api/v1/subscriptions/${doomed.subscription}`);
    expect(subscription.body.data.status).toBe('canceled');
    expect((await client.get(`/console/users/${doomed.user}`)).status).toBe(404);
  });

  it('refuses credits that are not a whole number beside the field, and unblocks a blocked user', async () => {
    const client = await ownerClient();
    await client.get(`/console/users/${mine.user}`);
    const refused = await client.post(`/console/users/${mine.user}/credits`, { minutes: '1.5' });
    expect(refused.status).toBe(422);
    expect(refused.body).toContain('id="minutes-error"');
    expect((await client.post(`/console/users/${mine.user}/block`, {})).status).toBe(303);
    expect((await f.tenant.request('GET', `/api/v1/users/${mine.user}`)).body.data.status).toBe('blocked');
    const page = await client.get(`/console/users/${mine.user}`);
    expect(page.body).toContain('Unblock');
    expect((await client.post(`/console/users/${mine.user}/unblock`, {})).status).toBe(303);
    expect((await f.tenant.request('GET', `/api/v1/users/${mine.user}`)).body.data.status).toBe('active');
  });
});
