/**
 * `npm run bench`: measures the service against the machine's own limits (see bench/README.md).
 * For each engine: a fresh database (PostgreSQL: created and dropped here; embedded: a temporary
 * DATA_DIR), migrated and seeded directly; the bare baseline server; the compiled service in
 * production mode; on PostgreSQL also a multi-process run (src/cluster.ts). Writes
 * bench/results/latest.json (PostgreSQL) and latest-embedded.json (embedded).
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import ts from 'typescript';
import { openDatabase } from '../src/core/db.js';
import { migrate } from '../src/core/migrate.js';
import { freePort } from '../test/support/server-process.js';
import { type LoadResult, type RequestShape, runLoad } from './load.js';
import { type BenchOptions, parseOptions, type ScenarioName, type Storage } from './options.js';
import { type Started, startProcess } from './processes.js';
import { summariseProfile } from './profile-summary.js';
import {
  type BenchReport,
  type ClusterScenarioResult,
  checkTargets,
  formatTable,
  formatTargets,
  type ScenarioResult,
  toScenarioResult,
} from './report.js';
import { SCENARIOS, type Scenario, type ScenarioContext } from './scenarios.js';
import { API_KEY_PREFIX, type BenchFixture, seedBench } from './seed.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const RESULTS_DIR = path.join(ROOT, 'bench', 'results');
const DIST_SERVER = path.join(ROOT, 'dist', 'server.js');
const DIST_CLUSTER = path.join(ROOT, 'dist', 'cluster.js');
const ADMIN_TOKEN = `bench-admin-${crypto.randomBytes(16).toString('hex')}`;
const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

const cleanups: (() => Promise<void>)[] = [];
const log = (message: string) => process.stdout.write(`${message}\n`);

// ---------------------------------------------------------------------------------------------
// Environment of the service

/** Rate limits must not cap the run: the default buckets are raised far above what 32 connections send. */
function rateLimitEnv(): { env: Record<string, string>; notes: string[] } {
  const env = {
    RATE_LIMIT_PARTNER_PER_SECOND: '1000000',
    RATE_LIMIT_PARTNER_BURST: '1000000',
    RATE_LIMIT_WEBHOOK_PER_SECOND: '1000000',
    RATE_LIMIT_WEBHOOK_BURST: '1000000',
  };
  const notes = [
    `rate limits raised via ${Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`,
  ];
  return { env, notes };
}

function serviceEnv(
  options: BenchOptions,
  storage: Storage,
  location: string,
  port: number,
  extra: Record<string, string>,
) {
  return {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_BASE_URL: '',
    DATABASE_URL: storage === 'postgres' ? location : '',
    DATA_DIR: storage === 'embedded' ? location : '',
    ADMIN_TOKEN,
    API_KEY_PREFIX,
    // Required with PostgreSQL; the bench's databases are thrown away, so any fixed key does.
    SECRETS_KEY: 'be9c4'.padEnd(64, '0'),
    SEED_DEMO: 'false',
    REDIS_URL: '',
    WEB_CONCURRENCY: '',
    // The production setting the README recommends (section "Memory"): without it glibc keeps a
    // freed scrypt buffer per libuv thread, ~60 MB of peak RSS after users_create.
    // src/cluster.ts RECOMMENDED_MMAP_THRESHOLD (importing cluster.ts would start a cluster).
    MALLOC_MMAP_THRESHOLD_: '1048576',
    ...extra,
    ...options.env,
  };
}

// ---------------------------------------------------------------------------------------------
// Databases

function postgresAdminUrl(): string {
  const fromEnv = process.env.BENCH_POSTGRES_URL ?? process.env.DATABASE_URL;
  return fromEnv && /^postgres(ql)?:/.test(fromEnv) ? fromEnv : DEFAULT_POSTGRES_URL;
}

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end().catch(() => {});
  }
}

async function postgresAnswers(url: string): Promise<string | undefined> {
  try {
    await adminQuery(url, 'SELECT 1');
    return undefined;
  } catch (error) {
    return (error as Error).message || String(error);
  }
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

async function queueBacklog(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM jobs WHERE status IN ('queued', 'running')",
    );
    return result.rows[0].n;
  } finally {
    await client.end().catch(() => {});
  }
}

