/**
 * Password reset by email (/auth/v1/password-resets): the email a real SMTP server receives, the
 * link's token setting a new password once, expiry after one hour, every session signed out, and
 * the same answer (and no email) for an email that belongs to no account.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createEmailTenant, outboxRows, postUser } from '../emails/helpers.js';
import { createSmtpServer, decodeHeader, type ReceivedMessage, type TestSmtpServer } from '../emails/smtp.js';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { expectError, query } from '../support/expect.js';
import { sessionClient } from './helpers.js';

const PASSWORD = 'correct horse battery';
const NEW_PASSWORD = 'a brand new passphrase';
const clock = new ManualClock('2026-05-04T08:00:00.000Z');
let t: TestApp;
let smtp: TestSmtpServer;
let tenant: TestTenant;
let api: ReturnType<typeof sessionClient>;

beforeAll(async () => {
  t = await startTestApp({ clock });
  smtp = await createSmtpServer();
  await smtp.start();
  tenant = await createEmailTenant(t, { smtp_url: smtp.url(), from: 'Acme Voice <hello@acme.example>' });
  api = sessionClient(t);
});
afterAll(async () => {
  await t?.close();
  await smtp?.stop();
});

const resetEmailsTo = (address: string) =>
  smtp.messages.filter(
    (m) => m.envelope.to.includes(address) && decodeHeader(m.headers.subject ?? '').startsWith('Reset'),
  );

/** The link is on the tenant's client portal (no slug: its id on the platform host), never the bare host. */
function tokenIn(message: ReceivedMessage): string {
  const page = `http://voiceplane.test/portal/${tenant.id}/reset-password`;
  const match = new RegExp(`${page.replace(/[.]/g, '\\.')}#token=(vpr_[0-9A-Za-z]+)`).exec(message.text);
  if (!match) throw new Error(`no reset link in: ${message.text}`);
  expect(message.html).toContain(`href="${page}#token=${match[1]}"`);
  expect(message.text).not.toContain('http://voiceplane.test/reset-password');
  return match[1];
}

/** Asks for a reset, lets the worker run, and answers the link's token from the email received. */
async function resetTokenFor(email: string): Promise<string> {
  const before = resetEmailsTo(email).length;
  const response = await api.requestReset(tenant.id, email);
  expect(response.status, response.raw).toBe(202);
  await t.services.jobRunner.drain();
  const received = resetEmailsTo(email);
  expect(received).toHaveLength(before + 1);
  return tokenIn(received[received.length - 1]);
}

async function signedIn(email: string, password = PASSWORD): Promise<string> {
  const response = await api.signIn(tenant.id, email, password);
  expect(response.status, response.raw).toBe(201);
  return response.body.data.token;
}

