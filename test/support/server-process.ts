/**
 * Runs the real server (`node src/server.ts` compiled, see compiled.ts) as a child process, for tests that need
 * what `app.inject` cannot show: several processes on one database, signals, lock files, exit
 * codes, what a newcomer sees on stdout.
 *
 *   const server = await startServerProcess({ env: { DATABASE_URL: url, ADMIN_TOKEN } });
 *   const res = await server.request('GET', '/api/v1/plans', { token: key });
 *   await server.stop();            // SIGTERM, waits for the exit, returns the exit code
 *
 * - The environment is `baseEnv()` (quiet, cheap password hashing, no demo seed, a SECRETS_KEY, no stray
 *   DATABASE_URL/REDIS_URL from the caller's shell) merged with `env`. Pass `null` as a value
 *   to remove a variable. Without `PORT`, a free port is picked.
 * - `entry` runs another script instead (e.g. a test fixture that adds a route, then imports
 *   src/server.ts), compiled when it is under src/ or test/operations/fixtures/, else with tsx; `waitForReady: false` returns at once (for processes expected to fail:
 *   then `await server.exited`).
 * - `stdout`/`stderr` accumulate as text; `logLines()` parses stdout's JSON log lines;
 *   `waitForOutput(pattern)` waits until stdout or stderr matches.
 * - Every process started here is SIGKILLed when the test process exits, so a failing test
 *   never leaves servers (and their data-dir locks) behind. Still call stop()/kill() in afterAll.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { nodeArgv } from './compiled.js';

export const REPO_ROOT = path.resolve(import.meta.dirname, '../..');
export const SERVER_ENTRY = path.join(REPO_ROOT, 'src/server.ts');

export interface ServerProcessOptions {
  /** Merged over baseEnv(); a null value removes the variable. */
  env?: Record<string, string | null | undefined>;
  /** Script to run (absolute or relative to the repository root); src/server.ts by default. */
  entry?: string;
  /** Wait until GET /readyz answers 200 (default true). */
  waitForReady?: boolean;
  /** How long to wait for readiness (default 90 s: a fresh embedded database on a busy machine). */
  readyTimeoutMs?: number;
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: any;
  raw: string;
}

