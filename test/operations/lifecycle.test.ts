/**
 * The server as a process on the embedded database: the newcomer's first start (demo tenant, a
 * printed curl that works, the printed command that turns the operator API on), the data-dir lock (a second process refuses; a lock left by a killed
 * process is taken over), no second seeding, SEED_DEMO=false, and graceful shutdown on SIGTERM
 * (an in-flight request finishes, then the process exits 0).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { readDirectoryLock } from '../../src/core/db/lockfile.js';
import { ENGINE, migratedDataDir, TMP_DIR } from '../support/databases.js';
import { type ServerProcess, startServerProcess } from '../support/server-process.js';

const run = promisify(execFile);
const skip = ENGINE === 'postgres';
if (skip)
  console.warn(
    'test/operations/lifecycle.test.ts: embedded-database processes; they run in the embedded (default) run only.',
  );

const ADMIN_TOKEN = 'lifecycle-admin-token-0123456789';
const root = fs.mkdtempSync(path.join(TMP_DIR, 'lifecycle-'));
const started: ServerProcess[] = [];

async function start(options: Parameters<typeof startServerProcess>[0]): Promise<ServerProcess> {
  const server = await startServerProcess(options);
  started.push(server);
  return server;
}

// Started now, so its start overlaps the newcomer tests; on a migrated copy (the first start on
// an empty directory is the newcomer's).
const noSeedServer = skip
  ? Promise.reject(new Error('skipped'))
  : migratedDataDir('no-seed-', root).then((dataDir) =>
      start({
        env: { DATA_DIR: dataDir, SEED_DEMO: 'false', ADMIN_TOKEN },
        entry: 'test/operations/fixtures/slow-server.ts',
      }),
    );
noSeedServer.catch(() => {});

afterAll(async () => {
  await noSeedServer.catch(() => {});
  for (const server of started) await server.kill('SIGKILL');
  fs.rmSync(root, { recursive: true, force: true });
});

/** A request on a connection of its own (no keep-alive reuse), resolving to the status or the error code. */
function freshRequest(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false, timeout: 5_000 }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    request.on('timeout', () => request.destroy(new Error('timeout')));
  });
}

