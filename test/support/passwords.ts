/** Password hashes as older versions of the service stored them. */
import crypto from 'node:crypto';

/** A hash as the service stored it before Argon2id (scrypt, N = 2^14 by default, r = 8, p = 1). */
export function legacyScryptHash(password: string, N = 1024): string {
  const salt = crypto.randomBytes(16);
  const hash = crypto.scryptSync(password, salt, 32, { N, r: 8, p: 1, maxmem: 256 * N * 8 });
  return `scrypt$${N}$8$1$${salt.toString('base64')}$${hash.toString('base64')}`;
}