// ---------------------------------------------------------------------------------------------
// Requests outside the load generator

function describeError(error: unknown): string {
  const e = error as Error & { cause?: { message?: string; code?: string } };
  return e.cause
    ? `${e.message}: ${e.cause.code ?? ''} ${e.cause.message ?? ''}`.trim()
    : String(e?.message ?? error);
}

/** One request outside the load generator; retried once on a network error (a closing keep-alive socket). */
async function send(baseUrl: string, request: RequestShape): Promise<{ status: number; body: string }> {
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await fetch(`${baseUrl}${request.path}`, {
        method: request.method,
        headers: { ...request.headers, connection: 'close' },
        body: request.body,
        signal: AbortSignal.timeout(30_000),
      });
      return { status: response.status, body: await response.text() };
    } catch (error) {
      if (attempt >= 2)
        throw new Error(
          `${request.method} ${request.path.replace(/webh_\w+/, 'webh_…')} failed: ${describeError(error)}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** Creates and publishes the benchmark agent through the operator API, when agents exist. */
async function setupAgent(
  baseUrl: string,
  fixture: BenchFixture,
): Promise<Pick<ScenarioContext, 'webhookPath' | 'webhookUnavailable'>> {
  const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const headers = { ...auth, 'content-type': 'application/json' };
  const created = await send(baseUrl, {
    method: 'POST',
    path: `/admin/v1/tenants/${fixture.tenantId}/agents`,
    headers,
    body: JSON.stringify({
      user_id: fixture.ownerUserId,
      name: 'Bench agent',
      phone_number: '+14155550199',
      prompt: 'You are calling {name} from {company} about their appointment.',
      welcome_message: 'Hello {name}, this is the bench agent.',
    }),
  });
  if (created.status === 404) {
    return {
      webhookUnavailable:
        'not available yet: POST /admin/v1/tenants/{id}/agents answered 404 (agents not built yet)',
    };
  }
  if (created.status !== 201) {
    return { webhookUnavailable: `agent creation answered ${created.status}: ${created.body.slice(0, 200)}` };
  }
  const agent = JSON.parse(created.body).data as { id: string; webhook_id?: string; webhook_url?: string };
  const published = await send(baseUrl, {
    method: 'POST',
    path: `/admin/v1/agents/${agent.id}/publish`,
    headers: auth,
  });
  if (published.status !== 200) {
    return {
      webhookUnavailable: `agent publish answered ${published.status}: ${published.body.slice(0, 200)}`,
    };
  }
  const webhookPath = agent.webhook_url
    ? new URL(agent.webhook_url).pathname
    : `/webhooks/agents/${agent.webhook_id}/trigger`;
  return { webhookPath };
}

// ---------------------------------------------------------------------------------------------
// Running scenarios

interface PhaseResult {
  results: Map<ScenarioName, LoadResult>;
  /** Peak RSS (MB) of the answering process(es) during each scenario (warm-up included). */
  peaks: Map<ScenarioName, number | null>;
  skipped: { name: ScenarioName; reason: string }[];
}

async function runScenarios(
  scenarios: Scenario[],
  target: Started,
  context: ScenarioContext,
  options: BenchOptions,
  label: string,
  afterEach?: (scenario: Scenario) => Promise<void>,
): Promise<PhaseResult> {
  const phase: PhaseResult = { results: new Map(), peaks: new Map(), skipped: [] };
  for (const scenario of scenarios) {
    const reason = scenario.unavailable?.(context);
    if (reason) {
      log(`  ${scenario.name}: skipped (${reason})`);
      phase.skipped.push({ name: scenario.name, reason });
      continue;
    }
    const request = scenario.request(context);
    const baseUrl = target.baseUrl;
    let probe: { status: number; body: string };
    try {
      probe = await send(baseUrl, typeof request === 'function' ? request() : request);
    } catch (error) {
      const why = `the probe request failed (${describeError(error)}); see ${path.relative(ROOT, target.logFile)}`;
      log(`  ${scenario.name}: skipped (${why})`);
      phase.skipped.push({ name: scenario.name, reason: why });
      continue;
    }
    if (probe.status === 404) {
      const why = `not available yet: the route answered 404 ${probe.body.slice(0, 120)}`;
      log(`  ${scenario.name}: skipped (${why})`);
      phase.skipped.push({ name: scenario.name, reason: why });
      continue;
    }
    if (probe.status >= 300)
      log(
        `  ${scenario.name}: warning, the probe request answered ${probe.status}: ${probe.body.slice(0, 200)}`,
      );
    process.stdout.write(
      `  ${label}${scenario.name}: warm-up ${options.warmup} s, measuring ${options.duration} s … `,
    );
    const peakSince = target.peakWindow();
    const result = await runLoad({
      baseUrl,
      connections: options.connections,
      duration: options.duration,
      warmup: options.warmup,
      request,
      cpuSeconds: () => target.cpuSeconds(),
    });
    phase.results.set(scenario.name, result);
    const peak = peakSince();
    phase.peaks.set(scenario.name, peak);
    const odd = Object.entries(result.statuses).filter(([code]) => !code.startsWith('2'));
    log(
      `${result.rps.toLocaleString('en-US')} req/s, p50 ${result.p50_ms} ms, p99 ${result.p99_ms} ms, ` +
        `${result.cpu_ms_per_request ?? '?'} CPU ms/req${peak === null ? '' : `, peak RSS ${peak} MB`}` +
        (result.non2xx
          ? `, non-2xx ${result.non2xx} (${odd.map(([c, n]) => `${c}×${n}`).join(' ')}${result.errors ? ` errors×${result.errors}` : ''})`
          : ''),
    );
    await afterEach?.(scenario);
  }
  return phase;
}

function ratioOf(
  scenario: Scenario,
  load: LoadResult,
  baselines: Map<ScenarioName, LoadResult>,
): number | null {
  if (!scenario.ratioTo) return null;
  const base = baselines.get(scenario.ratioTo);
  if (!base || base.rps === 0) return null;
  return Math.round((load.rps / base.rps) * 100) / 100;
}

function newestProfile(dir: string): string | undefined {
  if (!fs.existsSync(dir)) return undefined;
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => path.join(dir, f))
    .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  return files[0];
}

async function runStorage(
  storage: Storage,
  options: BenchOptions,
  rateLimits: ReturnType<typeof rateLimitEnv>,
) {
  log(`\n=== ${storage === 'postgres' ? 'PostgreSQL' : 'embedded (PGlite)'} ===`);
  const notes: string[] = [...rateLimits.notes];
  const loadAverage = os.loadavg().map((n) => Math.round(n * 100) / 100);
  let location: string;

  if (storage === 'postgres') {
    const admin = postgresAdminUrl();
    const problem = await postgresAnswers(admin);
    if (problem) {
      log(
        `PostgreSQL does not answer at ${admin.replace(/\/\/[^@]*@/, '//…@')} (${problem}): skipping the PostgreSQL run.`,
      );
      return undefined;
    }
    const name = `vp_bench_${crypto.randomBytes(5).toString('hex')}`;
    await adminQuery(admin, `CREATE DATABASE ${name}`);
    location = withDatabase(admin, name);
    const drop = async () => {
      if (options.keep) log(`kept database ${name}`);
      else await adminQuery(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    };
    cleanups.push(drop);
    log(`database ${name} on ${new URL(admin).host}`);
  } else {
    location = fs.mkdtempSync(path.join(os.tmpdir(), 'voiceplane-bench-'));
    const dir = location;
    cleanups.push(async () => {
      if (options.keep) log(`kept data directory ${dir}`);
      else fs.rmSync(dir, { recursive: true, force: true });
    });
    log(`data directory ${location}`);
  }

  // Migrate and seed straight into the database, before any process opens it.
  const seedStarted = performance.now();
  const database = await openDatabase({
    databaseUrl: storage === 'postgres' ? location : undefined,
    dataDir: location,
    poolSize: 4,
  });
  let fixture: BenchFixture;
  try {
    await migrate(database);
    fixture = await seedBench(database, { users: options.users });
  } finally {
    await database.close();
  }
  log(
    `seeded 20 plans, ${options.users.toLocaleString('en-US')} users, ${fixture.subscriptionIds.length} subscriptions in ` +
      `${fixture.seedSeconds.toFixed(1)} s (with migrations ${((performance.now() - seedStarted) / 1000).toFixed(1)} s)`,
  );
  log(
    `  seeding steps (s): ${Object.entries(fixture.seedSteps)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  notes.push(
    fixture.tenantRateLimitRaised
      ? 'partner API rate limit raised for the bench tenant (tenants.rate_limit_per_second / rate_limit_burst = 1,000,000)'
      : 'tenants have no rate-limit columns: the partner API rate limit was not raised',
  );
  if (fixture.subscriptionsError) notes.push(`subscriptions not seeded: ${fixture.subscriptionsError}`);

  const wanted = SCENARIOS.filter((s) => options.only.includes(s.name));
  const context: ScenarioContext = { fixture };
  const results = new Map<ScenarioName, LoadResult>();
  const skipped: PhaseResult['skipped'] = [];
  const logDir = RESULTS_DIR;
  const logFile = (what: string) => path.join(logDir, `${what}-${storage}.log`);
  for (const what of ['baseline', 'service', 'cluster']) fs.rmSync(logFile(what), { force: true });

  // 1. Baselines, in their own process.
  let baselinePeak: number | null = null;
  const baselineScenarios = wanted.filter((s) => s.target === 'baseline');
  if (baselineScenarios.length) {
    const port = await freePort();
    const baseline = await startProcess({
      name: 'baseline server',
      args: [compileBaselineServer()],
      env: {
        NODE_ENV: 'production',
        PORT: String(port),
        ...(storage === 'postgres' ? { BASELINE_DATABASE_URL: location } : { BASELINE_DATA_DIR: location }),
      },
      port,
      readyPath: '/static',
      logFile: logFile('baseline'),
    });
    cleanups.push(() => baseline.stop());
    try {
      const phase = await runScenarios(baselineScenarios, baseline, context, options, '');
      for (const [k, v] of phase.results) results.set(k, v);
      skipped.push(...phase.skipped);
      baselinePeak = baseline.peakRssMb();
    } finally {
      await baseline.stop();
    }
  }

  // 2. The service, one process.
  const serviceScenarios = wanted.filter((s) => s.target === 'service');
  let servicePeak = 0;
  const peaksByScenario: Record<string, number | null> = {};
  let profileSummary: string | undefined;
  if (serviceScenarios.length) {
    const port = await freePort();
    const profileDir = path.join(
      RESULTS_DIR,
      'profiles',
      `${storage}-${new Date().toISOString().replace(/[:.]/g, '-')}`,
    );
    const service = await startProcess({
      name: 'service',
      args: [...(options.profile ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []), DIST_SERVER],
      env: serviceEnv(options, storage, location, port, rateLimits.env),
      port,
      readyPath: '/readyz',
      logFile: logFile('service'),
    });
    cleanups.push(() => service.stop());
    try {
      if (serviceScenarios.some((s) => s.name === 'webhook_trigger')) {
        Object.assign(context, await setupAgent(service.baseUrl, fixture));
      }
      const phase = await runScenarios(serviceScenarios, service, context, options, '', async (scenario) => {
        if (scenario.name === 'webhook_trigger' && storage === 'postgres') {
          const backlog = await queueBacklog(location);
          log(`    dispatch backlog right after the run: ${backlog} jobs queued or running`);
          notes.push(
            `webhook_trigger left ${backlog} dispatch jobs queued or running at the end of the measured run`,
          );
        }
      });
      for (const [k, v] of phase.results) results.set(k, v);
      for (const [k, v] of phase.peaks) peaksByScenario[k] = v;
      skipped.push(...phase.skipped);
      servicePeak = service.peakRssMb();
    } finally {
      await service.stop();
    }
    if (options.profile) {
      const file = newestProfile(profileDir);
      if (file) {
        profileSummary = summariseProfile(file);
        notes.push(`cpu profile: ${path.relative(ROOT, file)}`);
      } else {
        log('  (no .cpuprofile was written: the service did not exit cleanly)');
      }
    }
  }

  const scenarios: ScenarioResult[] = [];
  for (const scenario of wanted) {
    const load = results.get(scenario.name);
    if (load) scenarios.push(toScenarioResult(scenario.name, load, ratioOf(scenario, load, results)));
  }

  // 3. Several processes (PostgreSQL only).
  let cluster: BenchReport['cluster'] = null;
  if (storage === 'postgres' && options.cluster > 1 && serviceScenarios.length) {
    if (!fs.existsSync(DIST_CLUSTER)) {
      notes.push('multi-process run skipped: dist/cluster.js is missing (build failed?)');
    } else {
      try {
        cluster = await runCluster(
          options,
          location,
          serviceScenarios,
          context,
          rateLimits.env,
          results,
          logFile('cluster'),
        );
      } catch (error) {
        log(`  the multi-process run failed: ${describeError(error)}`);
        notes.push(`multi-process run failed: ${describeError(error)}`);
      }
    }
  }

  const report: BenchReport = {
    storage,
    node: process.version,
    cpus: os.cpus().length,
    peak_rss_mb: servicePeak,
    scenarios,
    measured_at: new Date().toISOString(),
    settings: {
      duration_s: options.duration,
      warmup_s: options.warmup,
      connections: options.connections,
      users: options.users,
    },
    load_average: loadAverage,
    baseline_peak_rss_mb: baselinePeak,
    peak_rss_mb_by_scenario: peaksByScenario,
    skipped,
    statuses: Object.fromEntries([...results].map(([name, load]) => [name, load.statuses])),
    cpu_ms_per_request: Object.fromEntries(
      [...results].map(([name, load]) => [name, load.cpu_ms_per_request]),
    ),
    cluster,
    targets: [],
    notes,
  };
  if (storage === 'postgres') report.targets = checkTargets(report);
  return { report, profileSummary };
}

async function runCluster(
  options: BenchOptions,
  location: string,
  scenarios: Scenario[],
  context: ScenarioContext,
  rateLimits: Record<string, string>,
  single: Map<ScenarioName, LoadResult>,
  logFile: string,
): Promise<NonNullable<BenchReport['cluster']>> {
  // Calls queued by the single-process run would otherwise be dialled during this one.
  const deadline = Date.now() + 60_000;
  let backlog = await queueBacklog(location);
  if (backlog > 0) {
    log(
      `  waiting for ${backlog} queued jobs to drain before the ${options.cluster}-process run (at most 60 s)`,
    );
  }
  while (backlog > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    backlog = await queueBacklog(location);
  }
  const port = await freePort();
  log(`\n  --- ${options.cluster} processes (WEB_CONCURRENCY=${options.cluster}, dist/cluster.js) ---`);
  const service = await startProcess({
    name: 'cluster',
    args: [DIST_CLUSTER],
    env: {
      ...serviceEnv(options, 'postgres', location, port, rateLimits),
      WEB_CONCURRENCY: String(options.cluster),
    },
    port,
    readyPath: '/readyz',
    logFile,
  });
  cleanups.push(() => service.stop());
  let phase: PhaseResult;
  let peak: number;
  try {
    // Let every worker finish starting so the first seconds are not served by one process.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    phase = await runScenarios(scenarios, service, context, options, `[${options.cluster}p] `);
    peak = service.peakRssMb();
  } finally {
    await service.stop();
  }
  const rows: ClusterScenarioResult[] = [];
  for (const scenario of scenarios) {
    const load = phase.results.get(scenario.name);
    if (!load) continue;
    const one = single.get(scenario.name);
    rows.push({
      ...toScenarioResult(scenario.name, load, ratioOf(scenario, load, single)),
      speedup: one && one.rps > 0 ? Math.round((load.rps / one.rps) * 100) / 100 : null,
    });
  }
  return {
    processes: options.cluster,
    peak_rss_mb: peak,
    scenarios: rows,
    cpu_ms_per_request: Object.fromEntries(
      [...phase.results].map(([name, load]) => [name, load.cpu_ms_per_request]),
    ),
  };
}

/**
 * The baseline server runs as plain JavaScript like the compiled service (no tsx loader in the
 * process): transpiled with TypeScript into .tmp/bench/, where its imports still resolve from
 * the project's node_modules.
 */
function compileBaselineServer(): string {
  const source = path.join(ROOT, 'bench', 'baseline-server.ts');
  const target = path.join(ROOT, '.tmp', 'bench', 'baseline-server.mjs');
  const output = ts.transpileModule(fs.readFileSync(source, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    fileName: source,
  });
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, output.outputText);
  return target;
}

function build(options: BenchOptions): void {
  if (!options.build) {
    if (!fs.existsSync(DIST_SERVER)) throw new Error('dist/server.js is missing: run without --no-build');
    return;
  }
  log('building (npm run build) …');
  const result = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) {
    if (!fs.existsSync(DIST_SERVER)) throw new Error('npm run build failed and there is no dist/server.js');
    log('warning: npm run build reported errors (see above); measuring the JavaScript it emitted anyway');
  }
}

