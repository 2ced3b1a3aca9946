/**
 * The embedded data directory's lock (src/core/db/lockfile.ts): one process at a time, a lock left by
 * a dead process taken over, and exactly one winner when several processes find the same stale
 * lock at once: replayed step by step for every interleaving of three contenders, and raced for
 * real by separate processes released together.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { acquireDirectoryLock, DirectoryLockedError, readDirectoryLock } from '../../src/core/db/lockfile.js';
import { nodeArgv } from '../support/compiled.js';
import { REPO_ROOT } from '../support/server-process.js';

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const child of children.splice(0)) child.kill();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'voiceplane-lock-'));
  dirs.push(dir);
  return dir;
}
/** The lock file of earlier versions (still honoured, as the first of the chain). */
const legacyLock = (dir: string) => path.join(dir, 'voiceplane.lock');
const visibleFiles = (dir: string) => fs.readdirSync(dir).filter((name) => !name.startsWith('.'));

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid as number;
}

/** A process that stays alive until the test ends: its pid stands for another voiceplane. */
function livePid(): number {
  const child = spawn('sleep', ['300']);
  children.push(child);
  return child.pid as number;
}

/** Runs `work` as if this process had `pid` (the lock writes and compares process.pid). */
function asProcess<T>(pid: number, work: () => T): T {
  const original = Object.getOwnPropertyDescriptor(process, 'pid')!;
  Object.defineProperty(process, 'pid', { ...original, value: pid });
  try {
    return work();
  } finally {
    Object.defineProperty(process, 'pid', original);
  }
}

describe('data directory lock', () => {
  it('holds our pid, is refused to nobody else while held, and says released once released', () => {
    const dir = dataDir();
    const lock = acquireDirectoryLock(dir);
    expect(readDirectoryLock(dir)).toBe(String(process.pid));
    expect(visibleFiles(dir)).toHaveLength(1);
    lock.release();
    expect(readDirectoryLock(dir)).toBe('released');
    const again = acquireDirectoryLock(dir);
    expect(readDirectoryLock(dir)).toBe(String(process.pid));
    expect(visibleFiles(dir)).toHaveLength(1);
    again.release();
  });

  it('refuses a directory locked by a live process, naming it (also a lock of an earlier version)', () => {
    const dir = dataDir();
    const holder = livePid();
    fs.writeFileSync(legacyLock(dir), String(holder));
    expect(() => acquireDirectoryLock(dir)).toThrow(DirectoryLockedError);
    expect(() => acquireDirectoryLock(dir)).toThrow(new RegExp(`in use by process ${holder}`));
    expect(readDirectoryLock(dir)).toBe(String(holder));

    const other = dataDir();
    asProcess(holder, () => acquireDirectoryLock(other));
    expect(() => acquireDirectoryLock(other)).toThrow(new RegExp(`in use by process ${holder}`));
  });

  it('takes over a lock left by a dead process, or an empty one', async () => {
    for (const content of [String(await deadPid()), '']) {
      const dir = dataDir();
      fs.writeFileSync(legacyLock(dir), content);
      const lock = acquireDirectoryLock(dir);
      expect(readDirectoryLock(dir)).toBe(String(process.pid));
      expect(visibleFiles(dir)).toHaveLength(1);
      lock.release();
    }
  });

  /**
   * Contender B runs step by step (every file-system call it makes is a step); before step `a`
   * contender A runs whole, before step `c` contender C does. Every (a, c) pair is replayed, among
   * them the interleaving that once lost a lock: A and B both find the dead process's lock, A takes it over,
   * B then acts on what it found, and C arrives in the middle of B's takeover.
   */
  it('replayed step by step: of three contenders finding one stale lock, exactly one holds the directory', async () => {
    const pids = { A: livePid(), B: livePid(), C: livePid() };
    const stale = String(await deadPid());
    const steps = [
      'readFileSync',
      'writeFileSync',
      'linkSync',
      'renameSync',
      'rmSync',
      'unlinkSync',
      'readdirSync',
      'existsSync',
    ] as const;

    /** One replay; returns who got the lock. */
    function replay(aAt: number, cAt: number): { winners: string[]; bSteps: number } {
      const dir = dataDir();
      fs.writeFileSync(legacyLock(dir), stale);
      const winners: string[] = [];
      const contend = (name: 'A' | 'B' | 'C') =>
        asProcess(pids[name], () => {
          try {
            acquireDirectoryLock(dir);
            winners.push(name);
          } catch (error) {
            if (!(error instanceof DirectoryLockedError)) throw error;
          }
        });
      let bSteps = 0;
      let inB = false;
      const originals = new Map<string, (...args: any[]) => any>();
      for (const step of steps) {
        const original = (fs as any)[step].bind(fs);
        originals.set(step, original);
        vi.spyOn(fs, step).mockImplementation(((...args: any[]) => {
          if (inB) {
            inB = false;
            try {
              if (bSteps === aAt) contend('A');
              if (bSteps === cAt) contend('C');
            } finally {
              inB = true;
            }
            bSteps++;
          }
          return original(...args);
        }) as any);
      }
      try {
        inB = true;
        contend('B');
        inB = false;
        if (aAt >= bSteps) contend('A');
        if (cAt >= bSteps) contend('C');
      } finally {
        inB = false;
        vi.restoreAllMocks();
      }
      return { winners, bSteps };
    }

    const { bSteps, winners: alone } = replay(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    expect(alone).toEqual(['B']);
    expect(bSteps).toBeGreaterThan(3);
    const failures: string[] = [];
    for (let a = 0; a <= bSteps; a++) {
      for (let c = a; c <= bSteps; c++) {
        const { winners } = replay(a, c);
        if (winners.length !== 1)
          failures.push(`A before B's step ${a}, C before ${c}: ${winners.join('+') || 'nobody'}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('gives the directory to exactly one of several processes released at once on the same stale lock', async () => {
    const contender = await nodeArgv('test/operations/fixtures/lock-contender.ts');
    for (let round = 0; round < 3; round++) {
      const dir = dataDir();
      fs.writeFileSync(legacyLock(dir), String(await deadPid()));
      const contenders = Array.from({ length: 6 }, () => {
        const child = spawn(process.execPath, [...contender, dir], {
          cwd: REPO_ROOT,
          stdio: ['pipe', 'pipe', 'inherit'],
        });
        children.push(child);
        const lines = readline.createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
        const next = async () => String((await lines.next()).value ?? 'exited');
        return { child, next };
      });
      // Every contender is loaded and waiting before any is let go.
      expect(await Promise.all(contenders.map((c) => c.next()))).toEqual(Array(6).fill('ready'));
      for (const { child } of contenders) child.stdin!.write('go\n');
      const answers = await Promise.all(contenders.map((c) => c.next()));
      expect(answers.filter((a) => a === 'locked')).toHaveLength(1);
      expect(answers.filter((a) => a === 'refused')).toHaveLength(5);
      for (const { child } of contenders) child.stdin!.end();
    }
  }, 120_000);
});
