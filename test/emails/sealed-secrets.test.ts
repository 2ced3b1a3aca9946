/**
 * Tenants' SMTP passwords at rest: sealed with SECRETS_KEY (AES-256-GCM), so the database alone
 * reveals none; the welcome email still authenticates with the real password; passwords written
 * in plain text before are sealed at start-up; a rotated key still opens what it sealed, and an
 * altered or moved value is refused.
 */
import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretBox, keyIdOf, SecretError } from '../../src/core/security/secrets.js';
import { sealStoredSmtpPasswords, smtpUrlOf } from '../../src/tenants/secrets.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createEmailTenant, postUser } from './helpers.js';
import { createSmtpServer, type TestSmtpServer } from './smtp.js';

const PASSWORD = 'pl41n-T3xt:p@ss/word';
const OLD_KEY = crypto.randomBytes(32);
const NEW_KEY = crypto.randomBytes(32);

let t: TestApp;
let smtp: TestSmtpServer;

beforeAll(async () => {
  t = await startTestApp({ env: { SECRETS_KEY: OLD_KEY.toString('hex') } });
  smtp = await createSmtpServer({ users: { mailer: PASSWORD } });
  await smtp.start();
});
afterAll(async () => {
  await t?.close();
  await smtp?.stop();
});

/** The whole tenant row as the database holds it, as text (what a dump would show). */
async function rowText(tenantId: string): Promise<string> {
  const result = await sql<{
    row: string;
  }>`SELECT t::text AS row FROM tenants t WHERE id = ${tenantId}`.execute(t.services.database.db);
  return result.rows[0].row;
}

function expectNoPassword(text: string) {
  expect(text).not.toContain(PASSWORD);
  expect(text).not.toContain(encodeURIComponent(PASSWORD));
}

describe('SMTP passwords at rest', () => {
  it('are sealed in the database, and the welcome email still signs in with the password', async () => {
    const tenant = await createEmailTenant(t, {
      smtp_url: smtp.url('mailer', PASSWORD),
      from: 'Acme <hello@acme.example>',
    });
    expectNoPassword(await rowText(tenant.id));

    const user = await postUser(tenant);
    await t.services.jobRunner.drain();
    expect(smtp.messages.filter((m) => m.envelope.to.includes(user.email))).toHaveLength(1);
    expect(smtp.logins.at(-1)).toEqual({ user: 'mailer', pass: PASSWORD });
  });

  it('written in plain text before are sealed by the start-up pass, and still deliver', async () => {
    const tenant = await createEmailTenant(t, null, 'Legacy');
    const url = smtp.url('mailer', PASSWORD);
    await sql`UPDATE tenants SET email_smtp_url = ${url}, email_from = 'old@acme.example' WHERE id = ${tenant.id}`.execute(
      t.services.database.db,
    );
    expect(await rowText(tenant.id)).toContain(encodeURIComponent(PASSWORD));

    expect(await sealStoredSmtpPasswords(t.services.database.db, t.services.secrets)).toBe(1);
    expectNoPassword(await rowText(tenant.id));
    // Nothing left to do: a second pass (another process starting) changes nothing.
    expect(await sealStoredSmtpPasswords(t.services.database.db, t.services.secrets)).toBe(0);

    const logins = smtp.logins.length;
    const user = await postUser(tenant);
    await t.services.jobRunner.drain();
    expect(smtp.messages.filter((m) => m.envelope.to.includes(user.email))).toHaveLength(1);
    expect(smtp.logins.slice(logins)).toEqual([{ user: 'mailer', pass: PASSWORD }]);
  });

  it('sealed with a previous key still open, and the start-up pass seals them again with the new key', async () => {
    const tenant = await createEmailTenant(t, {
      smtp_url: smtp.url('mailer', PASSWORD),
      from: 'Rotating <hello@acme.example>',
    });
    const read = () =>
      t.services.database.db
        .selectFrom('tenants')
        .select(['id', 'email_smtp_url', 'email_smtp_password_sealed'])
        .where('id', '=', tenant.id)
        .executeTakeFirstOrThrow();
    const before = await read();
    expect(before.email_smtp_password_sealed?.split(':')[1]).toBe(keyIdOf(OLD_KEY));

    // Only the new key: the stored password opens with nothing, and start-up refuses to go on.
    const newOnly = createSecretBox({ current: NEW_KEY, previous: [] });
    expect(() => smtpUrlOf(newOnly, before)).toThrow(SecretError);
    await expect(sealStoredSmtpPasswords(t.services.database.db, newOnly)).rejects.toThrow(
      /SECRETS_KEY_PREVIOUS/,
    );

    const rotated = createSecretBox({ current: NEW_KEY, previous: [OLD_KEY] });
    expect(smtpUrlOf(rotated, before)).toBe(smtp.url('mailer', PASSWORD));
    expect(await sealStoredSmtpPasswords(t.services.database.db, rotated)).toBeGreaterThanOrEqual(1);
    const after = await read();
    expect(after.email_smtp_password_sealed?.split(':')[1]).toBe(keyIdOf(NEW_KEY));
    expect(smtpUrlOf(newOnly, after)).toBe(smtp.url('mailer', PASSWORD));
  });
});

describe('the secret box', () => {
  const box = createSecretBox({ current: NEW_KEY, previous: [OLD_KEY] });

  it('opens what it sealed, and seals the same text differently each time', () => {
    const a = box.seal('s3cret', 'ctx');
    const b = box.seal('s3cret', 'ctx');
    expect(a).not.toBe(b);
    expect(a).toMatch(/^v1:[\w-]{8}:[\w-]{16}:[\w-]+$/);
    expect(box.open(a, 'ctx')).toBe('s3cret');
    expect(box.isCurrent(a)).toBe(true);
  });

  it('opens a value sealed with a previous key, which is not current', () => {
    const old = createSecretBox({ current: OLD_KEY, previous: [] }).seal('s3cret', 'ctx');
    expect(box.open(old, 'ctx')).toBe('s3cret');
    expect(box.isCurrent(old)).toBe(false);
  });

  it('refuses an altered ciphertext, tag or IV, another context, and garbage', () => {
    const sealed = box.seal('s3cret', 'tenants.email_smtp_password:ten_a');
    const [version, keyId, iv, body] = sealed.split(':');
    const flip = (text: string, at: number) => {
      const bytes = Buffer.from(text, 'base64url');
      bytes[at] ^= 1;
      return bytes.toString('base64url');
    };
    const bodyLength = Buffer.from(body, 'base64url').length;
    const altered = [
      [version, keyId, iv, flip(body, 0)],
      [version, keyId, iv, flip(body, bodyLength - 1)],
      [version, keyId, flip(iv, 0), body],
    ].map((parts) => parts.join(':'));
    for (const value of altered) {
      expect(() => box.open(value, 'tenants.email_smtp_password:ten_a')).toThrow(SecretError);
    }
    expect(() => box.open(sealed, 'tenants.email_smtp_password:ten_b')).toThrow(/authentication failed/);
    expect(() => box.open('smtp://plain', 'ctx')).toThrow(SecretError);
    expect(() => box.open('v1:unknown1:AAAA:AAAA', 'ctx')).toThrow(/SECRETS_KEY_PREVIOUS/);
  });
});
