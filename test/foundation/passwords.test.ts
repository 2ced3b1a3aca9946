/** Password hashes: scrypt, self-describing, correct under concurrency (hashes are queued per core). */
import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../../src/core/passwords.js';

describe('password hashes', () => {
  it('store scrypt with its parameters and verify only the right password', async () => {
    const stored = await hashPassword('correct horse', 1024);
    expect(stored).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(stored).not.toContain('correct horse');
    expect(await verifyPassword('correct horse', stored)).toBe(true);
    expect(await verifyPassword('correct horsE', stored)).toBe(false);
    expect(await verifyPassword('correct horse', 'bcrypt$whatever')).toBe(false);
  });

  it('many hashes at once all complete and each verifies its own password', async () => {
    const passwords = Array.from({ length: 16 }, (_, i) => `password-${i}`);
    const stored = await Promise.all(passwords.map((p) => hashPassword(p, 1024)));
    expect(new Set(stored).size).toBe(16);
    const checks = await Promise.all(stored.map((s, i) => verifyPassword(passwords[i], s)));
    expect(checks.every(Boolean)).toBe(true);
    expect(await verifyPassword(passwords[1], stored[0])).toBe(false);
  });
});