function outputPath(options: BenchOptions, storage: Storage): string {
  if (options.out) {
    return options.storages.length > 1 && storage === 'embedded'
      ? options.out.replace(/(\.json)?$/, '-embedded.json')
      : options.out;
  }
  const base = options.standard ? 'latest' : 'partial';
  return path.join(RESULTS_DIR, storage === 'postgres' ? `${base}.json` : `${base}-embedded.json`);
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  build(options);
  const rateLimits = rateLimitEnv();
  log(rateLimits.notes.join('\n'));
  log(
    `node ${process.version}, ${os.cpus().length} CPUs, load average ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}; ` +
      `${options.connections} connections, ${options.warmup} s warm-up + ${options.duration} s per scenario`,
  );

  const summaries: string[] = [];
  for (const storage of options.storages) {
    let outcome: Awaited<ReturnType<typeof runStorage>>;
    try {
      outcome = await runStorage(storage, options, rateLimits);
    } catch (error) {
      log(`\nthe ${storage} run failed: ${describeError(error)}`);
      process.exitCode = 1;
      outcome = undefined;
    }
    while (cleanups.length) await cleanups.pop()!().catch(() => {});
    if (!outcome) continue;
    const { report, profileSummary } = outcome;
    const file = outputPath(options, storage);
    fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    // In the project's formatting, so `npm run lint` (which covers bench/) stays clean.
    spawnSync(path.join(ROOT, 'node_modules', '.bin', 'biome'), ['format', '--write', file], {
      stdio: 'ignore',
    });
    const lines = [
      formatTable(
        `\n${storage === 'postgres' ? 'PostgreSQL' : 'embedded (PGlite)'}, 1 service process, peak RSS ${report.peak_rss_mb} MB` +
          (report.baseline_peak_rss_mb ? ` (baseline server ${report.baseline_peak_rss_mb} MB)` : ''),
        report.scenarios,
        report.skipped,
        report.cpu_ms_per_request,
      ),
    ];
    if (report.cluster) {
      lines.push(
        formatTable(
          `\n${report.cluster.processes} service processes (WEB_CONCURRENCY=${report.cluster.processes}), peak RSS ${report.cluster.peak_rss_mb} MB in total`,
          report.cluster.scenarios,
          [],
          report.cluster.cpu_ms_per_request,
        ),
      );
    }
    if (report.targets.length) lines.push(`\n${formatTargets(report.targets)}`);
    if (report.notes.length) lines.push(`\nnotes:\n${report.notes.map((n) => `  - ${n}`).join('\n')}`);
    if (profileSummary) lines.push(`\n${profileSummary}`);
    lines.push(`\nwritten ${path.relative(ROOT, file)}`);
    summaries.push(lines.join('\n'));
    log(lines.join('\n'));
  }
  if (summaries.length === 0) log('nothing was measured');
  else if (summaries.length > 1) {
    log(`\n=== summary ===\n${summaries.join('\n')}`);
  }
}

let interrupted = false;
process.on('SIGINT', () => {
  if (interrupted) process.exit(130);
  interrupted = true;
  log('\ninterrupted: stopping processes and dropping the benchmark database …');
  void (async () => {
    while (cleanups.length) await cleanups.pop()!().catch(() => {});
    process.exit(130);
  })();
});

main().catch(async (error) => {
  console.error(error instanceof Error ? error.message : error);
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
  process.exit(1);
});
