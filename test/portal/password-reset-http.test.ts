/**
 * A forgotten password in the portal, over HTTP: the reset email's link is on the agency's portal
 * (its slug on the platform host, or its verified domain), never on the platform's bare host; the
 * request form answers the same for a known and an unknown email and sends one email; the reset
 * page sets the password by the API's rules (once, within the hour, at least 8 characters, every
 * session signed out), refuses another agency's token, shares the API's rate limits, and answers
 * every malformed form with a page in the brand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createSmtpServer, decodeHeader, type TestSmtpServer } from '../emails/smtp.js';
import { sessionClient } from '../sessions/helpers.js';
import type { TestApp } from '../support/app.js';
import {
  type Agency,
  addDomain,
  type Client,
  createAgency,
  createClient,
  type PageResponse,
  portalClient,
  startPortalApp,
} from './helpers.js';
import { resetEmailsTo, resetLinkIn, tokenOf, withEmail } from './password-reset-helpers.js';

const NEW_PASSWORD = 'a brand new passphrase';
const CUSTOM_HOST = 'portal.globex.example';
const clock = new ManualClock('2026-05-04T08:00:00.000Z');
let t: TestApp;
let smtp: TestSmtpServer;
let acme: Agency;
let globex: Agency;
let grace: Client;
let alan: Client;
let hedy: Client;

function expectUnbranded(page: PageResponse, what: string) {
  expect(page.status, what).toBeLessThan(500);
  expect(page.body, what).not.toMatch(/voiceplane/i);
  const headers = Object.entries(page.headers).map(([name, value]) => `${name}: ${String(value)}`);
  expect(headers.join('\n'), what).not.toMatch(/voiceplane/i);
}

/** Asks for a reset on the portal at `base` (as a browser would: the form's page, then its POST). */
async function askForReset(client: ReturnType<typeof portalClient>, base: string, email: string) {
  const form = await client.get(`${base}/forgot-password`);
  expect(form.status).toBe(200);
  expectUnbranded(form, 'the request form');
  return client.post(`${base}/forgot-password`, { email });
}

/** The link of the newest reset email to `email` after the worker ran; exactly one new email. */
async function linkAfter(email: string, ask: () => Promise<PageResponse>): Promise<URL> {
  const before = resetEmailsTo(smtp, email).length;
  expect((await ask()).status).toBe(303);
  await t.services.jobRunner.drain();
  const received = resetEmailsTo(smtp, email);
  expect(received).toHaveLength(before + 1);
  return resetLinkIn(received[received.length - 1]);
}

beforeAll(async () => {
  t = await startPortalApp({ clock, env: { PASSWORD_HASH_MEMORY_KIB: '1024' } });
  smtp = await createSmtpServer();
  await smtp.start();
  acme = await createAgency(t, { name: 'Acme Dental Voice', color: '#0f766e' });
  globex = await createAgency(t, { name: 'Globex Calls', color: '#b45309', supportEmail: null });
  await withEmail(t, acme, smtp, 'Acme Dental Voice <hello@acme.example>');
  await withEmail(t, globex, smtp, 'Globex Calls <hello@globex.example>');
  grace = await createClient(t, acme, { name: 'Grace Hopper', includedMinutes: 0 });
  alan = await createClient(t, acme, { name: 'Alan Turing', includedMinutes: 0 });
  hedy = await createClient(t, globex, { name: 'Hedy Lamarr', includedMinutes: 0 });
  await t.services.jobRunner.drain();
});
afterAll(async () => {
  await t?.close();
  await smtp?.stop();
});

