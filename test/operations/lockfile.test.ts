/**
 * The embedded data directory's lock (src/core/lockfile.ts): one process at a time, a lock left by
 * a dead process taken over, and exactly one winner when several processes find the same stale
 * lock at once.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireDirectoryLock, DirectoryLockedError } from '../../src/core/lockfile.js';
import { REPO_ROOT } from '../support/server-process.js';

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'voiceplane-lock-'));
  dirs.push(dir);
  return dir;
}
const lockFile = (dir: string) => path.join(dir, 'voiceplane.lock');

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid as number;
}

describe('data directory lock', () => {
  it('holds our pid, is refused to nobody else while held, and is gone once released', () => {
    const dir = dataDir();
    const lock = acquireDirectoryLock(dir);
    expect(fs.readFileSync(lockFile(dir), 'utf8')).toBe(String(process.pid));
    expect(fs.readdirSync(dir)).toEqual(['voiceplane.lock']);
    lock.release();
    expect(fs.existsSync(lockFile(dir))).toBe(false);
  });

  it('refuses a directory locked by a live process, naming it', () => {
    const dir = dataDir();
    const holder = spawn('sleep', ['30']);
    children.push(holder);
    fs.writeFileSync(lockFile(dir), String(holder.pid));
    expect(() => acquireDirectoryLock(dir)).toThrow(DirectoryLockedError);
    expect(() => acquireDirectoryLock(dir)).toThrow(new RegExp(`in use by process ${holder.pid}`));
    expect(fs.readFileSync(lockFile(dir), 'utf8')).toBe(String(holder.pid));
  });

  it('takes over a lock left by a dead process, or an empty one', async () => {
    for (const content of [String(await deadPid()), '']) {
      const dir = dataDir();
      fs.writeFileSync(lockFile(dir), content);
      const lock = acquireDirectoryLock(dir);
      expect(fs.readFileSync(lockFile(dir), 'utf8')).toBe(String(process.pid));
      expect(fs.readdirSync(dir)).toEqual(['voiceplane.lock']);
      lock.release();
    }
  });

  it('gives the directory to exactly one of several processes racing for the same stale lock', async () => {
    const run = promisify(execFile);
    for (let round = 0; round < 3; round++) {
      const dir = dataDir();
      fs.writeFileSync(lockFile(dir), String(await deadPid()));
      const startAt = Date.now() + 2500;
      const answers = await Promise.all(
        Array.from({ length: 6 }, () =>
          run(
            process.execPath,
            ['--import', 'tsx', 'test/operations/fixtures/lock-contender.ts', dir, String(startAt)],
            {
              cwd: REPO_ROOT,
            },
          ).then(({ stdout }) => stdout.trim()),
        ),
      );
      expect(answers.filter((a) => a === 'locked')).toHaveLength(1);
      expect(answers.filter((a) => a === 'refused')).toHaveLength(5);
    }
  }, 60_000);
});
