/**
 * The voice pages' boundaries over plain HTTP: another tenant's agents and calls answer the 404
 * page and cannot be published, rotated, edited, deleted or called with; a viewer sees no control
 * that changes anything, and a viewer's forged POST (carrying the CSRF token of its own page) is
 * 403 and changes nothing. Also: what a page without scripts shows of a call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, createUser, type TestTenant } from '../support/app.js';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { type ConsoleClient, consoleClient } from './http.js';

let f: ConsoleFixture;
let other: TestTenant;
let theirAgent: any;
let theirCall: any;
let ourAgent: any;
let ourCall: any;
let owner: ConsoleClient;
let viewer: ConsoleClient;

async function publishedAgent(tenant: TestTenant, name: string) {
  const user = await createUser(tenant);
  const credits = await f.t.admin('POST', `/admin/v1/users/${user.id}/credits`, { minutes: 50 });
  expect(credits.status).toBe(201);
  const created = await tenant.request('POST', '/api/v1/agents', {
    user_id: user.id,
    name,
    phone_number: '+14155550100',
    prompt: 'Call {name}.',
    welcome_message: 'Hello {name}.',
  });
  expect(created.status).toBe(201);
  const published = await tenant.request('POST', `/api/v1/agents/${created.body.data.id}/publish`);
  expect(published.status).toBe(200);
  return published.body.data;
}

async function placeCall(tenant: TestTenant, agentId: string) {
  const call = await tenant.request('POST', '/api/v1/calls', {
    agent_id: agentId,
    phone: '+14155550123',
    name: 'Ada',
  });
  expect(call.status).toBe(202);
  return call.body.data;
}

async function callsOf(tenant: TestTenant) {
  return (await tenant.request('GET', '/api/v1/calls?limit=100')).body.pagination.total as number;
}

beforeAll(async () => {
  f = await startConsole({ env: { SIMULATED_CALL_SECONDS: '61' } });
  other = await createTenant(f.t, { name: 'Other Agency' });
  theirAgent = await publishedAgent(other, 'Their agent');
  theirCall = await placeCall(other, theirAgent.id);
  ourAgent = await publishedAgent(f.tenant, 'Our agent');
  ourCall = await placeCall(f.tenant, ourAgent.id);
  owner = consoleClient(f.t);
  expect((await owner.signIn(f.owner.email, f.owner.password)).status).toBe(303);
  const member = await f.addMember('viewer');
  viewer = consoleClient(f.t);
  expect((await viewer.signIn(member.email, member.password)).status).toBe(303);
});
afterAll(async () => {
  await f?.close();
});

describe('another tenant’s agents and calls', () => {
  it('answer the 404 page', async () => {
    for (const url of [
      `/console/agents/${theirAgent.id}`,
      `/console/calls/${theirCall.id}`,
      `/console/calls/${theirCall.id}/live`,
    ]) {
      const page = await owner.get(url);
      expect(page.status, url).toBe(404);
      expect(page.body).not.toContain('Their agent');
      expect(page.body).not.toContain(theirCall.id);
    }
    // Filtering by their agent shows nothing of theirs.
    const list = await owner.get(`/console/calls?agent_id=${theirAgent.id}`);
    expect(list.status).toBe(200);
    expect(list.body).toContain('No calls match');
  });

  it('cannot be published, rotated, edited, deleted or called with; nothing of theirs changes', async () => {
    await owner.get('/console/agents');
    const calls = await callsOf(other);
    const attempts: [string, Record<string, string>][] = [
      [`/console/agents/${theirAgent.id}/publish`, {}],
      [`/console/agents/${theirAgent.id}/rotate-webhook`, {}],
      [
        `/console/agents/${theirAgent.id}`,
        { name: 'Taken', phone_number: '+14155550111', prompt: 'Mine now.' },
      ],
      [`/console/agents/${theirAgent.id}/calls`, { phone: '+14155550123' }],
      [`/console/agents/${theirAgent.id}/delete`, {}],
    ];
    for (const [url, fields] of attempts) {
      const answer = await owner.post(url, fields);
      expect(answer.status, url).toBe(404);
    }
    const after = (await other.request('GET', `/api/v1/agents/${theirAgent.id}`)).body.data;
    expect(after).toEqual(theirAgent);
    expect(await callsOf(other)).toBe(calls);
  });
});

describe('a viewer', () => {
  it('sees the voice pages without a single control that changes anything', async () => {
    const pages = {
      agents: await viewer.get('/console/agents'),
      agent: await viewer.get(`/console/agents/${ourAgent.id}`),
      calls: await viewer.get('/console/calls'),
      call: await viewer.get(`/console/calls/${ourCall.id}`),
      doNotCall: await viewer.get('/console/do-not-call'),
    };
    for (const [name, page] of Object.entries(pages)) {
      expect(page.status, name).toBe(200);
      // The only form that posts is the sign-out button.
      const posts = [...page.body.matchAll(/<form method="post" action="([^"]+)"/g)].map((m) => m[1]);
      expect(posts, name).toEqual(['/console/sign-out']);
    }
    expect(pages.agents.body).toContain('Our agent');
    expect(pages.agents.body).not.toContain('New agent');
    for (const label of ['Publish version', 'Rotate URL', 'Place call', 'Delete agent', 'Save draft']) {
      expect(pages.agent.body).not.toContain(label);
    }
    // The webhook URL places calls: a viewer sees it masked (voice-credentials.test.ts).
    expect(pages.agent.body).not.toContain(ourAgent.webhook_url);
    expect(pages.agent.body).toContain('version 1');
    expect(pages.doNotCall.body).not.toContain('Add to the list');
    expect((await viewer.get('/console/agents/new')).status).toBe(403);
  });

  it('is refused (403) a forged POST with its own valid CSRF token, and nothing changes', async () => {
    await viewer.get('/console/agents');
    const calls = await callsOf(f.tenant);
    const attempts: [string, Record<string, string>][] = [
      [
        '/console/agents',
        { user_id: ourAgent.user_id, name: 'Forged', phone_number: '+14155550100', prompt: 'x' },
      ],
      [`/console/agents/${ourAgent.id}`, { name: 'Forged', phone_number: '+14155550100', prompt: 'x' }],
      [`/console/agents/${ourAgent.id}/publish`, {}],
      [`/console/agents/${ourAgent.id}/rotate-webhook`, {}],
      [`/console/agents/${ourAgent.id}/calls`, { phone: '+14155550123' }],
      [`/console/agents/${ourAgent.id}/delete`, {}],
      ['/console/do-not-call', { phone_number: '+14155550222' }],
      ['/console/do-not-call/remove', { phone_number: '+14155550222' }],
    ];
    for (const [url, fields] of attempts) {
      const answer = await viewer.post(url, fields);
      expect(answer.status, url).toBe(403);
      expect(answer.body).toContain('Your role (viewer) cannot do this');
    }
    expect((await f.tenant.request('GET', `/api/v1/agents/${ourAgent.id}`)).body.data).toEqual(ourAgent);
    expect(await callsOf(f.tenant)).toBe(calls);
    expect((await f.tenant.request('GET', '/api/v1/do-not-call')).body.pagination.total).toBe(0);
    const agents = (await f.tenant.request('GET', '/api/v1/agents')).body.data.map((a: any) => a.name);
    expect(agents).toEqual(['Our agent']);
  });
});

describe('a call page without scripts', () => {
  it('shows the current state, follows a live call through its fragment, and stops once final', async () => {
    const live = await owner.get(`/console/calls/${ourCall.id}`);
    expect(live.status).toBe(200);
    expect(live.body).toContain(`data-refresh="/console/calls/${ourCall.id}/live"`);
    expect(live.body).toContain('Queued');
    const fragment = await owner.get(`/console/calls/${ourCall.id}/live`);
    expect(fragment.status).toBe(200);
    expect(fragment.body).not.toContain('<html');
    expect(fragment.body).not.toContain('data-final');

    await f.t.services.jobRunner.drain();
    const final = await owner.get(`/console/calls/${ourCall.id}`);
    expect(final.body).not.toContain('data-refresh=');
    expect(final.body).toContain('data-final');
    expect(final.body).toMatch(
      /<ol class="timeline">[\s\S]*Queued[\s\S]*Dialling[\s\S]*Completed[\s\S]*<\/ol>/,
    );
    expect((await owner.get(`/console/calls/${ourCall.id}/live`)).body).toContain('data-final');
  });

  it('refuses a filter the API refuses, beside the field', async () => {
    const page = await owner.get('/console/calls?created_after=yesterday');
    expect(page.status).toBe(422);
    expect(page.body).toContain('id="created_after-error"');
  });
});
