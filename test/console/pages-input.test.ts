/**
 * What the console accepts as input is what the API accepts: NUL characters, unpaired surrogates
 * and JSON bodies in the console's filters and forms answer 4xx pages (never a 500), and the
 * do-not-call removal checks its number as the API's path parameter does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../support/app.js';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { type ConsoleClient, consoleClient } from './http.js';

let f: ConsoleFixture;
let owner: ConsoleClient;
let agentId: string;
let userId: string;

beforeAll(async () => {
  f = await startConsole({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const user = await createUser(f.tenant);
  userId = user.id;
  const created = await f.tenant.request('POST', '/api/v1/agents', {
    user_id: user.id,
    name: 'Input agent',
    phone_number: '+14155550100',
    prompt: 'Call {name}.',
    welcome_message: 'Hello {name}.',
  });
  expect(created.status).toBe(201);
  agentId = created.body.data.id;
  expect((await f.tenant.request('POST', `/api/v1/agents/${agentId}/publish`)).status).toBe(200);
  owner = consoleClient(f.t);
  expect((await owner.signIn(f.owner.email, f.owner.password)).status).toBe(303);
});
afterAll(async () => {
  await f?.close();
});

const NUL = '\u0000';

describe('filters and search boxes', () => {
  const filters = [
    '/console/users?search=%00',
    '/console/users?status=%00',
    '/console/plans?provider=%00',
    '/console/subscriptions?status=%00',
    '/console/agents?user_id=%00',
    '/console/agents/new?owner_search=%00',
    '/console/calls?phone=%00',
    '/console/calls?agent_id=%00',
    '/console/do-not-call?phone=%00',
    '/console/api-keys?page=%00',
    '/console/webhooks?page=%00',
    '/console/emails?page=%00',
    '/console/users/usr_%00',
    '/console/agents/%00',
  ];
  it.each(filters)('%s answers a 4xx page', async (url) => {
    const page = await owner.get(url);
    expect(page.status, page.body.slice(0, 300)).toBeGreaterThanOrEqual(400);
    expect(page.status).toBeLessThan(500);
    expect(page.headers['content-type']).toContain('text/html');
  });
});

describe('forms', () => {
  const forms: [string, () => string, Record<string, string>][] = [
    ['plan name', () => '/console/plans', { name: `Gold${NUL}`, provider: 'stripe', monthly_price: '10' }],
    [
      'agent prompt',
      () => '/console/agents',
      {
        user_id: userId,
        name: 'A',
        phone_number: '+14155550100',
        prompt: `x${NUL}`,
        welcome_message: 'Hi',
      },
    ],
    [
      'agent name on edit',
      () => `/console/agents/${agentId}`,
      { name: `A${NUL}`, phone_number: '+14155550100', prompt: 'x', welcome_message: 'Hi' },
    ],
    ['do-not-call reason', () => '/console/do-not-call', { phone_number: '+14155550111', reason: `r${NUL}` }],
    ['do-not-call number', () => '/console/do-not-call', { phone_number: `+1415${NUL}` }],
    ['do-not-call removal with NUL', () => '/console/do-not-call/remove', { phone_number: `+1${NUL}` }],
    ['do-not-call removal too long', () => '/console/do-not-call/remove', { phone_number: '1'.repeat(300) }],
    [
      'test-call context (NUL)',
      () => `/console/agents/${agentId}/calls`,
      { phone: '+14155550123', context: '{"a":"\\u0000"}' },
    ],
    [
      'test-call context (surrogate)',
      () => `/console/agents/${agentId}/calls`,
      { phone: '+14155550123', context: '{"a":"\\ud800"}' },
    ],
    [
      'test-call name',
      () => `/console/agents/${agentId}/calls`,
      { phone: '+14155550123', name: `Ada${NUL}` },
    ],
    ['credit reason', () => `/console/users/${userId}/credits`, { minutes: '5', reason: `gift${NUL}` }],
    ['API key name', () => '/console/api-keys', { name: `key${NUL}`, env: 'test', scopes: 'calls:read' }],
    [
      'webhook description',
      () => '/console/webhooks',
      { url: 'https://hooks.example/x', description: `d${NUL}`, events: 'call.completed' },
    ],
    [
      'email sender',
      () => '/console/emails/settings',
      { smtp_url: 'smtp://mail.example:25', from: `a${NUL}@b.example` },
    ],
    [
      'email SMTP URL',
      () => '/console/emails/settings',
      { smtp_url: `smtp://mail${NUL}.example:25`, from: 'a@b.example' },
    ],
  ];
  it.each(forms)('%s with NUL answers a 4xx page', async (_name, url, fields) => {
    await owner.get('/console');
    const page = await owner.post(url(), fields);
    expect(page.status, page.body.slice(0, 300)).toBeGreaterThanOrEqual(400);
    expect(page.status).toBeLessThan(500);
  });

  it('refuses a JSON body (415) and keeps the API taking JSON', async () => {
    await owner.get('/console');
    const csrf = /name="_csrf" value="([^"]+)"/.exec((await owner.get('/console/plans/new')).body)?.[1];
    const cookie = [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    for (const payload of [
      { _csrf: csrf, name: 5, provider: ['x'] },
      { _csrf: csrf, phone_number: { a: 1 } },
    ]) {
      for (const url of ['/console/plans', '/console/do-not-call', `/console/users/${userId}/credits`]) {
        const answer = await f.t.app.inject({
          method: 'POST',
          url,
          headers: { cookie, 'content-type': 'application/json' },
          payload: JSON.stringify(payload),
        });
        expect(answer.statusCode, answer.body.slice(0, 200)).toBe(415);
      }
    }
    const api = await f.tenant.request('POST', '/api/v1/do-not-call', { phone_number: '+14155550188' });
    expect(api.status).toBe(201);
  });

  it('removes a listed number through the form as the API does', async () => {
    expect(
      (await f.tenant.request('POST', '/api/v1/do-not-call', { phone_number: '+14155550199' })).status,
    ).toBe(201);
    await owner.get('/console/do-not-call');
    const removed = await owner.post('/console/do-not-call/remove', { phone_number: '+14155550199' });
    expect(removed.status).toBe(303);
    const missing = await owner.post('/console/do-not-call/remove', { phone_number: '+14155550199' });
    expect(missing.status).toBe(404);
  });
});
