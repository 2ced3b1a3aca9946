/**
 * Password hashes: Argon2id at OWASP's first recommendation (m = 19 MiB, t = 2, p = 1) through
 * @node-rs/argon2, on threads of their own below the event loop's priority (password-threads.ts),
 * so hashing never blocks the event loop. Stored in the PHC format
 * (`$argon2id$v=19$m=19456,t=2,p=1$salt$hash`), which names its own parameters. Hashes written
 * before (`scrypt$N$r$p$salt$hash`, N = 2^14, below OWASP's minimum for scrypt) still verify with
 * their own parameters; `needsRehash` tells the sign-in to replace them.
 */
import crypto from 'node:crypto';
import { parseOptions } from '@node-rs/argon2';
import { HashInputError, runHashJob } from './password-threads.js';

/** OWASP Password Storage Cheat Sheet, Argon2id, first configuration. */
export const DEFAULT_PASSWORD_MEMORY_KIB = 19456;
const TIME_COST = 2;
const PARALLELISM = 1;
// The binding's enum is a `const enum` in a .d.ts, which isolatedModules cannot read.
const ARGON2ID = 2;

let hashesStarted = 0;

/** How many new hashes this process started: what a refusal before hashing can be checked by. */
export const passwordHashesStarted = (): number => hashesStarted;

/** A new Argon2id hash; `memoryKib` is the one knob (tests lower it, see PASSWORD_HASH_MEMORY_KIB). */
export function hashPassword(password: string, memoryKib = DEFAULT_PASSWORD_MEMORY_KIB): Promise<string> {
  hashesStarted++;
  return runHashJob({
    op: 'argon2-hash',
    password,
    options: { algorithm: ARGON2ID, memoryCost: memoryKib, timeCost: TIME_COST, parallelism: PARALLELISM },
  });
}

async function verifyLegacyScrypt(password: string, stored: string): Promise<boolean> {
  const [, n, r, p, salt, hash] = stored.split('$');
  if (!salt || !hash) return false;
  const N = Number(n);
  const expected = Buffer.from(hash, 'base64');
  if (expected.length === 0) return false;
  const options = { N, r: Number(r), p: Number(p), maxmem: 256 * N * Number(r) };
  try {
    const actual = await runHashJob({
      op: 'scrypt',
      password,
      salt: Buffer.from(salt, 'base64'),
      keylen: expected.length,
      options,
    });
    return crypto.timingSafeEqual(actual, expected);
  } catch (error) {
    // Parameters scrypt refuses: a corrupt stored string matches no password. A failed hashing
    // thread is not an answer about the password.
    if (error instanceof HashInputError) return false;
    throw error;
  }
}

/** True when `password` matches `stored` (Argon2id, or a legacy scrypt hash); false for anything else. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (stored.startsWith('scrypt$')) return verifyLegacyScrypt(password, stored);
  if (!stored.startsWith('$argon2id$')) return false;
  try {
    return await runHashJob({ op: 'argon2-verify', stored, password });
  } catch (error) {
    // A malformed stored string matches no password.
    if (error instanceof HashInputError) return false;
    throw error;
  }
}

/**
 * True when `stored` is weaker than the current policy (legacy scrypt, another Argon2 variant,
 * less memory or fewer passes): the caller, holding the right password, stores a fresh hash.
 * A stronger hash is kept, so lowering the setting never weakens stored hashes.
 */
export function needsRehash(stored: string, memoryKib = DEFAULT_PASSWORD_MEMORY_KIB): boolean {
  if (!stored.startsWith('$argon2id$')) return true;
  try {
    const params = parseOptions(stored);
    return params.memoryCost < memoryKib || params.timeCost < TIME_COST;
  } catch {
    return true;
  }
}

/** A hash to compare against when the user does not exist, so both failures take the same time. */
const decoys = new Map<number, Promise<string>>();
export function decoyPasswordHash(memoryKib = DEFAULT_PASSWORD_MEMORY_KIB): Promise<string> {
  let decoy = decoys.get(memoryKib);
  if (!decoy) {
    decoy = hashPassword(crypto.randomBytes(16).toString('hex'), memoryKib);
    decoys.set(memoryKib, decoy);
    // A failed hash is not kept: the next sign-in makes the decoy again.
    decoy.catch(() => decoys.delete(memoryKib));
  }
  return decoy;
}
