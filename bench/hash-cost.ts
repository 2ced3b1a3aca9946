/**
 * `npx tsx bench/hash-cost.ts [rounds]`: CPU time per password hash of Argon2id at OWASP's first
 * configuration against the scrypt settings OWASP calls equivalent, one hash at a time, and the
 * event loop's delay while they run (the hashes run on libuv's pool, so it stays small).
 */
import crypto from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { hash } from '@node-rs/argon2';

const scrypt = promisify(crypto.scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: crypto.ScryptOptions,
) => Promise<Buffer>;

const candidates: { name: string; run: () => Promise<unknown> }[] = [
  {
    name: 'argon2id m=19456 KiB, t=2, p=1 (new default)',
    run: () =>
      hash('correct horse battery', { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 }),
  },
  {
    name: 'scrypt N=2^17, r=8, p=1 (128 MiB)',
    run: () =>
      scrypt('correct horse battery', crypto.randomBytes(16), 32, {
        N: 2 ** 17,
        r: 8,
        p: 1,
        maxmem: 2 ** 28,
      }),
  },
  {
    name: 'scrypt N=2^14, r=8, p=5 (16 MiB)',
    run: () =>
      scrypt('correct horse battery', crypto.randomBytes(16), 32, {
        N: 2 ** 14,
        r: 8,
        p: 5,
        maxmem: 2 ** 25,
      }),
  },
  {
    name: 'scrypt N=2^14, r=8, p=1 (the old default, below OWASP)',
    run: () =>
      scrypt('correct horse battery', crypto.randomBytes(16), 32, {
        N: 2 ** 14,
        r: 8,
        p: 1,
        maxmem: 2 ** 25,
      }),
  },
];

async function main() {
  const rounds = Number(process.argv[2] ?? 20);
  for (const candidate of candidates) {
    await candidate.run();
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < rounds; i++) await candidate.run();
    const wall = (performance.now() - started) / rounds;
    const used = process.cpuUsage(cpu);
    delay.disable();
    const cpuMs = (used.user + used.system) / 1000 / rounds;
    console.log(
      `${candidate.name.padEnd(56)} CPU ${cpuMs.toFixed(1).padStart(6)} ms/hash, wall ${wall.toFixed(1).padStart(6)} ms, ` +
        `event-loop delay p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms`,
    );
  }
}

void main();
