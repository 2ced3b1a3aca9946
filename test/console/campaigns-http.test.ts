/**
 * Campaigns in the console over plain HTTP (docs/console.md): pasted rows and a CSV upload go
 * through the API's intake (refusals listed by line; a malformed row refuses the whole list with
 * the API's issue), a replayed create makes one campaign, start/pause/resume/cancel are asked first
 * and act once, the progress fragment and the results CSV are served, and another tenant's
 * campaign is the 404 page on every campaign page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type TestTenant } from '../support/app.js';
import { createUser } from '../top-ups/helpers.js';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { type ConsoleClient, consoleClient, csrfTokenIn, type PageResponse } from './http.js';

let f: ConsoleFixture;
let admin: ConsoleClient;
let agentId: string;
let other: TestTenant;

const formKeyIn = (page: PageResponse) => /name="form_key" value="([^"]+)"/.exec(page.body)?.[1];

async function agentOf(tenant: TestTenant): Promise<string> {
  const user = await createUser(tenant);
  const agent = await tenant.request('POST', '/api/v1/agents', {
    user_id: user.id,
    name: 'Renewals agent',
    phone_number: '+14155550199',
    prompt: 'You call about renewals.',
    welcome_message: 'Hello!',
  });
  expect(agent.status, agent.raw).toBe(201);
  return agent.body.data.id;
}

beforeAll(async () => {
  f = await startConsole();
  agentId = await agentOf(f.tenant);
  other = await createTenant(f.t, { name: 'Other Agency' });
  const member = await f.addMember('admin');
  admin = consoleClient(f.t);
  expect((await admin.signIn(member.email, member.password)).status).toBe(303);
});
afterAll(() => f?.close());

async function campaignsOf(tenant: TestTenant) {
  return (await tenant.request('GET', '/api/v1/campaigns')).body.data as {
    id: string;
    name: string;
    status: string;
  }[];
}

describe('creating a campaign', () => {
  it('takes pasted rows, lists the refused ones by line, and a replayed form creates one campaign', async () => {
    const form = await admin.get('/console/campaigns/new');
    expect(form.status).toBe(200);
    const fields = {
      form_key: formKeyIn(form) ?? '',
      name: 'Spring renewals',
      agent_id: agentId,
      rows: '+14155550101,Ada\nnot a number,Bob\n+14155550101,Ada again\n+1 415 555 0102,Cy',
    };
    const first = await admin.post('/console/campaigns', fields);
    expect(first.status).toBe(201);
    expect(first.body).toContain('2 recipients added, 2 rows refused');
    expect(first.body).toMatch(
      /<td class="numeric">2<\/td><td class="mono">not a number<\/td><td>not a phone number/,
    );
    expect(first.body).toMatch(
      /<td class="numeric">3<\/td><td class="mono">\+14155550101<\/td><td>already in the campaign/,
    );
    const replay = await admin.post('/console/campaigns', fields);
    expect(replay.status).toBe(201);
    expect((await campaignsOf(f.tenant)).filter((c) => c.name === 'Spring renewals')).toHaveLength(1);
  });

  it('refuses a malformed list as the API does (the same issue, with its line), creating nothing', async () => {
    const api = await f.tenant.request('POST', '/api/v1/campaigns', {
      agent_id: agentId,
      name: 'Bad list',
      recipients: [{ phone: '+14155550101' }, { phone: '+14155550102', email: 'nope' }],
    });
    expect(api.status).toBe(422);
    const issue = api.body.error.details[0].issue as string;
    const page = await admin.post('/console/campaigns', {
      form_key: formKeyIn(await admin.get('/console/campaigns/new')) ?? '',
      name: 'Bad list',
      agent_id: agentId,
      rows: 'phone,email\n+14155550101,\n+14155550102,nope',
    });
    expect(page.status).toBe(422);
    // The same row refused for the same reason: the API's JSON row 2 is the pasted line 3 (after the header).
    expect(api.body.error.details[0].field).toBe('recipients.1.email');
    expect(page.body).toContain(`line 3: ${issue.replace(/^line \d+: /, '')}`);
    const unknownAgent = await admin.post('/console/campaigns', {
      name: 'Nobody calls',
      agent_id: 'agt_missing',
      rows: '+14155550101',
    });
    const apiUnknown = await f.tenant.request('POST', '/api/v1/campaigns', {
      agent_id: 'agt_missing',
      name: 'Nobody calls',
      recipients: [{ phone: '+14155550101' }],
    });
    expect(unknownAgent.status).toBe(apiUnknown.status);
    expect(unknownAgent.body).toContain(apiUnknown.body.error.message);
    expect((await campaignsOf(f.tenant)).map((c) => c.name)).not.toContain('Bad list');
  });

  it('takes a CSV file upload and a schedule', async () => {
    const form = await admin.get('/console/campaigns/new');
    const boundary = '----consoleupload';
    const part = (name: string, value: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const body =
      part('_csrf', csrfTokenIn(form.body) ?? '') +
      part('form_key', formKeyIn(form) ?? '') +
      part('name', 'Uploaded') +
      part('agent_id', agentId) +
      part('scheduled_at', '2099-01-02T09:30') +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="list.csv"\r\nContent-Type: text/csv\r\n\r\nphone,name,product\r\n+14155550111,Ann,solar\r\n123,Bad,x\r\n\r\n` +
      `--${boundary}--\r\n`;
    const response = await f.t.app.inject({
      method: 'POST',
      url: '/console/campaigns',
      headers: {
        'content-type': `multipart/form-data; boundary=${boundary}`,
        cookie: [...admin.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      },
      payload: body,
    });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.body).toContain('1 recipient added, 1 row refused');
    expect(response.body).toMatch(/<td class="numeric">3<\/td><td class="mono">123<\/td>/);
    const created = (await campaignsOf(f.tenant)).find((c) => c.name === 'Uploaded');
    expect(created?.status).toBe('scheduled');
  });
});

describe('running a campaign', () => {
  it('asks before each change, acts once per form, and serves progress and results', async () => {
    const created = await f.tenant.request('POST', '/api/v1/campaigns', {
      agent_id: agentId,
      name: 'Run me',
      recipients: [{ phone: '+14155550121' }, { phone: '+14155550122' }],
    });
    const id = created.body.data.id as string;
    const page = await admin.get(`/console/campaigns/${id}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('Recipients by status');
    const confirm = await admin.get(`/console/campaigns/${id}/cancel`);
    expect(confirm.status).toBe(200);
    expect(confirm.body).toContain('This cannot be undone');
    expect((await f.tenant.request('GET', `/api/v1/campaigns/${id}`)).body.data.status).toBe('draft');
    const key = formKeyIn(confirm) ?? '';
    const first = await admin.post(`/console/campaigns/${id}/cancel`, { form_key: key });
    expect(first.status).toBe(303);
    const again = await admin.post(`/console/campaigns/${id}/cancel`, { form_key: key });
    expect(again.status).toBe(303);
    const api = await f.tenant.request('POST', `/api/v1/campaigns/${id}/cancel`);
    expect(api.status).toBe(409);
    const fresh = await admin.post(`/console/campaigns/${id}/cancel`, { form_key: 'n'.repeat(24) });
    expect(fresh.status).toBe(409);
    expect(fresh.body).toContain(api.body.error.message);
    const progress = await admin.get(`/console/campaigns/${id}/progress`);
    expect(progress.body).toContain('data-final');
    const csv = await admin.get(`/console/campaigns/${id}/results.csv`);
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    expect(csv.body.split('\r\n')[0]).toMatch(/^line,phone,name/);
  });

  it("answers the 404 page for another tenant's campaign on every page and action", async () => {
    const theirs = await other.request('POST', '/api/v1/campaigns', {
      agent_id: await agentOf(other),
      name: 'Theirs',
      recipients: [{ phone: '+14155550131' }],
    });
    const id = theirs.body.data.id as string;
    for (const url of ['', '/progress', '/results.csv', '/start', '/cancel']) {
      expect((await admin.get(`/console/campaigns/${id}${url}`)).status, url).toBe(404);
    }
    for (const action of ['start', 'pause', 'resume', 'cancel']) {
      expect((await admin.post(`/console/campaigns/${id}/${action}`, {})).status, action).toBe(404);
    }
    expect((await other.request('GET', `/api/v1/campaigns/${id}`)).body.data.status).toBe('draft');
  });
});