describe('asking for a reset', () => {
  it('answers a known and an unknown email alike, and emails the known one a link on the portal', async () => {
    const client = portalClient(t);
    const signIn = await client.get(`${acme.base}/sign-in`);
    expect(signIn.body).toContain(`<a href="${acme.base}/forgot-password">Forgot your password?</a>`);

    const before = smtp.messages.length;
    const known = await askForReset(client, acme.base, grace.email);
    const unknown = await askForReset(client, acme.base, 'nobody@client.example');
    // A user of another agency is nobody here.
    const foreign = await askForReset(client, acme.base, hedy.email);
    for (const answer of [known, unknown, foreign]) {
      expect(answer.status).toBe(303);
      expect(answer.headers.location).toBe(`${acme.base}/forgot-password/sent`);
      expect(answer.headers['set-cookie']).toBeUndefined();
      expect(answer.body).toBe('');
    }
    const sent = await client.get(`${acme.base}/forgot-password/sent`);
    expect(sent.status).toBe(200);
    expect(sent.body).toContain('If an account here uses the address you entered');
    expectUnbranded(sent, 'the sent page');

    await t.services.jobRunner.drain();
    expect(smtp.messages.slice(before).map((m) => m.envelope.to)).toEqual([[grace.email]]);
    const [message] = resetEmailsTo(smtp, grace.email);
    expect(decodeHeader(message.headers.subject)).toBe('Reset your Acme Dental Voice password');
    const link = resetLinkIn(message);
    expect(`${link.origin}${link.pathname}`).toBe(
      `http://voiceplane.test/portal/${acme.slug}/reset-password`,
    );
    expect(link.hash).toMatch(/^#token=vpr_[0-9A-Za-z]{40}$/);
    expect(message.text).not.toContain('http://voiceplane.test/reset-password');
    expect(message.raw).not.toMatch(/voiceplane\.test\/reset-password/);
  });

  it('is limited like POST /auth/v1/password-resets, in the same buckets: a 429 page in the brand', async () => {
    const client = portalClient(t);
    const email = 'limited@client.example';
    for (let i = 0; i < 5; i++) expect((await askForReset(client, acme.base, email)).status).toBe(303);
    const refused = await askForReset(client, acme.base, email);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body).toContain('Too many reset requests.');
    expect(refused.body).toContain(`value="${email}"`);
    expectUnbranded(refused, 'the 429 page');
    // The API counts in the same bucket (the same tenant and email, any case).
    const api = await sessionClient(t).requestReset(acme.tenant.id, email.toUpperCase());
    expect(api.status).toBe(429);
    // Another email is its own bucket.
    expect((await askForReset(client, acme.base, 'other@client.example')).status).toBe(303);
  });

  it('a malformed email is the form again with the reason beside the field, never a 500', async () => {
    const client = portalClient(t);
    for (const email of ['not an email', '', 'a\u0000b@client.example', 'x'.repeat(300)]) {
      const answer = await askForReset(client, acme.base, email);
      expect(answer.status, email).toBe(422);
      expect(answer.body).toContain('aria-invalid="true"');
      expect(answer.body).toContain('id="email-error"');
      expectUnbranded(answer, 'the refused request');
    }
    // Without the form's CSRF token nothing is queued.
    const forged = await client.post(`${acme.base}/forgot-password`, { email: grace.email }, { csrf: false });
    expect(forged.status).toBe(403);
    expectUnbranded(forged, 'the forged request');
  });
});

