/**
 * Password hashes: Argon2id (OWASP's m = 19 MiB, t = 2, p = 1 by default), self-describing,
 * correct under concurrency; legacy scrypt hashes still verify and are marked for rehashing.
 */
import fs from 'node:fs';
import os from 'node:os';
import { describe, expect, it, vi } from 'vitest';
import { runHashJob, stopHashThreads } from '../../src/core/security/password-threads.js';
import {
  DEFAULT_PASSWORD_MEMORY_KIB,
  decoyPasswordHash,
  hashPassword,
  needsRehash,
  verifyPassword,
} from '../../src/core/security/passwords.js';
import { legacyScryptHash } from '../support/passwords.js';

/** The nice value of one of this process's threads (Linux: /proc/self/task/<tid>/stat, field 19). */
function niceOf(task: string): number {
  const stat = fs.readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

function lowestPriorityThreads(): string[] {
  return fs.readdirSync('/proc/self/task').filter((task) => {
    try {
      return niceOf(task) === 19;
    } catch {
      return false; // the thread ended between the listing and the read
    }
  });
}

describe('password hashes', () => {
  it('store Argon2id with its parameters and verify only the right password', async () => {
    const stored = await hashPassword('correct horse', 1024);
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=1024,t=2,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    expect(stored).not.toContain('correct horse');
    expect(await verifyPassword('correct horse', stored)).toBe(true);
    expect(await verifyPassword('correct horsE', stored)).toBe(false);
    expect(await verifyPassword('correct horse', 'bcrypt$whatever')).toBe(false);
    expect(await verifyPassword('correct horse', '$argon2id$garbage')).toBe(false);
  });

  it('default to OWASP’s first Argon2id configuration: 19 MiB, 2 passes, 1 lane', async () => {
    expect(DEFAULT_PASSWORD_MEMORY_KIB).toBe(19456);
    expect(await hashPassword('correct horse')).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  it('verify a legacy scrypt hash as it is, and mark it (and weaker Argon2id) for rehashing', async () => {
    const legacy = legacyScryptHash('open sesame');
    expect(await verifyPassword('open sesame', legacy)).toBe(true);
    expect(await verifyPassword('open sesamE', legacy)).toBe(false);
    expect(await verifyPassword('open sesame', 'scrypt$1000$8$1$c2FsdA==$aGFzaA==')).toBe(false);
    expect(needsRehash(legacy, 1024)).toBe(true);
    const weak = await hashPassword('open sesame', 1024);
    expect(needsRehash(weak, 1024)).toBe(false);
    expect(needsRehash(weak, 2048)).toBe(true);
    // A stronger hash than the setting asks for is kept.
    expect(needsRehash(await hashPassword('open sesame', 2048), 1024)).toBe(false);
  });

  it('the decoy is an Argon2id hash at the same setting that no guessed password matches', async () => {
    const decoy = await decoyPasswordHash(1024);
    expect(decoy).toMatch(/^\$argon2id\$v=19\$m=1024,t=2,p=1\$/);
    expect(await decoyPasswordHash(1024)).toBe(decoy);
    expect(await verifyPassword('', decoy)).toBe(false);
    expect(await verifyPassword('correct horse', decoy)).toBe(false);
  });

  it('many hashes at once all complete and each verifies its own password', async () => {
    const passwords = Array.from({ length: 16 }, (_, i) => `password-${i}`);
    const stored = await Promise.all(passwords.map((p) => hashPassword(p, 1024)));
    expect(new Set(stored).size).toBe(16);
    const checks = await Promise.all(stored.map((s, i) => verifyPassword(passwords[i], s)));
    expect(checks.every(Boolean)).toBe(true);
    expect(await verifyPassword(passwords[1], stored[0])).toBe(false);
  });

  it('hash off the event loop: timers keep firing while a full-cost hash runs', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      const started = ticks;
      await hashPassword('correct horse');
      // A hash on the main thread would let no timer fire until it returned.
      expect(ticks - started).toBeGreaterThan(0);
    } finally {
      clearInterval(timer);
    }
  });

  // Linux keeps a nice value per thread; a run already at nice 19 could not tell the threads apart.
  const threadPrioritiesVisible = process.platform === 'linux' && os.getPriority() !== 19;

  it.skipIf(!threadPrioritiesVisible)(
    'hash on threads of their own at the lowest priority, at most one per core, the event loop left at its own',
    async () => {
      await Promise.all(Array.from({ length: 8 }, (_, i) => hashPassword(`password-${i}`, 1024)));
      const hashing = lowestPriorityThreads();
      expect(hashing.length).toBeGreaterThan(0);
      expect(hashing.length).toBeLessThanOrEqual(os.availableParallelism());
      expect(niceOf(String(process.pid))).not.toBe(19);
    },
  );

  it.skipIf(process.platform !== 'linux')(
    'stop idle hashing threads, and start them again for the next hash',
    async () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      try {
        // Every thread gets work, so each one's idle timer is set on the fake clock.
        const jobs = 2 * os.availableParallelism();
        await Promise.all(
          Array.from({ length: jobs }, (_, i) => hashPassword(`before the pause ${i}`, 1024)),
        );
        expect(lowestPriorityThreads().length).toBeGreaterThan(0);
        vi.advanceTimersByTime(30_000);
        await vi.waitFor(() => expect(lowestPriorityThreads()).toHaveLength(0), {
          interval: 10,
          timeout: 5_000,
        });
      } finally {
        vi.useRealTimers();
      }
      expect(await verifyPassword('after the pause', await hashPassword('after the pause', 1024))).toBe(true);
    },
  );

  it('a hash lost with its thread fails as 503 (never as a wrong password), and the next one gets a new thread', async () => {
    const stored = await hashPassword('right password');
    // Several full-cost checks queued on each thread: the last ones are surely still waiting.
    const checks = Array.from({ length: 4 * os.availableParallelism() }, () =>
      verifyPassword('right password', stored).then(
        (match) => ({ match }),
        (error: { code?: string; status?: number }) => ({ error }),
      ),
    );
    await stopHashThreads();
    const outcomes = await Promise.all(checks);
    expect(outcomes.at(-1)).toMatchObject({ error: { code: 'service_unavailable', status: 503 } });
    for (const outcome of outcomes) {
      if ('match' in outcome) expect(outcome.match).toBe(true);
      else expect(outcome.error).toMatchObject({ code: 'service_unavailable', status: 503 });
    }
    expect(await verifyPassword('right password', stored)).toBe(true);
  });

  it('a job that waited past its deadline for a thread is dropped with a 503, not run', async () => {
    const stored = await hashPassword('some password', 1024);
    // Every thread busy with two full-cost hashes, then a job allowed to wait 1 ms behind them.
    const busy = Array.from({ length: 2 * os.availableParallelism() }, (_, i) => hashPassword(`busy ${i}`));
    const late = runHashJob({ op: 'argon2-verify', stored, password: 'some password' }, 1);
    await expect(late).rejects.toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(await Promise.all(busy)).toHaveLength(2 * os.availableParallelism());
  });

  it('a hash the binding refuses rejects with its reason, and the threads keep serving', async () => {
    // Argon2 needs at least 8 KiB per lane; the configuration check (1,024 KiB minimum) is bypassed here.
    await expect(hashPassword('too little memory', 1)).rejects.toThrow(/memory/i);
    expect(await verifyPassword('still works', await hashPassword('still works', 1024))).toBe(true);
  });
});
