/**
 * Checks an event delivery (or a tool request: tools.ts) as the Standard Webhooks specification defines it: `webhook-signature`
 * holds one or more `v1,<base64>` HMAC-SHA256 signatures of `<webhook-id>.<webhook-timestamp>.<body>`
 * under the endpoint's secret (`whsec_<base64>`), and the timestamp must be recent, so a captured
 * delivery cannot be replayed later. Pass the raw body, before any JSON parsing.
 */
import crypto from 'node:crypto';
import { VoiceplaneSignatureError } from './errors.js';
import type { components } from './openapi.js';

export type Event = components['schemas']['Event'];

export interface VerifyEventOptions {
  /** The request body exactly as received (a string or the raw bytes). */
  payload: string | Uint8Array;
  /** The request's headers (a Headers object, or Node's `req.headers`). */
  headers: Headers | Record<string, string | string[] | undefined>;
  /** The endpoint's secret; during a rotation, both the new and the previous one. */
  secret: string | readonly (string | undefined)[];
  /** How far the timestamp may be from now (default 300 s). */
  toleranceSeconds?: number;
  /** Seconds since the epoch; for tests. */
  now?: number;
}

function header(headers: VerifyEventOptions['headers'], name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value[0] : value;
}

function keyOf(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  if (key.length === 0) throw new VoiceplaneSignatureError('The signing secret is empty or not base64.');
  return key;
}

/** The event, once its signature and timestamp check out; otherwise VoiceplaneSignatureError. */
export function verifyEvent(options: VerifyEventOptions): Event {
  return verifySigned(options) as Event;
}

/** The signed body, parsed, once its signature and timestamp check out; otherwise VoiceplaneSignatureError. */
export function verifySigned(options: VerifyEventOptions): unknown {
  const id = header(options.headers, 'webhook-id');
  const timestamp = header(options.headers, 'webhook-timestamp');
  const signatures = header(options.headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new VoiceplaneSignatureError('Missing webhook-id, webhook-timestamp or webhook-signature header.');
  }
  if (!/^\d+$/.test(timestamp))
    throw new VoiceplaneSignatureError('webhook-timestamp is not a number of seconds.');
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (Math.abs(now - Number(timestamp)) > tolerance) {
    throw new VoiceplaneSignatureError(`webhook-timestamp is more than ${tolerance} s from now.`);
  }
  const body =
    typeof options.payload === 'string' ? Buffer.from(options.payload) : Buffer.from(options.payload);
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]);
  const presented = signatures
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3), 'base64'));
  // A rotation's previous secret is often unset once it is over: an empty entry is skipped.
  const secrets = (typeof options.secret === 'string' ? [options.secret] : options.secret).filter(
    (secret): secret is string => typeof secret === 'string' && secret.length > 0,
  );
  if (secrets.length === 0) throw new VoiceplaneSignatureError('No signing secret was given.');
  const matches = secrets.some((secret) => {
    const expected = crypto.createHmac('sha256', keyOf(secret)).update(signed).digest();
    return presented.some(
      (candidate) => candidate.length === expected.length && crypto.timingSafeEqual(candidate, expected),
    );
  });
  if (!matches) throw new VoiceplaneSignatureError('No signature matches the secret.');
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    throw new VoiceplaneSignatureError('The signed body is not JSON.');
  }
}
