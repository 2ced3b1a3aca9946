/**
 * The `voiceplane` command as an operator runs it (`runCli`, what dist/cli/main.js runs, or a real
 * process where that is the point) on a database of the engine under test, and the same database
 * opened afterwards to check what the command did, through the app's own HTTP surfaces.
 *
 *   const db = await cliDatabase();             // a migrated, empty database
 *   const run = await voiceplane(['tenants', 'list', '--json'], { env: db.env });
 *   await db.withApp(async ({ app, services }) => …);   // after the command ended
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { Readable, Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { buildApp } from '../../src/app.js';
import { runCli } from '../../src/cli/run.js';
import { loadConfig } from '../../src/core/config/config.js';
import { openDatabase } from '../../src/core/db/database.js';
import { createServices, type Services } from '../../src/services.js';
import { nodeArgv } from '../support/compiled.js';
import {
  createPostgresDatabase,
  dropPostgresDatabase,
  ENGINE,
  migratedDataDir,
} from '../support/databases.js';
import { baseEnv, REPO_ROOT } from '../support/server-process.js';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `voiceplane <args>` as `main.ts` does (`runCli` with its own stdout, stderr, stdin and
 * environment), in this process: a process per command (tsx's compilation, a database opened
 * cold) cost the suite minutes. `{ spawn: true }` runs it as a real process instead, for what only
 * a process shows (main.ts's exit code); stdin gets `stdin` (or nothing) and is closed.
 */
export async function voiceplane(
  args: string[],
  options: { env?: Record<string, string>; stdin?: string; spawn?: boolean } = {},
): Promise<CliRun> {
  if (options.spawn) return spawned(args, options);
  let stdout = '';
  let stderr = '';
  const code = await runCli(args, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    stdin: Readable.from(options.stdin ? [options.stdin] : []),
    env: { ...baseEnv(), ...options.env },
  });
  return { code, stdout, stderr };
}

async function spawned(
  args: string[],
  options: { env?: Record<string, string>; stdin?: string },
): Promise<CliRun> {
  const argv = await nodeArgv('src/cli/main.ts');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...argv, ...args], {
      cwd: REPO_ROOT,
      env: { ...baseEnv(), ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.stdin ?? '');
  });
}

/** The one JSON document a `--json` run printed. */
export function jsonOf(run: CliRun): any {
  expect(run).toMatchObject({ code: 0 });
  return JSON.parse(run.stdout);
}

export interface CliDatabase {
  /** What points a command at this database (DATA_DIR or DATABASE_URL). */
  env: Record<string, string>;
  /** The app and services on this database in this process (the command must have ended). */
  withApp<T>(work: (opened: { app: FastifyInstance; services: Services }) => Promise<T>): Promise<T>;
  drop(): Promise<void>;
}

/**
 * A migrated database without tenants: on PostgreSQL a copy of the suite's template database; on
 * the embedded engine a copy of the suite's template data directory (a fresh one takes many
 * seconds to create and migrate).
 */
export async function cliDatabase(): Promise<CliDatabase> {
  let env: Record<string, string>;
  let drop: () => Promise<void>;
  if (ENGINE === 'postgres') {
    const url = await createPostgresDatabase();
    env = { DATABASE_URL: url };
    drop = () => dropPostgresDatabase(url);
  } else {
    const dir = await migratedDataDir('voiceplane-cli-', os.tmpdir());
    env = { DATA_DIR: dir };
    drop = async () => fs.rmSync(dir, { recursive: true, force: true });
  }
  return {
    env,
    drop,
    async withApp(work) {
      const config = loadConfig({ ...baseEnv(), ...env });
      const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
      const services = createServices({ config, database });
      const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
      const app = await buildApp(services, { logStream: quiet });
      try {
        await app.ready();
        return await work({ app, services });
      } finally {
        await app.close();
        await services.close();
        await database.close();
      }
    },
  };
}

/** A partner API request with `key`, in process. */
export async function partnerRequest(app: FastifyInstance, key: string, url: string) {
  const response = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
  return { status: response.statusCode, body: response.json() };
}

/** How many tenants the database holds, read through the operator's list service. */
export async function tenantCount(db: CliDatabase): Promise<number> {
  return db.withApp(
    async ({ services }) =>
      (await services.tenants.list({ page: 1, limit: 1, sort_by: 'created_at', sort_order: 'desc' }))
        .pagination.total,
  );
}

export const STACK_LINE = /^\s+at /m;
