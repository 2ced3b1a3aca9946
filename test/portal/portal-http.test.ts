/**
 * The client portal over HTTP: sign-in with the /auth/v1 accounts, the pages a client sees, and
 * the walls around them — users of one agency never in another's portal, one user never at
 * another's agents or calls (not even by a forged POST), blocked users out, CSRF on every form,
 * custom domains only once verified, and nothing of the platform's name anywhere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app.js';
import {
  type Agency,
  addDomain,
  type Client,
  createAgency,
  createAgent,
  createClient,
  type PageResponse,
  placeCall,
  portalClient,
  startPortalApp,
} from './helpers.js';

const txtRecords = new Map<string, string[][]>();
let t: TestApp;
let acme: Agency;
let globex: Agency;
let grace: Client;
let alan: Client;
let hedy: Client;
let graceAgent: { id: string; webhook_id: string };
let alanAgent: { id: string; webhook_id: string };
let hedyAgent: { id: string };
let graceCall: string;
let alanCall: string;

/** No page, stylesheet or header of the portal names the platform. */
function expectUnbranded(page: PageResponse, what: string) {
  expect(page.body, what).not.toMatch(/voiceplane/i);
  const headers = Object.entries(page.headers)
    .map(([name, value]) => `${name}: ${String(value)}`)
    .join('\n');
  expect(headers, what).not.toMatch(/voiceplane/i);
}

beforeAll(async () => {
  t = await startPortalApp({
    adapters: () => ({
      resolveTxt: async (name: string) => {
        const records = txtRecords.get(name);
        if (!records) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
        return records;
      },
    }),
  });
  t.services.jobRunner.start();
  acme = await createAgency(t, {
    name: 'Acme Dental Voice',
    color: '#0f766e',
    logoUrl: 'https://cdn.acme.example/logo.png',
  });
  globex = await createAgency(t, { name: 'Globex Calls', color: '#b45309', supportEmail: null });
  grace = await createClient(t, acme, { name: 'Grace Hopper', includedMinutes: 500 });
  alan = await createClient(t, acme, { name: 'Alan Turing', includedMinutes: 100 });
  hedy = await createClient(t, globex, { name: 'Hedy Lamarr', includedMinutes: 50 });
  graceAgent = await createAgent(t, acme, grace.id, { name: 'Front desk' });
  alanAgent = await createAgent(t, acme, alan.id, { name: 'Alan’s line' });
  hedyAgent = await createAgent(t, globex, hedy.id, { name: 'Hedy’s line' });
  graceCall = await placeCall(t, graceAgent, '+14155550123');
  await placeCall(t, graceAgent, '+14155550000');
  alanCall = await placeCall(t, alanAgent, '+14155550124');
});
afterAll(() => t?.close());