describe.skipIf(skip)('the embedded data directory', { timeout: 120_000 }, () => {
  const dataDir = path.join(root, 'newcomer');
  let first: ServerProcess;
  let demoKey: string;
  let printedAdminToken: string;

  it('first start on an empty DATA_DIR seeds the demo tenant and prints a key and a curl that works', async () => {
    // A newcomer's start: no ADMIN_TOKEN.
    first = await start({ env: { DATA_DIR: dataDir, SEED_DEMO: null } });
    expect(first.stdout).toContain('Demo tenant created');
    demoKey = /API key:\s+(\S+)/.exec(first.stdout)?.[1] ?? '';
    expect(demoKey).toMatch(/^vp_test_[0-9A-Za-z]{32}$/);
    const curls = first.stdout
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.startsWith('curl '));
    expect(curls.length).toBeGreaterThanOrEqual(1);
    expect(curls[0]).toContain(first.url);
    // The printed line, run as printed, by a shell and the real curl.
    const { stdout } = await run('/bin/sh', ['-c', curls[0]], { timeout: 15_000 });
    const answer = JSON.parse(stdout);
    expect(answer.data.length).toBe(4);
    expect(new Set(answer.data.map((plan: { provider: string }) => plan.provider))).toEqual(
      new Set(['processor', 'agency']),
    );
    // Every other printed curl (e.g. the webhook) answers JSON without a server error.
    for (const line of curls.slice(1)) {
      const other = await run('/bin/sh', ['-c', `${line} -o /dev/null -w '%{http_code}'`], {
        timeout: 15_000,
      });
      expect(Number(other.stdout), line).toBeLessThan(500);
    }
    // The printed reference and metrics addresses answer.
    const [, docsUrl, metricsUrl] =
      /API reference: (\S+)\s+metrics \(Prometheus\): (\S+)/.exec(first.stdout) ?? [];
    expect((await fetch(docsUrl)).status).toBe(200);
    const metrics = await fetch(metricsUrl);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('voiceplane_database_up 1');
    // The printed console sign-in opens the overview.
    const [, consoleUrl, ownerEmail, ownerPassword] =
      /(http\S+\/console)\s+sign in as (\S+) \/ (\S+)/.exec(first.stdout) ?? [];
    expect(consoleUrl).toBe(`${first.url}/console`);
    const signInPage = await fetch(`${consoleUrl}/sign-in`);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await signInPage.text())?.[1] ?? '';
    const csrfCookie = (signInPage.headers.get('set-cookie') ?? '').split(';')[0];
    const signedIn = await fetch(`${consoleUrl}/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookie },
      body: new URLSearchParams({ _csrf: csrf, email: ownerEmail, password: ownerPassword }).toString(),
    });
    expect(signedIn.status).toBe(303);
    const session = (signedIn.headers.get('set-cookie') ?? '').match(/vp_console=[^;]+/)?.[0] ?? '';
    const overview = await fetch(consoleUrl, { headers: { cookie: session } });
    expect(overview.status).toBe(200);
    expect(await overview.text()).toContain('Demo Agency');
  });

  it('without ADMIN_TOKEN, the banner prints the one command that turns the operator API on', async () => {
    expect(first.stdout).toContain('Operator API (/admin/v1) is off: ADMIN_TOKEN is not set');
    printedAdminToken = /^\s+ADMIN_TOKEN=(\S+) npm start$/m.exec(first.stdout)?.[1] ?? '';
    expect(printedAdminToken).toMatch(/^[0-9A-Za-z]{32}$/);
    expect((await first.request('GET', '/admin/v1/tenants', { token: printedAdminToken })).status).toBe(401);
  });

  it('a second process on the same DATA_DIR refuses to start, with a message naming the directory', async () => {
    const second = await start({ env: { DATA_DIR: dataDir, SEED_DEMO: null }, waitForReady: false });
    const status = await second.exited;
    expect(status).not.toBe(0);
    expect(second.stderr).toContain(path.resolve(dataDir));
    expect(second.stderr).toMatch(new RegExp(`in use by process ${first.pid}`));
    expect(second.stderr).toContain('DATA_DIR');
    // The first process is unharmed.
    expect((await first.request('GET', '/api/v1/plans', { token: demoKey })).status).toBe(200);
  });

  it('a lock left by a killed process is taken over; the data is kept and the demo is not seeded again', async () => {
    expect(await first.kill('SIGKILL')).toBe('SIGKILL');
    expect(readDirectoryLock(dataDir)).toBe(String(first.pid));
    // Restarted as the banner said: the operator API answers with the printed token.
    const again = await start({
      env: { DATA_DIR: dataDir, SEED_DEMO: null, ADMIN_TOKEN: printedAdminToken },
    });
    expect(again.stdout).not.toContain('Demo tenant created');
    const tenants = await again.request('GET', '/admin/v1/tenants', { token: printedAdminToken });
    expect(tenants.status).toBe(200);
    expect(tenants.body.data.map((tenant: { name: string }) => tenant.name)).toEqual(['Demo Agency']);
    const plans = await again.request('GET', '/api/v1/plans', { token: demoKey });
    expect(plans.status).toBe(200);
    expect(plans.body.data.length).toBe(4);
    expect(await again.stop()).toBe(0);
    expect(readDirectoryLock(dataDir)).toBe('released');
  });
});

describe.skipIf(skip)('SEED_DEMO=false and graceful shutdown', { timeout: 120_000 }, () => {
  it('skips the demo, and on SIGTERM finishes the request in flight, refuses new ones, then exits 0', async () => {
    const server = await noSeedServer;
    expect(server.stdout).not.toContain('Demo tenant created');
    expect(server.stdout).not.toContain('API key:');

    const slow = server.request('GET', '/__test/slow?ms=2500', { timeoutMs: 20_000 });
    // Its "incoming request" line (the query value is not logged: only paging, sorting, enums, ids).
    await server.waitForOutput('"route":"/__test/slow"');
    server.child.kill('SIGTERM');
    await server.waitForOutput('shutting down');
    // New connections are refused while the slow request is still running.
    const late = await freshRequest(`${server.url}/healthz`);
    expect(server.exitStatus).toBeUndefined();
    expect(['ECONNREFUSED', 'ECONNRESET', 503]).toContain(late);

    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ done: true, waited_ms: 2500 });
    expect(await server.exited).toBe(0);
    const completed = server
      .logLines()
      .find(
        (line) =>
          line.msg === 'request completed' && line.res?.statusCode === 200 && line.responseTime > 2000,
      );
    expect(completed?.reqId).toMatch(/^req_/);
  });
});
