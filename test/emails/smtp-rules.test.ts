/** The rules behind delivery, without a server: retry or give up, and failure reasons without secrets. */
import { describe, expect, it } from 'vitest';
import {
  MAX_SEND_ATTEMPTS,
  messageIdFor,
  RETRY_BASE_MS,
  RETRY_MAX_MS,
  retryDelayMs,
} from '../../src/emails/service.js';
import {
  describeSmtpFailure,
  isPermanentSmtpFailure,
  transportOptions,
} from '../../src/emails/transports.js';

describe('isPermanentSmtpFailure', () => {
  it.each([
    [{ code: 'EENVELOPE', responseCode: 550, command: 'RCPT TO' }, true],
    [{ code: 'EMESSAGE', responseCode: 554, command: 'DATA' }, true],
    [{ code: 'EAUTH', responseCode: 535, command: 'AUTH PLAIN' }, true],
    [{ code: 'EAUTH' }, true],
    [{ code: 'ENOAUTH' }, true],
    [{ code: 'EAUTH', responseCode: 454 }, false],
    [{ code: 'EENVELOPE', responseCode: 450, command: 'RCPT TO' }, false],
    [{ code: 'EMESSAGE', responseCode: 451 }, false],
    [{ code: 'EPROTOCOL', responseCode: 503 }, false],
    [{ code: 'ECONNECTION', responseCode: 421 }, false],
    [{ code: 'ESOCKET' }, false],
    [{ code: 'ETIMEDOUT' }, false],
    [{ code: 'EDNS' }, false],
    [{ code: 'ETLS' }, false],
    [{ code: 'EABORT' }, false],
    [new Error('anything else'), false],
  ])('%o → permanent: %s', (error, permanent) => {
    expect(isPermanentSmtpFailure(error)).toBe(permanent);
  });
});

describe('describeSmtpFailure', () => {
  const url = 'smtps://mailer%40acme.example:p%40ss%2Fw0rd!@smtp.acme.example:465';
  const pass = 'p@ss/w0rd!';

  it('removes the password in every form it could appear in', () => {
    const plainAuth = Buffer.from(`\u0000mailer@acme.example\u0000${pass}`).toString('base64');
    const error = Object.assign(
      new Error(
        `Invalid login: 535 failed for ${url} pass=${pass} enc=${encodeURIComponent(pass)} b64=${Buffer.from(pass).toString('base64')} plain=${plainAuth} other=smtp://bob:hunter2@x.example`,
      ),
      { code: 'EAUTH', responseCode: 535 },
    );
    const reason = describeSmtpFailure(error, url);
    expect(reason).toContain('Invalid login: 535');
    expect(reason).toContain('EAUTH');
    for (const secret of [
      pass,
      encodeURIComponent(pass),
      'p%40ss',
      Buffer.from(pass).toString('base64'),
      plainAuth,
      'hunter2',
    ]) {
      expect(reason).not.toContain(secret);
    }
  });

  it('keeps only the codes when the password is too short to search for', () => {
    const error = Object.assign(new Error('535 rejected xy'), { code: 'EAUTH', responseCode: 535 });
    expect(describeSmtpFailure(error, 'smtp://u:xy@h.example')).toBe('EAUTH 535');
  });

  it('is one line of at most 500 characters', () => {
    const reason = describeSmtpFailure(new Error(`a\r\nb ${'x'.repeat(2000)}`), 'smtp://h.example');
    expect(reason).not.toMatch(/[\r\n]/);
    expect(reason.length).toBeLessThanOrEqual(500);
  });
});

describe('transportOptions', () => {
  it('reads host, port, TLS mode and percent-encoded credentials from the URL', () => {
    expect(transportOptions('smtps://mailer%40acme.example:p%40ss@smtp.acme.example')).toMatchObject({
      host: 'smtp.acme.example',
      port: 465,
      secure: true,
      auth: { user: 'mailer@acme.example', pass: 'p@ss' },
      pool: true,
      maxRequeues: 0,
    });
    expect(transportOptions('smtp://[::1]:2525')).toMatchObject({
      host: '::1',
      port: 2525,
      secure: false,
      auth: undefined,
    });
    expect(transportOptions('smtp://relay.example').port).toBe(587);
  });
});

describe('back-off schedule', () => {
  it('doubles from 30 s up to 30 min and spans more than an hour before giving up', () => {
    const delays = Array.from({ length: MAX_SEND_ATTEMPTS - 1 }, (_, i) => retryDelayMs(i + 1, () => 0));
    expect(delays[0]).toBe(RETRY_BASE_MS);
    expect(delays[1]).toBe(2 * RETRY_BASE_MS);
    expect(Math.max(...delays)).toBe(RETRY_MAX_MS);
    expect(delays.reduce((a, b) => a + b, 0)).toBeGreaterThan(60 * 60_000);
    expect(retryDelayMs(1, () => 0.999)).toBeLessThanOrEqual(RETRY_BASE_MS * 1.1);
  });

  it('derives the Message-ID from the outbox id and the sender domain only', () => {
    expect(messageIdFor('eml_abc', 'Acme <Hello@Acme.Example>')).toBe('<eml_abc@acme.example>');
    expect(messageIdFor('eml_abc', 'hello@acme.example')).toBe('<eml_abc@acme.example>');
    expect(messageIdFor('eml_abc', 'weird@[127.0.0.1]')).toBe('<eml_abc@voiceplane.invalid>');
  });
});
