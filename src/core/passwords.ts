/**
 * Password hashes: scrypt (memory-hard), computed on libuv's thread pool so hashing never blocks
 * the event loop. Stored as `scrypt$N$r$p$salt$hash` (base64) so the cost can rise later.
 */
import crypto from 'node:crypto';
import os from 'node:os';
import { promisify } from 'node:util';

const scryptOnPool = promisify(crypto.scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: crypto.ScryptOptions,
) => Promise<Buffer>;

/**
 * At most one hash per core at a time: more would not finish sooner (each is pure CPU), but each
 * holds 128·N·r bytes (16 MiB at the default cost) and occupies a libuv thread that file and DNS
 * work also needs.
 */
const MAX_CONCURRENT_HASHES = Math.max(1, os.availableParallelism());
let hashing = 0;
const waiting: (() => void)[] = [];

async function scrypt(
  password: string,
  salt: Buffer,
  keylen: number,
  options: crypto.ScryptOptions,
): Promise<Buffer> {
  // A finishing hash hands its slot straight to the next waiter, so the count never overshoots.
  if (hashing >= MAX_CONCURRENT_HASHES) await new Promise<void>((resolve) => waiting.push(resolve));
  else hashing++;
  try {
    return await scryptOnPool(password, salt, keylen, options);
  } finally {
    const next = waiting.shift();
    if (next) next();
    else hashing--;
  }
}

const KEY_LENGTH = 32;

export async function hashPassword(password: string, cost = 16384): Promise<string> {
  const salt = crypto.randomBytes(16);
  const r = 8;
  const p = 1;
  const hash = await scrypt(password, salt, KEY_LENGTH, { N: cost, r, p, maxmem: 256 * cost * r });
  return `scrypt$${cost}$${r}$${p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const N = Number(n);
  const expected = Buffer.from(hash, 'base64');
  const actual = await scrypt(password, Buffer.from(salt, 'base64'), expected.length, {
    N,
    r: Number(r),
    p: Number(p),
    maxmem: 256 * N * Number(r),
  });
  return crypto.timingSafeEqual(actual, expected);
}

/** A hash to compare against when the user does not exist, so both failures take the same time. */
let decoyHash: Promise<string> | undefined;
export function decoyPasswordHash(cost: number): Promise<string> {
  decoyHash ??= hashPassword(crypto.randomBytes(16).toString('hex'), cost);
  return decoyHash;
}
