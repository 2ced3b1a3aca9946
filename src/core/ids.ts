/** Opaque, prefixed identifiers and secrets (decisions.md §2). */
import crypto from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` characters drawn uniformly from base62 (rejection sampling keeps it unbiased). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of crypto.randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export type IdPrefix =
  | 'usr'
  | 'plan'
  | 'sub'
  | 'agt'
  | 'call'
  | 'key'
  | 'ten'
  | 'ses'
  | 'cred'
  | 'eml'
  | 'inv'
  | 'pm'
  | 'cus';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(24)}`;
}

/** Webhook ids are credentials: 32 base62 characters, about 190 bits. */
export function newWebhookId(): string {
  return `webh_${randomBase62(32)}`;
}

export function sha256Hex(value: string): string {
  return crypto.createHash('sha256').update(value).digest('hex');
}