describe('password reset', () => {
  it('emails a link whose token sets a new password once and signs the user out everywhere', async () => {
    const user = await postUser(tenant, { name: 'Ada Lovelace', password: PASSWORD });
    const laptop = await signedIn(user.email);
    const phone = await signedIn(user.email);

    const token = await resetTokenFor(user.email);
    const [message] = resetEmailsTo(user.email);
    expect(decodeHeader(message.headers.subject)).toBe('Reset your Acme Voice password');
    expect(message.envelope).toEqual({ from: 'hello@acme.example', to: [user.email] });
    expect(message.text).toContain('Hello Ada Lovelace,');
    expect(message.raw).not.toContain(PASSWORD);
    // Stored as its hash only.
    const stored = await query<{ token_hash: string }>(
      t,
      sql`SELECT token_hash FROM password_resets WHERE user_id = ${user.id}`,
    );
    expect(stored).toHaveLength(1);
    expect(stored[0].token_hash).not.toContain(token);
    // Once sent, the outbox keeps no usable link either.
    const sent = (await outboxRows(t, tenant.id)).filter(
      (r) => r.user_id === user.id && r.kind === 'password_reset',
    );
    expect(sent.map((r) => [r.status, r.text_body, r.html_body])).toEqual([['sent', '', '']]);

    // Nothing changed yet: the old password and both sessions still work.
    expect((await api.me(laptop)).status).toBe(200);

    const done = await api.confirmReset(token, NEW_PASSWORD);
    expect(done.status, done.raw).toBe(200);
    expect(done.body.data).toEqual({ user_id: user.id });

    expectError(await api.me(laptop), 401, 'authentication_failed');
    expectError(await api.me(phone), 401, 'authentication_failed');
    expectError(await api.signIn(tenant.id, user.email, PASSWORD), 401, 'authentication_failed');
    expect((await api.me(await signedIn(user.email, NEW_PASSWORD))).status).toBe(200);

    // Single use: the same link again changes nothing.
    expectError(await api.confirmReset(token, 'yet another passphrase'), 422, 'unprocessable_entity');
    expectError(
      await api.signIn(tenant.id, user.email, 'yet another passphrase'),
      401,
      'authentication_failed',
    );
    expect((await api.signIn(tenant.id, user.email, NEW_PASSWORD)).status).toBe(201);
  });

  it('a token is refused after one hour', async () => {
    const user = await postUser(tenant, { password: PASSWORD });
    const token = await resetTokenFor(user.email);
    clock.advance(60 * 60 * 1000 + 1);
    expectError(await api.confirmReset(token, NEW_PASSWORD), 422, 'unprocessable_entity');
    expect((await api.signIn(tenant.id, user.email, PASSWORD)).status).toBe(201);
    expectError(await api.signIn(tenant.id, user.email, NEW_PASSWORD), 401, 'authentication_failed');
  });

  it('a token still works just before its hour is up', async () => {
    const user = await postUser(tenant, { password: PASSWORD });
    const token = await resetTokenFor(user.email);
    clock.advance(60 * 60 * 1000 - 1000);
    expect((await api.confirmReset(token, NEW_PASSWORD)).status).toBe(200);
  });

  it('using one link ends the user’s other outstanding links', async () => {
    const user = await postUser(tenant, { password: PASSWORD });
    const first = await resetTokenFor(user.email);
    const second = await resetTokenFor(user.email);
    expect(second).not.toBe(first);
    expect((await api.confirmReset(second, NEW_PASSWORD)).status).toBe(200);
    expectError(await api.confirmReset(first, 'yet another passphrase'), 422, 'unprocessable_entity');
  });

  it('a too-short password is 422 validation_failed and leaves the token usable', async () => {
    const user = await postUser(tenant, { password: PASSWORD });
    const token = await resetTokenFor(user.email);
    const short = await api.confirmReset(token, 'short');
    expectError(short, 422, 'validation_failed');
    expect(short.body.error.details).toEqual([expect.objectContaining({ field: 'password' })]);
    expect((await api.confirmReset(token, NEW_PASSWORD)).status).toBe(200);
  });

  it('an unknown or malformed token is refused and changes nothing', async () => {
    for (const token of ['vpr_doesnotexist', 'vps_notareset', 'x']) {
      expectError(await api.confirmReset(token, NEW_PASSWORD), 422, 'unprocessable_entity');
    }
  });

  it('answers the same 202 for an unknown email, an unknown tenant and a tenant without email settings, and sends nothing', async () => {
    const known = await postUser(tenant, { password: PASSWORD });
    const silent = await createEmailTenant(t, null, 'No Mail Agency');
    const silentUser = await postUser(silent, { password: PASSWORD });
    await t.services.jobRunner.drain(); // the welcome emails
    const messagesBefore = smtp.messages.length;
    const answers = [
      await api.requestReset(tenant.id, known.email),
      await api.requestReset(tenant.id, 'nobody-here@client.example'),
      await api.requestReset('ten_doesnotexist00000000000', known.email),
      await api.requestReset(silent.id, silentUser.email),
    ];
    const shape = (r: (typeof answers)[number]) => ({
      status: r.status,
      body: r.body,
      headers: Object.keys(r.headers).sort(),
    });
    for (const answer of answers) expect(shape(answer)).toEqual(shape(answers[0]));
    expect(answers[0].status).toBe(202);

    await t.services.jobRunner.drain();
    // Only the known user got an email.
    expect(smtp.messages.slice(messagesBefore).map((m) => m.envelope.to)).toEqual([[known.email]]);
    expect(resetEmailsTo('nobody-here@client.example')).toHaveLength(0);
    const unknownRows = await query(
      t,
      sql`SELECT 1 FROM email_outbox WHERE to_address = 'nobody-here@client.example'`,
    );
    expect(unknownRows).toHaveLength(0);
    expect(await outboxRows(t, silent.id)).toHaveLength(0);
    expect(await query(t, sql`SELECT 1 FROM password_resets WHERE user_id = ${silentUser.id}`)).toHaveLength(
      0,
    );
  });

  it('the operator sees the reset email in the tenant’s outbox, marked as such', async () => {
    const user = await postUser(tenant, { password: PASSWORD });
    await resetTokenFor(user.email);
    const listed = await t.admin('GET', `/admin/v1/tenants/${tenant.id}/emails?limit=100`);
    expect(listed.status).toBe(200);
    const kinds = listed.body.data.filter((e: { to: string }) => e.to === user.email).map((e: any) => e.kind);
    expect(kinds.sort()).toEqual(['password_reset', 'welcome']);
    expect(listed.raw).not.toContain('vpr_');
  });

  it('a blocked or deleted user gets no email, and a link issued before the block does not work', async () => {
    const blocked = await postUser(tenant, { password: PASSWORD });
    const token = await resetTokenFor(blocked.email);
    expect((await t.admin('PATCH', `/admin/v1/users/${blocked.id}`, { status: 'blocked' })).status).toBe(200);
    expectError(await api.confirmReset(token, NEW_PASSWORD), 422, 'unprocessable_entity');
    expect((await api.requestReset(tenant.id, blocked.email)).status).toBe(202);

    const deleted = await postUser(tenant, { password: PASSWORD });
    expect((await tenant.request('DELETE', `/api/v1/users/${deleted.id}`)).status).toBe(200);
    expect((await api.requestReset(tenant.id, deleted.email)).status).toBe(202);
    await t.services.jobRunner.drain();
    expect(resetEmailsTo(blocked.email)).toHaveLength(1);
    expect(resetEmailsTo(deleted.email)).toHaveLength(0);
  });

  it('requests are rate-limited per tenant + email, whatever the email, and a refused one queues nothing', async () => {
    const email = 'flood-target@client.example';
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await api.requestReset(tenant.id, email, '198.51.100.20')).status);
    expect(statuses).toEqual([202, 202, 202, 202, 202, 429]);
    const limited = await api.requestReset(tenant.id, email.toUpperCase(), '198.51.100.21');
    expectError(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const jobs = await query(
      t,
      sql`SELECT 1 FROM jobs WHERE queue = 'sessions.password_reset' AND payload->>'email' ILIKE ${email}`,
    );
    expect(jobs).toHaveLength(5);
    // Another account from the same address is not held back by it.
    expect((await api.requestReset(tenant.id, 'someone-else@client.example', '198.51.100.20')).status).toBe(
      202,
    );
  });

  it('an SMTP outage does not fail the request; the email goes out when the server is back', async () => {
    const user = await postUser(tenant, { password: PASSWORD });
    await t.services.jobRunner.drain();
    await smtp.stop();
    try {
      expect((await api.requestReset(tenant.id, user.email)).status).toBe(202);
      await t.services.jobRunner.drain();
      expect(resetEmailsTo(user.email)).toHaveLength(0);
    } finally {
      await smtp.start();
    }
    // The retry is due after its back-off.
    clock.advance(2 * 60 * 1000);
    await t.services.jobRunner.drain();
    const [message] = resetEmailsTo(user.email);
    expect((await api.confirmReset(tokenIn(message), NEW_PASSWORD)).status).toBe(200);
  });
});
