/**
 * scripts/build-if-stale.mjs, run before `npm start` and `npm run db:migrate`: tsc runs when
 * dist/ is missing or its sources changed, never otherwise; without tsc (a production install
 * without dev dependencies) it says what to do. Each case runs the real script from a copy of
 * the repository's layout whose `tsc` is a stand-in that records its runs and writes dist/.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/server-process.js';

const roots: string[] = [];
afterEach(() => {
  for (const dir of roots.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const FAKE_TSC = `
const fs = require('node:fs');
const path = require('node:path');
fs.appendFileSync('tsc-runs.log', process.argv.slice(2).join(' ') + '\\n');
if (process.env.FAKE_TSC_FAIL) process.exit(2);
fs.mkdirSync('dist', { recursive: true });
fs.writeFileSync(path.join('dist', 'server.js'), '// built\\n');
`;

function write(root: string, file: string, text: string) {
  fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  fs.writeFileSync(path.join(root, file), text);
}

/** A project with the script, two sources, the tsconfig files and a stand-in tsc. */
function project(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'voiceplane-build-'));
  roots.push(root);
  fs.mkdirSync(path.join(root, 'scripts'));
  fs.copyFileSync(
    path.join(REPO_ROOT, 'scripts/build-if-stale.mjs'),
    path.join(root, 'scripts/build-if-stale.mjs'),
  );
  write(root, 'src/server.ts', 'export {};\n');
  write(root, 'src/core/config/config.ts', 'export const a = 1;\n');
  write(root, 'tsconfig.json', '{}\n');
  write(root, 'tsconfig.build.json', '{}\n');
  write(root, 'node_modules/typescript/bin/tsc', FAKE_TSC);
  return root;
}

function run(root: string, args: string[] = [], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['scripts/build-if-stale.mjs', ...args],
      { cwd: root, env: { ...process.env, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const tscRuns = (root: string) =>
  fs.existsSync(path.join(root, 'tsc-runs.log'))
    ? fs.readFileSync(path.join(root, 'tsc-runs.log'), 'utf8').trim().split('\n')
    : [];

/** Moves a file's modification time, as an editor saving it would. */
function touch(root: string, file: string, secondsAhead = 10) {
  const at = new Date(Date.now() + secondsAhead * 1000);
  fs.utimesSync(path.join(root, file), at, at);
}

describe('build-if-stale', () => {
  it('builds when dist/ is missing, skips tsc on the next run, and builds again after a source changes', async () => {
    const root = project();
    const first = await run(root);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('dist/ is missing');
    expect(tscRuns(root)).toEqual(['-p tsconfig.build.json']);

    const second = await run(root);
    expect(second).toMatchObject({ code: 0, stdout: 'dist/ is up to date with src/: no build needed.\n' });
    expect(tscRuns(root)).toHaveLength(1);

    touch(root, 'src/core/config/config.ts');
    const third = await run(root);
    expect(third.code).toBe(0);
    expect(third.stdout).toContain('src/ changed since the last build');
    expect(tscRuns(root)).toHaveLength(2);
    expect((await run(root)).code).toBe(0);
    expect(tscRuns(root)).toHaveLength(2);
  });

  it('counts new and deleted sources, the tsconfig files, and a file brought back with an older time', async () => {
    const root = project();
    await run(root);
    const changes = [
      () => write(root, 'src/core/extra.ts', 'export {};\n'),
      () => fs.rmSync(path.join(root, 'src/core/extra.ts')),
      () => touch(root, 'tsconfig.build.json'),
      () => touch(root, 'src/server.ts', -3600),
    ];
    for (const [index, change] of changes.entries()) {
      change();
      expect((await run(root)).code).toBe(0);
      expect(tscRuns(root)).toHaveLength(index + 2);
    }
    expect((await run(root)).code).toBe(0);
    expect(tscRuns(root)).toHaveLength(changes.length + 1);
  });

  it('always builds with --force (npm run build)', async () => {
    const root = project();
    await run(root);
    await run(root, ['--force']);
    expect(tscRuns(root)).toHaveLength(2);
  });

  it('after a failed build, exits non-zero and tries again on the next run', async () => {
    const root = project();
    await run(root);
    touch(root, 'src/server.ts');
    const failed = await run(root, [], { FAKE_TSC_FAIL: '1' });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('tsc failed');
    expect((await run(root)).stdout).toContain('src/ changed since the last build');
    expect(tscRuns(root)).toHaveLength(3);
  });

  it('without tsc (npm ci --omit=dev) runs an up-to-date dist/, and says what to do otherwise', async () => {
    const root = project();
    await run(root);
    fs.rmSync(path.join(root, 'node_modules'), { recursive: true });
    expect(await run(root)).toMatchObject({ code: 0, stderr: '' });

    touch(root, 'src/server.ts');
    const stale = await run(root);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('src/ changed since the last build and TypeScript is not installed');
    expect(stale.stderr).toContain('npm ci --omit=dev');
    expect(stale.stderr).toContain('node dist/server.js');

    fs.rmSync(path.join(root, 'dist'), { recursive: true });
    const missing = await run(root);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('dist/ is missing and TypeScript is not installed');
    expect(missing.stderr).toContain('npm run build');
  });
});
