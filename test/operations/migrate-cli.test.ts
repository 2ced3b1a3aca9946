/**
 * `npm run db:migrate` (src/cli/migrate.ts) as an operator runs it: it applies the migrations
 * once, and fails like the server does, with one plain line and no stack trace, when the data
 * directory is held by another process or a variable is invalid.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readMigrations } from '../../src/core/db/migrate.js';
import { nodeArgv } from '../support/compiled.js';
import { ENGINE } from '../support/databases.js';
import { baseEnv, REPO_ROOT } from '../support/server-process.js';

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'voiceplane-migrate-'));
  dirs.push(dir);
  return dir;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

async function runMigrate(env: Record<string, string>): Promise<Run> {
  const argv = await nodeArgv('src/cli/migrate.ts');
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      argv,
      { cwd: REPO_ROOT, env: { ...baseEnv(), ...env }, timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = error ? ((error as { code?: number }).code ?? null) : 0;
        resolve({ code: typeof code === 'number' ? code : null, stdout, stderr });
      },
    );
  });
}

const STACK_LINE = /^\s+at /m;

describe('npm run db:migrate', { timeout: 180_000 }, () => {
  // A fresh embedded database takes a while to create: once, in the embedded (default) run.
  it.skipIf(ENGINE === 'postgres')(
    'applies every migration to a fresh data directory, then has nothing to apply',
    async () => {
      const dir = dataDir();
      const first = await runMigrate({ DATA_DIR: dir });
      expect(first).toMatchObject({ code: 0, stderr: '' });
      expect(first.stdout.trim()).toBe(
        `Applied: ${readMigrations()
          .map((m) => m.name)
          .join(', ')}`,
      );
      const second = await runMigrate({ DATA_DIR: dir });
      expect(second).toMatchObject({ code: 0, stdout: 'Nothing to apply.\n', stderr: '' });
      expect(fs.existsSync(path.join(dir, 'voiceplane.lock'))).toBe(false);
    },
  );

  it('refuses a data directory held by a running process with the same clean message as the server', async () => {
    const dir = dataDir();
    const holder = spawn('sleep', ['60']);
    children.push(holder);
    const lock = path.join(dir, 'voiceplane.lock');
    fs.writeFileSync(lock, String(holder.pid));

    const run = await runMigrate({ DATA_DIR: dir });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      new RegExp(
        `^The data directory \\S+ is in use by process ${holder.pid}; stop it or set another DATA_DIR\\.`,
      ),
    );
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).not.toMatch(STACK_LINE);
    // The holder keeps its lock, and nothing was written beside it.
    expect(fs.readFileSync(lock, 'utf8')).toBe(String(holder.pid));
    expect(fs.readdirSync(dir)).toEqual(['voiceplane.lock']);
  });

  it('names an invalid variable and exits 78, like the server', async () => {
    const run = await runMigrate({ DATA_DIR: dataDir(), DATABASE_URL: 'mysql://nope' });
    expect(run.code).toBe(78);
    expect(run.stderr).toMatch(/DATABASE_URL/);
    expect(run.stderr).not.toMatch(STACK_LINE);
  });
});
