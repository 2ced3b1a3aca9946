/**
 * What the portal's password-reset tests share: an agency with email settings pointing at the test
 * SMTP server, and the reset emails (and their links) that server received.
 */
import { expect } from 'vitest';
import { decodeHeader, type ReceivedMessage, type TestSmtpServer } from '../emails/smtp.js';
import type { TestApp } from '../support/app.js';
import type { Agency } from './helpers.js';

/** Gives the agency's tenant its own SMTP settings (a reset email goes out through them only). */
export async function withEmail(t: TestApp, agency: Agency, smtp: TestSmtpServer, from: string) {
  const patched = await t.admin('PATCH', `/admin/v1/tenants/${agency.tenant.id}`, {
    email: { smtp_url: smtp.url(), from },
  });
  expect(patched.status, patched.raw).toBe(200);
}

/** The reset emails the server received for `address`, oldest first. */
export function resetEmailsTo(smtp: TestSmtpServer, address: string): ReceivedMessage[] {
  return smtp.messages.filter(
    (m) => m.envelope.to.includes(address) && decodeHeader(m.headers.subject ?? '').startsWith('Reset'),
  );
}

/** The reset link of an email, the same in its text and its HTML. */
export function resetLinkIn(message: ReceivedMessage): URL {
  const found = /(https?:\/\/\S+?\/reset-password#token=vpr_[0-9A-Za-z]+)/.exec(message.text)?.[1];
  if (!found) throw new Error(`no reset link in: ${message.text}`);
  expect(message.html).toContain(`href="${found}"`);
  return new URL(found);
}

export const tokenOf = (link: URL) => new URLSearchParams(link.hash.slice(1)).get('token') ?? '';