export interface ServerProcess {
  child: ChildProcess;
  pid: number;
  port: number;
  /** http://127.0.0.1:<port> */
  url: string;
  readonly stdout: string;
  readonly stderr: string;
  /** Resolves with the exit code (or the signal name) when the process ends. */
  exited: Promise<number | string>;
  /** The exit code or signal once exited, otherwise undefined. */
  readonly exitStatus: number | string | undefined;
  /** stdout's lines that parse as JSON (pino log lines). */
  logLines(): Record<string, any>[];
  waitForOutput(pattern: RegExp | string, timeoutMs?: number): Promise<void>;
  /** A JSON request; `token` becomes `Authorization: Bearer <token>`. */
  request(
    method: string,
    urlPath: string,
    options?: { token?: string; body?: unknown; headers?: Record<string, string>; timeoutMs?: number },
  ): Promise<HttpAnswer>;
  /** SIGTERM, then waits for the exit (SIGKILL after `timeoutMs`); returns the exit code or signal. */
  stop(timeoutMs?: number): Promise<number | string>;
  /** Sends a signal and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<number | string>;
}

/** The key sealing stored secrets in test servers (32 bytes, hex). */
export const TEST_SECRETS_KEY = '5ec12e75'.repeat(8);

/** The environment every test server starts from. */
export function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    // The caller's shell must not decide which database or Redis a test server uses.
    if (
      ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'PORT', 'HOST', 'ADMIN_TOKEN', 'NODE_OPTIONS'].includes(name)
    )
      continue;
    if (name.startsWith('VITEST') || name === 'TEST_DATABASE') continue;
    env[name] = value;
  }
  return {
    ...env,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    SEED_DEMO: 'false',
    PASSWORD_HASH_MEMORY_KIB: '1024',
    SIMULATED_REALTIME: 'false',
    NODE_ENV: 'test',
    // Required with a PostgreSQL DATABASE_URL (and then also used by embedded ones).
    SECRETS_KEY: TEST_SECRETS_KEY,
  };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startServerProcess(options: ServerProcessOptions = {}): Promise<ServerProcess> {
  const env: Record<string, string> = baseEnv();
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === null || value === undefined) delete env[name];
    else env[name] = value;
  }
  if (!env.PORT) env.PORT = String(await freePort());
  const port = Number(env.PORT);
  const entry = path.resolve(REPO_ROOT, options.entry ?? SERVER_ENTRY);
  const child = spawn(process.execPath, await nodeArgv(entry), {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);

  let stdout = '';
  let stderr = '';
  let exitStatus: number | string | undefined;
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of listeners) listener();
  };
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    notify();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    notify();
  });
  const exited = new Promise<number | string>((resolve) => {
    child.on('exit', (code, signal) => {
      running.delete(child);
      exitStatus = code ?? signal ?? 'unknown';
      // stdio may still be draining; give it a tick so callers see the last lines.
      setImmediate(() => {
        notify();
        resolve(exitStatus!);
      });
    });
  });

  const url = `http://127.0.0.1:${port}`;

  const server: ServerProcess = {
    child,
    pid: child.pid!,
    port,
    url,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    get exitStatus() {
      return exitStatus;
    },
    exited,
    logLines() {
      const lines: Record<string, any>[] = [];
      for (const line of stdout.split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          lines.push(JSON.parse(line));
        } catch {}
      }
      return lines;
    },
    waitForOutput(pattern, timeoutMs = 30_000) {
      const matches = () =>
        typeof pattern === 'string' ? (stdout + stderr).includes(pattern) : pattern.test(stdout + stderr);
      if (matches()) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(
            new Error(
              `timed out waiting for ${pattern} in the output of pid ${child.pid}:\n${stdout}\n${stderr}`,
            ),
          );
        }, timeoutMs);
        const check = () => {
          if (matches()) {
            clearTimeout(timer);
            listeners.delete(check);
            resolve();
          } else if (exitStatus !== undefined) {
            clearTimeout(timer);
            listeners.delete(check);
            reject(
              new Error(
                `pid ${child.pid} exited (${exitStatus}) before printing ${pattern}:\n${stdout}\n${stderr}`,
              ),
            );
          }
        };
        listeners.add(check);
      });
    },
    async request(method, urlPath, requestOptions = {}) {
      const headers: Record<string, string> = { ...requestOptions.headers };
      if (requestOptions.token !== undefined) headers.authorization = `Bearer ${requestOptions.token}`;
      let body: string | undefined;
      if (requestOptions.body !== undefined) {
        headers['content-type'] ??= 'application/json';
        body =
          typeof requestOptions.body === 'string' ? requestOptions.body : JSON.stringify(requestOptions.body);
      }
      const response = await fetch(`${url}${urlPath}`, {
        method,
        headers,
        body,
        signal: AbortSignal.timeout(requestOptions.timeoutMs ?? 30_000),
      });
      const raw = await response.text();
      let parsed: any;
      try {
        parsed = raw ? JSON.parse(raw) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: response.status, headers: response.headers, body: parsed, raw };
    },
    async kill(signal = 'SIGTERM') {
      if (exitStatus === undefined) child.kill(signal);
      return exited;
    },
    async stop(timeoutMs = 30_000) {
      if (exitStatus !== undefined) return exitStatus;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };

  if (options.waitForReady === false) return server;

  const deadline = Date.now() + (options.readyTimeoutMs ?? 90_000);
  for (;;) {
    if (exitStatus !== undefined) {
      throw new Error(
        `server (pid ${child.pid}) exited with ${exitStatus} before it was ready:\n${stdout}\n${stderr}`,
      );
    }
    try {
      const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) });
      if (response.status === 200) return server;
    } catch {}
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(
        `server (pid ${child.pid}) not ready after ${options.readyTimeoutMs ?? 90_000} ms:\n${stdout}\n${stderr}`,
      );
    }
    await sleep(100);
  }
}