describe('the reset page', () => {
  it('loads its one script from the portal’s own assets and says what to do without scripts', async () => {
    const client = portalClient(t);
    const page = await client.get(`${acme.base}/reset-password`);
    expect(page.status).toBe(200);
    expectUnbranded(page, 'the reset page');
    const scripts = [...page.body.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
    expect(scripts).toEqual([
      expect.stringMatching(
        new RegExp(`^<script src="${acme.base}/assets/reset-password\\.js\\?v=\\w+" defer>$`),
      ),
    ]);
    expect(page.body).toMatch(/<noscript>.*needs JavaScript.*<\/noscript>/s);
    expect(page.body).toMatch(/<form id="reset-form"[^>]* hidden>/);
    expect(String(page.headers['content-security-policy'])).toContain("script-src 'self'");

    const src = /<script src="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const asset = await client.get(src);
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(asset.body).toContain("get('token')");
    expectUnbranded(asset, 'the script');
  });

  it('sets the new password once, by the API’s rules, and signs the user out everywhere', async () => {
    const client = portalClient(t);
    expect((await client.signIn(acme.base, grace.email, grace.password)).status).toBe(303);
    const api = sessionClient(t);
    const apiSession = (await api.signIn(acme.tenant.id, grace.email, grace.password)).body.data.token;
    const token = tokenOf(await linkAfter(grace.email, () => askForReset(client, acme.base, grace.email)));

    await client.get(`${acme.base}/reset-password`);
    const reset = (fields: Record<string, string>, options?: { csrf?: false }) =>
      client.post(`${acme.base}/reset-password`, { token, ...fields }, options);

    const forged = await reset(
      { password: NEW_PASSWORD, password_confirmation: NEW_PASSWORD },
      { csrf: false },
    );
    expect(forged.status).toBe(403);
    const short = await reset({ password: 'short', password_confirmation: 'short' });
    expect(short.status).toBe(422);
    expect(short.body).toContain('Choose a password of at least 8 characters.');
    // The token stays in the form (and usable), the form shown without any script.
    expect(short.body).toContain(`name="token" value="${token}"`);
    expect(short.body).not.toMatch(/<form id="reset-form"[^>]* hidden>/);
    expectUnbranded(short, 'the short password');
    const differ = await reset({ password: NEW_PASSWORD, password_confirmation: `${NEW_PASSWORD}!` });
    expect(differ.status).toBe(422);
    expect(differ.body).toContain('The two passwords differ');
    expect((await api.me(apiSession)).status).toBe(200);

    const done = await reset({ password: NEW_PASSWORD, password_confirmation: NEW_PASSWORD });
    expect(done.status).toBe(303);
    expect(done.headers.location).toBe(`${acme.base}/sign-in`);
    expect(client.sessionCookie()).toBeUndefined();
    const signInPage = await client.get(`${acme.base}/sign-in`);
    expect(signInPage.body).toContain('Your new password is set, and you are signed out everywhere.');
    expect((await api.me(apiSession)).status).toBe(401);

    expect((await client.signIn(acme.base, grace.email, grace.password)).status).toBe(401);
    expect((await client.signIn(acme.base, grace.email, NEW_PASSWORD)).status).toBe(303);
    grace.password = NEW_PASSWORD;

    const again = await reset({
      password: 'yet another passphrase',
      password_confirmation: 'yet another passphrase',
    });
    expect(again.status).toBe(422);
    expect(again.body).toContain('This link no longer works');
    expectUnbranded(again, 'the used link');
    expect((await api.signIn(acme.tenant.id, grace.email, NEW_PASSWORD)).status).toBe(201);
  });

  it('refuses another agency’s token, which still works on its own portal', async () => {
    const globexClient = portalClient(t);
    const token = tokenOf(
      await linkAfter(hedy.email, () => askForReset(globexClient, globex.base, hedy.email)),
    );
    const acmeClient = portalClient(t);
    await acmeClient.get(`${acme.base}/reset-password`);
    const fields = { token, password: NEW_PASSWORD, password_confirmation: NEW_PASSWORD };
    const refused = await acmeClient.post(`${acme.base}/reset-password`, fields);
    expect(refused.status).toBe(422);
    expect(refused.body).toContain('This link no longer works');
    await globexClient.get(`${globex.base}/reset-password`);
    expect((await globexClient.post(`${globex.base}/reset-password`, fields)).status).toBe(303);
    hedy.password = NEW_PASSWORD;
  });

  it('answers malformed forms with a page in the brand', async () => {
    const client = portalClient(t);
    await client.get(`${acme.base}/reset-password`);
    const cases: [Record<string, string>, number][] = [
      [{ password: NEW_PASSWORD, password_confirmation: NEW_PASSWORD }, 422],
      [{ token: '', password: NEW_PASSWORD }, 422],
      [{ token: 'vpr_unknown', password: NEW_PASSWORD, password_confirmation: NEW_PASSWORD }, 422],
      [
        { token: `vpr_${'x'.repeat(2000)}`, password: NEW_PASSWORD, password_confirmation: NEW_PASSWORD },
        422,
      ],
      [{ token: 'vpr_\u0000', password: NEW_PASSWORD, password_confirmation: NEW_PASSWORD }, 422],
      [
        { token: 'vpr_unknown', password: 'a\u0000bcdefghij', password_confirmation: 'a\u0000bcdefghij' },
        422,
      ],
      [{ token: 'vpr_unknown', password: 'p'.repeat(1100), password_confirmation: 'p'.repeat(1100) }, 422],
    ];
    for (const [fields, status] of cases) {
      const answer = await client.post(`${acme.base}/reset-password`, fields);
      expect(answer.status, JSON.stringify(fields).slice(0, 80)).toBe(status);
      expectUnbranded(answer, 'a malformed reset');
    }
    // Repeated fields: the first value counts.
    const repeated = await t.app.inject({
      method: 'POST',
      url: `${acme.base}/reset-password`,
      headers: {
        host: 'voiceplane.test',
        'content-type': 'application/x-www-form-urlencoded',
        cookie: [...client.cookies].map(([key, c]) => `${key.split('@')[0]}=${c.value}`).join('; '),
      },
      payload: `_csrf=${client.csrfToken()}&token=vpr_a&token=vpr_b&password=x&password=y`,
    });
    expect(repeated.statusCode).toBe(422);
  });
});

describe('on a verified custom domain', () => {
  it('the link is https://<domain>/portal/reset-password#token=…, and the page there sets the password', async () => {
    await addDomain(t, globex.tenant.id, CUSTOM_HOST, true);
    const client = portalClient(t, CUSTOM_HOST);
    const link = await linkAfter(hedy.email, () => askForReset(client, '/portal', hedy.email));
    expect(`${link.origin}${link.pathname}`).toBe(`https://${CUSTOM_HOST}/portal/reset-password`);
    expect(link.hash).toMatch(/^#token=vpr_/);

    const page = await client.get(link.pathname);
    expect(page.status).toBe(200);
    expect(page.body).toContain('action="/portal/reset-password"');
    expect(page.body).toContain('src="/portal/assets/reset-password.js?v=');
    expectUnbranded(page, 'the reset page on the custom domain');
    const fields = {
      token: tokenOf(link),
      password: 'custom domain pass',
      password_confirmation: 'custom domain pass',
    };
    const done = await client.post('/portal/reset-password', fields);
    expect(done.status).toBe(303);
    expect(done.headers.location).toBe('/portal/sign-in');
    expect((await client.signIn('/portal', hedy.email, 'custom domain pass')).status).toBe(303);
  });
});

describe('expiry', () => {
  it('a link is refused after its hour, and the password stays', async () => {
    const client = portalClient(t);
    const token = tokenOf(await linkAfter(alan.email, () => askForReset(client, acme.base, alan.email)));
    clock.advance(60 * 60 * 1000 + 1);
    await client.get(`${acme.base}/reset-password`);
    const late = await client.post(`${acme.base}/reset-password`, {
      token,
      password: NEW_PASSWORD,
      password_confirmation: NEW_PASSWORD,
    });
    expect(late.status).toBe(422);
    expect(late.body).toContain('This link no longer works');
    expect((await client.signIn(acme.base, alan.email, alan.password)).status).toBe(303);
  });
});