describe('signing in', () => {
  it('sends a visitor to the brand’s sign-in page, and a user in with an HttpOnly, Lax cookie at the portal’s path', async () => {
    const client = portalClient(t);
    const home = await client.get(acme.base);
    expect(home.status).toBe(303);
    expect(home.headers.location).toBe(`${acme.base}/sign-in?next=${encodeURIComponent(acme.base)}`);

    const form = await client.get(`${acme.base}/sign-in`);
    expect(form.status).toBe(200);
    expect(form.body).toContain('<title>Sign in · Acme Dental Voice</title>');
    expect(form.body).toContain('src="https://cdn.acme.example/logo.png"');
    expect(form.body).toContain('<label for="email">Email</label>');
    expectUnbranded(form, 'sign-in page');
    expect(String(form.headers['content-security-policy'])).toMatch(
      /img-src 'self' data: https:\/\/cdn\.acme\.example/,
    );
    expect(form.headers['x-frame-options']).toBeDefined();

    const wrong = await client.post(`${acme.base}/sign-in`, { email: grace.email, password: 'not it' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toContain('The email or password is incorrect.');
    expect(wrong.body).toContain(`value="${grace.email}"`);

    const signedIn = await client.post(`${acme.base}/sign-in`, {
      email: grace.email,
      password: grace.password,
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.location).toBe(acme.base);
    const cookie = [signedIn.headers['set-cookie']]
      .flat()
      .find((line) => String(line).startsWith('portal_session='));
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(new RegExp(`Path=${acme.base}(;|$)`));

    const overview = await client.get(acme.base);
    expect(overview.status).toBe(200);
    expect(overview.body).toContain('Welcome, Grace Hopper');
    expect(overview.body).toMatch(/Minutes left<\/h2>\s*<p class="stat-value">499</);
    expect(overview.body).toContain('Growth');
    // With a plan, minutes are bought in the portal; the support address stays in the footer.
    expect(overview.body).toContain(`href="${acme.base}/top-ups">Buy minutes</a>`);
    expect(overview.body).toContain(`<a href="mailto:help@${acme.slug}.example">`);
    expect(overview.body).toContain('+14155550123');
    expect(overview.body).not.toContain('+14155550124');
    expectUnbranded(overview, 'overview');
  });

  it('goes back to the page asked for, and never off the portal', async () => {
    const client = portalClient(t);
    const asked = await client.get(`${acme.base}/calls?status=completed`);
    expect(asked.status).toBe(303);
    await client.get(String(asked.headers.location));
    const back = await client.post(`${acme.base}/sign-in`, {
      email: grace.email,
      password: grace.password,
      next: `${acme.base}/calls?status=completed`,
    });
    expect(back.headers.location).toBe(`${acme.base}/calls?status=completed`);

    for (const next of [
      'https://evil.example/',
      '//evil.example',
      `${globex.base}/calls`,
      '/console',
      `${acme.base}-x`,
      `${acme.base}/中`,
      `${acme.base}/\r\nset-cookie: x=1`,
    ]) {
      const other = portalClient(t);
      await other.get(`${acme.base}/sign-in`);
      const answer = await other.post(`${acme.base}/sign-in`, {
        email: grace.email,
        password: grace.password,
        next,
      });
      expect(answer.headers.location, next).toBe(acme.base);
    }
  });

  it('refuses a user of another agency, and ignores another agency’s session', async () => {
    const client = portalClient(t);
    await client.get(`${globex.base}/sign-in`);
    const refused = await client.post(`${globex.base}/sign-in`, {
      email: grace.email,
      password: grace.password,
    });
    expect(refused.status).toBe(401);
    expect(refused.body).toContain('Globex Calls');
    expect(refused.body).not.toContain('Acme');

    // Grace's own session, presented at Globex's portal (as a forged cookie would), is nobody there.
    const graceClient = portalClient(t);
    await graceClient.signIn(acme.base, grace.email, grace.password);
    const token = graceClient.sessionCookie();
    expect(token).toBeDefined();
    const elsewhere = await t.app.inject({
      method: 'GET',
      url: globex.base,
      headers: { host: 'voiceplane.test', cookie: `portal_session=${token}` },
    });
    expect(elsewhere.statusCode).toBe(303);
    expect(elsewhere.headers.location).toContain(`${globex.base}/sign-in`);
  });

  it('refuses a blocked user, and ends the portal for a user blocked while signed in', async () => {
    const blocked = await createClient(t, acme, { name: 'Blocked Bob', includedMinutes: 0 });
    const signedIn = portalClient(t);
    expect((await signedIn.signIn(acme.base, blocked.email, blocked.password)).status).toBe(303);
    expect((await signedIn.get(acme.base)).status).toBe(200);

    expect((await t.admin('PATCH', `/admin/v1/users/${blocked.id}`, { status: 'blocked' })).status).toBe(200);
    const after = await signedIn.get(acme.base);
    expect(after.status).toBe(303);
    expect(after.headers.location).toContain('/sign-in');

    const fresh = portalClient(t);
    const refused = await fresh.signIn(acme.base, blocked.email, blocked.password);
    expect(refused.status).toBe(401);
    expect(refused.body).toContain('The email or password is incorrect.');
  });

  it('signs out by revoking the session itself', async () => {
    const client = portalClient(t);
    await client.signIn(acme.base, grace.email, grace.password);
    const token = client.sessionCookie() as string;
    expect(
      (await t.inject({ method: 'GET', url: '/auth/v1/me', headers: { authorization: `Bearer ${token}` } }))
        .status,
    ).toBe(200);
    const out = await client.post(`${acme.base}/sign-out`, {});
    expect(out.status).toBe(303);
    expect(out.headers.location).toBe(`${acme.base}/sign-in`);
    expect(client.sessionCookie()).toBeUndefined();
    expect(
      (await t.inject({ method: 'GET', url: '/auth/v1/me', headers: { authorization: `Bearer ${token}` } }))
        .status,
    ).toBe(401);
    expect((await client.get(`${acme.base}/sign-in`)).body).toContain('You are signed out.');
  });

  it('counts failed sign-ins in the same buckets as POST /auth/v1/sessions', async () => {
    const target = await createClient(t, globex, { name: 'Target', includedMinutes: 0 });
    const client = portalClient(t);
    let last: PageResponse | undefined;
    for (let i = 0; i < 30; i++) {
      await client.get(`${globex.base}/sign-in`);
      last = await client.post(`${globex.base}/sign-in`, { email: target.email, password: `wrong ${i}` });
      if (last.status === 429) break;
    }
    expect(last?.status).toBe(429);
    expect(last?.headers['retry-after']).toBeDefined();
    const api = await t.inject({
      method: 'POST',
      url: '/auth/v1/sessions',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({
        tenant_id: globex.tenant.id,
        email: target.email,
        password: target.password,
      }),
    });
    expect(api.status).toBe(429);
  });
});

describe('one user’s agents and calls', () => {
  it('lists only the user’s own agents and calls, and filters calls by outcome', async () => {
    const client = portalClient(t);
    await client.signIn(acme.base, grace.email, grace.password);
    const agents = await client.get(`${acme.base}/agents`);
    expect(agents.body).toContain('Front desk');
    expect(agents.body).not.toContain('Alan');

    const calls = await client.get(`${acme.base}/calls`);
    expect(calls.body).toContain('+14155550123');
    expect(calls.body).toContain('+14155550000');
    expect(calls.body).not.toContain('+14155550124');
    const noAnswer = await client.get(`${acme.base}/calls?status=no_answer`);
    expect(noAnswer.body).toContain('+14155550000');
    expect(noAnswer.body).not.toContain('+14155550123');
    // Another user's agent as a filter shows nothing of theirs.
    const forged = await client.get(`${acme.base}/calls?agent_id=${alanAgent.id}`);
    expect(forged.body).not.toContain('+14155550124');
    expect(forged.body).toContain('No calls match');
    const bad = await client.get(`${acme.base}/calls?status=exploded`);
    expect(bad.status).toBe(422);
    expect(bad.body).toContain('Check the filter');

    const call = await client.get(`${acme.base}/calls/${graceCall}`);
    expect(call.status).toBe(200);
    expect(call.body).toContain('Timeline');
    expect(call.body).toContain('Completed');
    expect(call.body).toMatch(/Billed<\/dt><dd>1 minute/);
    expectUnbranded(call, 'call page');
  });

  it('answers another user’s or agency’s agent and call with the portal’s 404', async () => {
    const client = portalClient(t);
    await client.signIn(acme.base, grace.email, grace.password);
    for (const url of [
      `${acme.base}/agents/${alanAgent.id}`,
      `${acme.base}/agents/${hedyAgent.id}`,
      `${acme.base}/agents/agt_doesnotexist`,
      `${acme.base}/calls/${alanCall}`,
      `${acme.base}/calls/call_doesnotexist`,
      `${acme.base}/nowhere`,
    ]) {
      const page = await client.get(url);
      expect(page.status, url).toBe(404);
      expect(page.body, url).toContain('Page not found');
      expect(page.body, url).toContain('Acme Dental Voice');
      expect(page.body, url).not.toContain('Alan');
      expectUnbranded(page, url);
    }
  });

  it('changes nothing on a forged POST to another user’s agent', async () => {
    const client = portalClient(t);
    await client.signIn(acme.base, grace.email, grace.password);
    const before = (await t.admin('GET', `/api/v1/agents/${alanAgent.id}`)).body;
    const edit = await client.post(`${acme.base}/agents/${alanAgent.id}`, {
      phone_number: '+14155550999',
      welcome_message: 'Hijacked',
      prompt: 'Hijacked',
    });
    expect(edit.status).toBe(404);
    const publish = await client.post(`${acme.base}/agents/${alanAgent.id}/publish`, {});
    expect(publish.status).toBe(404);
    const other = await client.post(`${acme.base}/agents/${hedyAgent.id}/publish`, {});
    expect(other.status).toBe(404);
    const alanNow = await acme.tenant.request('GET', `/api/v1/agents/${alanAgent.id}`);
    expect(alanNow.body.data.draft.prompt).not.toBe('Hijacked');
    expect(alanNow.body.data.published_version).toBe(1);
    const hedyNow = await globex.tenant.request('GET', `/api/v1/agents/${hedyAgent.id}`);
    expect(hedyNow.body.data.published_version).toBe(1);
    expect(before).toBeDefined();
  });

  it('edits the draft (refusing bad fields beside them) and publishes it', async () => {
    const client = portalClient(t);
    await client.signIn(acme.base, grace.email, grace.password);
    const page = await client.get(`${acme.base}/agents/${graceAgent.id}`);
    expect(page.body).toContain('<label for="prompt">Prompt</label>');
    expect(page.body).toContain('Publish version 2');

    const refused = await client.post(`${acme.base}/agents/${graceAgent.id}`, {
      phone_number: '4155550100',
      welcome_message: 'Hi',
      prompt: '',
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toContain('id="phone_number-error"');
    expect(refused.body).toContain('id="prompt-error"');
    expect(refused.body).toContain('value="4155550100"');

    const saved = await client.post(`${acme.base}/agents/${graceAgent.id}`, {
      phone_number: '+14155550111',
      welcome_message: 'Good morning {name}!',
      prompt: 'Book {name} in for a cleaning.',
    });
    expect(saved.status).toBe(303);
    const after = await client.get(String(saved.headers.location));
    expect(after.body).toContain('Draft saved.');
    expect(after.body).toContain('unpublished changes');

    const published = await client.post(`${acme.base}/agents/${graceAgent.id}/publish`, {});
    expect(published.status).toBe(303);
    const agent = await acme.tenant.request('GET', `/api/v1/agents/${graceAgent.id}`);
    expect(agent.body.data).toMatchObject({
      published_version: 2,
      phone_number: '+14155550111',
      draft: { prompt: 'Book {name} in for a cleaning.', welcome_message: 'Good morning {name}!' },
    });
    const versions = await client.get(`${acme.base}/agents/${graceAgent.id}`);
    expect(versions.body).toContain('Published version 2: calls use it from now on.');
    expect(versions.body).toContain('Version 1');
  });
});

describe('forms need their CSRF token', () => {
  it('refuses a POST without a token, or with another session’s, and changes nothing', async () => {
    const client = portalClient(t);
    await client.signIn(acme.base, grace.email, grace.password);
    const before = (await acme.tenant.request('GET', `/api/v1/agents/${graceAgent.id}`)).body.data;

    const none = await client.post(`${acme.base}/agents/${graceAgent.id}/publish`, {}, { csrf: false });
    expect(none.status).toBe(403);
    expect(none.body).toContain('This form has expired');

    const other = portalClient(t);
    await other.signIn(acme.base, alan.email, alan.password);
    const foreign = await client.post(
      `${acme.base}/agents/${graceAgent.id}`,
      { prompt: 'Forged', phone_number: '+14155550100', welcome_message: '' },
      { csrf: other.csrfToken() },
    );
    expect(foreign.status).toBe(403);

    const signedOut = portalClient(t);
    const noSession = await signedOut.post(
      `${acme.base}/sign-in`,
      { email: grace.email, password: grace.password },
      { csrf: false },
    );
    expect(noSession.status).toBe(403);

    const after = (await acme.tenant.request('GET', `/api/v1/agents/${graceAgent.id}`)).body.data;
    expect(after).toEqual(before);
  });

  it('refuses a JSON body with a page, not a stack', async () => {
    const response = await t.inject({
      method: 'POST',
      url: `${acme.base}/sign-in`,
      headers: { host: 'voiceplane.test', 'content-type': 'application/json' },
      payload: '{"email":"x"}',
    });
    expect(response.status).toBe(415);
    expect(response.headers['content-type']).toMatch(/text\/html/);
    expect(response.raw).toContain('Acme Dental Voice');
  });
});

describe('where the portal answers', () => {
  it('answers on a custom domain only once it is verified, in that tenant’s brand only', async () => {
    const added = await t.admin('POST', `/admin/v1/tenants/${globex.tenant.id}/domains`, {
      hostname: 'portal.globex.example',
    });
    expect(added.status).toBe(201);
    const domain = added.body.data;
    const pending = portalClient(t, 'portal.globex.example');
    const before = await pending.get('/portal/sign-in');
    expect(before.status).toBe(404);
    expect(before.body).not.toContain('Globex');
    expectUnbranded(before, 'unverified domain');

    txtRecords.set(domain.verification.name, [[domain.verification.value]]);
    expect(
      (await t.admin('POST', `/admin/v1/tenants/${globex.tenant.id}/domains/${domain.id}/verify`)).status,
    ).toBe(200);

    const client = portalClient(t, 'portal.globex.example');
    const home = await client.get('/portal');
    expect(home.status).toBe(303);
    expect(home.headers.location).toBe('/portal/sign-in?next=%2Fportal');
    const form = await client.get('/portal/sign-in');
    expect(form.status).toBe(200);
    expect(form.body).toContain('Globex Calls');
    expect(form.body).toContain('href="/portal/assets/styles.css');
    expectUnbranded(form, 'custom domain sign-in');

    const signedIn = await client.post('/portal/sign-in', { email: hedy.email, password: hedy.password });
    expect(signedIn.status).toBe(303);
    expect(String([signedIn.headers['set-cookie']].flat().join('\n'))).toMatch(
      /portal_session=[^;]+;.*Path=\/portal(;|$)/m,
    );
    const overview = await client.get('/portal');
    expect(overview.body).toContain('Welcome, Hedy Lamarr');
    // Minutes are bought on the portal's own address.
    expect(overview.body).toContain('href="/portal/top-ups">Buy minutes</a>');
    expect((await client.get('/portal/agents')).body).toContain('Hedy’s line');

    // Another agency's slug on this domain is just no page of Globex's.
    const foreign = await client.get(`${acme.base}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toContain('Globex Calls');
    expect(foreign.body).not.toContain('Acme');
    // And the platform's surfaces are not there at all.
    expect(
      (await t.inject({ method: 'GET', url: '/console/sign-in', headers: { host: 'portal.globex.example' } }))
        .status,
    ).toBe(404);
  });

  it('answers the platform host’s /portal and unknown slugs with a page that names nobody', async () => {
    for (const url of [
      '/portal',
      '/portal/',
      '/portal/no-such-agency',
      '/portal/no-such-agency/agents',
      '/portal/%00bad',
      '/portal/sign-in',
    ]) {
      const page = await portalClient(t).get(url);
      expect(page.status, url).toBe(404);
      expect(page.headers['content-type'], url).toMatch(/text\/html/);
      expect(page.body, url).toContain('Page not found');
      expect(page.body, url).not.toMatch(/Acme|Globex/);
      expectUnbranded(page, url);
    }
    // A pending (unverified) domain of Acme's is no portal either.
    await addDomain(t, acme.tenant.id, 'calls.acme.example', false);
    const pending = await portalClient(t, 'calls.acme.example').get('/portal');
    expect(pending.status).toBe(404);
    expect(pending.body).not.toContain('Acme');
  });

  it('serves its stylesheet and the brand’s colour from the portal’s own paths', async () => {
    const client = portalClient(t);
    const form = await client.get(`${acme.base}/sign-in`);
    const styles = /href="([^"]*styles\.css[^"]*)"/.exec(form.body)?.[1] as string;
    const brand = /href="([^"]*brand\.css[^"]*)"/.exec(form.body)?.[1] as string;
    expect(styles.startsWith(`${acme.base}/assets/`)).toBe(true);
    const css = await client.get(styles);
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toMatch(/text\/css/);
    expectUnbranded(css, 'stylesheet');
    const brandCss = await client.get(brand);
    expect(brandCss.status).toBe(200);
    expect(brandCss.body).toContain('--accent:#0f766e');
    expect(brandCss.body).toContain('--on-accent:#ffffff');
    expectUnbranded(brandCss, 'brand.css');
  });
});
