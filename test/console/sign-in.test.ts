/**
 * Signing in to the console: in the browser (sign in, land on the overview, sign out; a wrong
 * password is refused in words), and through plain HTTP for what a browser hides: the cookie's
 * flags, CSRF, lockout, and that members and users never share sessions.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMetrics, sampleValue } from '../metrics/prometheus.js';
import {
  BROWSER_WALK,
  type ConsoleFixture,
  expectAccessible,
  hasChromium,
  launchBrowser,
  newConsoleContext,
  screenshot,
  signedIn,
  startConsole,
  warnWithoutChromium,
} from './helpers.js';
import { consoleClient } from './http.js';

warnWithoutChromium('console/sign-in');

let f: ConsoleFixture;
let browser: Browser | undefined;

beforeAll(async () => {
  f = await startConsole();
  if (hasChromium) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await f?.close();
});

describe.skipIf(!hasChromium)('signing in, in a browser', BROWSER_WALK, () => {
  it('shows the sign-in page, refuses a wrong password, then opens the overview', async () => {
    const context = await newConsoleContext(browser!, f.origin, { width: 1280, height: 800 });
    const page = await context.newPage();
    await page.goto('/console/users');
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    await expectAccessible(page);
    await screenshot(page, 'sign-in');
    await page.getByLabel('Email').fill(f.owner.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('The email or password is incorrect.').waitFor();
    await page.getByLabel('Password').fill(f.owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/console/users');
    await context.close();
  });

  it('signs out, and the old cookie no longer opens a page', async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner);
    const cookie = (await context.cookies()).find((c) => c.name === 'vp_console');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/console' });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();
    const again = await f.t.inject({
      method: 'GET',
      url: '/console',
      headers: { cookie: `vp_console=${cookie!.value}` },
    });
    expect(again.status).toBe(303);
    expect(again.headers.location).toBe('/console/sign-in?next=%2Fconsole');
    await context.close();
  });
});

describe('console sessions over HTTP', () => {
  it('sets an HttpOnly, SameSite=Lax session cookie, Secure behind an https proxy', async () => {
    const client = consoleClient(f.t);
    const plain = await client.signIn(f.owner.email, f.owner.password);
    expect(plain.status).toBe(303);
    const cookie = String(plain.headers['set-cookie'])
      .split(/,(?=\s*vp_)/)
      .find((c) => c.includes('vp_console='));
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).not.toMatch(/Secure/i);

    const proxied = await startConsole({ env: { TRUST_PROXY: '1' } });
    try {
      const behindTls = consoleClient(proxied.t, { 'x-forwarded-proto': 'https' });
      const signed = await behindTls.signIn(proxied.owner.email, proxied.owner.password);
      const secureCookie = String(signed.headers['set-cookie'])
        .split(/,(?=\s*vp_)/)
        .find((c) => c.includes('vp_console='));
      expect(secureCookie).toMatch(/Secure/i);
    } finally {
      await proxied.close();
    }
  });

  it('refuses a form without its CSRF token, changing nothing', async () => {
    const client = consoleClient(f.t);
    await client.signIn(f.owner.email, f.owner.password);
    const forged = await client.post('/console/sign-out', {}, { withCsrf: false });
    expect(forged.status).toBe(403);
    expect(forged.body).toContain('This form has expired or did not come from the console.');
    expect((await client.get('/console')).status).toBe(200);
  });

  it('locks a member after five failed sign-ins in a row, even with the right password', async () => {
    const member = await f.addMember('viewer');
    const client = consoleClient(f.t);
    for (let i = 0; i < 5; i++)
      expect((await client.signIn(member.email, 'wrong password')).status).toBe(401);
    const locked = await client.signIn(member.email, member.password);
    expect(locked.status).toBe(401);
    expect(locked.body).toContain('locked for 15 minutes');
  });

  it('answers 429 once an account has had ten failed sign-ins in 15 minutes, existing or not', async () => {
    const client = consoleClient(f.t);
    const refusals = async () =>
      sampleValue(
        parseMetrics((await f.t.inject({ method: 'GET', url: '/metrics' })).raw),
        'voiceplane_rate_limit_refusals_total',
        {
          limit: 'console_sign_in',
        },
      ) ?? 0;
    const before = await refusals();
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await client.signIn('nobody@example.com', 'wrong')).status);
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses[10]).toBe(429);
    // Operators see the refusal in the metrics, by the limit that refused.
    expect((await refusals()) - before).toBe(1);
  });

  it("never lets a user's session open the console, nor a member's cookie open /auth/v1/me", async () => {
    const user = await f.tenant.request('POST', '/api/v1/users', {
      email: 'client@shop.example',
      name: 'Client',
      password: 'client password',
    });
    expect(user.status).toBe(201);
    const session = await f.t.inject({
      method: 'POST',
      url: '/auth/v1/sessions',
      payload: { tenant_id: f.tenant.id, email: 'client@shop.example', password: 'client password' },
    });
    expect(session.status).toBe(201);
    const userToken = session.body.data.token as string;
    const asCookie = await f.t.inject({
      method: 'GET',
      url: '/console',
      headers: { cookie: `vp_console=${userToken}` },
    });
    expect(asCookie.status).toBe(303);

    const client = consoleClient(f.t);
    await client.signIn(f.owner.email, f.owner.password);
    const me = await f.t.inject({
      method: 'GET',
      url: '/auth/v1/me',
      headers: { authorization: `Bearer ${client.sessionToken()}` },
    });
    expect(me.status).toBe(401);
  });
});
