/** Opaque, prefixed identifiers and secrets (docs/design-choices.md). */
import crypto from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * CSPRNG bytes drawn 4 KiB at a time: one `randomFillSync` per ~100 ids instead of one per id
 * (every request draws a request id). Each byte is handed out once.
 */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomByte(): number {
  if (poolOffset === pool.length) {
    crypto.randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++];
}

/** `length` characters drawn uniformly from base62 (rejection sampling keeps it unbiased). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
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
  | 'pwr'
  | 'cred'
  | 'eml'
  | 'inv'
  | 'pm'
  | 'cus'
  | 'we'
  | 'evt'
  | 'del'
  | 'mem'
  | 'mses'
  | 'minv'
  | 'dom'
  | 'top'
  | 'ovg'
  | 'cmp'
  | 'wled'
  | 'stf'
  | 'stfs'
  | 'stfi'
  | 'aud';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(24)}`;
}

/** A request id (`req_…`, docs/design-choices.md) for an answer that brought none we may echo. */
export function newRequestId(): string {
  return `req_${randomBase62(20)}`;
}

/** Webhook ids are credentials: 32 base62 characters, about 190 bits. */
export function newWebhookId(): string {
  return `webh_${randomBase62(32)}`;
}

export function sha256Hex(value: string): string {
  return crypto.createHash('sha256').update(value).digest('hex');
}
