/**
 * `npm run bench`: measures the service against the machine's own limits (see bench/README.md).
 * For each engine: a fresh database (PostgreSQL: created and dropped here; embedded: a temporary
 * DATA_DIR), migrated and seeded directly; the bare baseline server; the compiled service in
 * production mode; on PostgreSQL also a multi-process run (src/cluster.ts). Writes
 * bench/results/latest.json (PostgreSQL) and latest-embedded.json (embedded).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_DATABASE_TIMEOUTS } from '../src/core/config/config.js';
import { heapLimitArgv } from '../src/core/config/memory.js';
import { openDatabase } from '../src/core/db/database.js';
import { migrate } from '../src/core/db/migrate.js';
import { freePort } from '../test/support/server-process.js';
import { type PairBaseline, pairedBaselines, serviceQuiet, startBaselineServer } from './baseline-process.js';
import { runCampaignPace } from './campaign-pace.js';
import { signInConsole } from './console-scenarios.js';
import { autovacuumIsOff, postgresAdminUrl, postgresAnswers, queueBacklog } from './database.js';
import { rateLimitEnv, serviceEnv } from './environment.js';
import { cleanups, DIST_CLUSTER, DIST_SERVER, log, RESULTS_DIR, ROOT } from './harness.js';
import type { LoadResult } from './load.js';
import { runTriggersWithoutDispatch } from './no-dispatch.js';
import { type BenchOptions, parseOptions, type ScenarioName, type Storage } from './options.js';
import { type PhaseResult, ratioOf, runCluster, runScenarios } from './phases.js';
import { startProcess } from './processes.js';
import { newestProfile, summariseProfile } from './profile-summary.js';
import {
  type BenchReport,
  checkTargets,
  formatDetails,
  formatTable,
  formatTargets,
  ratioBetween,
  type ScenarioResult,
  toScenarioResult,
} from './report.js';
import { describeError, setupAgent } from './requests.js';
import { SCENARIOS, type ScenarioContext, triggerRequest } from './scenarios.js';
import { type BenchFixture, CALLS_LIST_CALLS, seedBench } from './seed.js';
import { seededPostgres } from './seed-template.js';
import { startToolReceiver } from './tool-receiver.js';

async function runStorage(
  storage: Storage,
  options: BenchOptions,
  rateLimits: ReturnType<typeof rateLimitEnv>,
) {
  log(`\n=== ${storage === 'postgres' ? 'PostgreSQL' : 'embedded (PGlite)'} ===`);
  const notes: string[] = [...rateLimits.notes];
  const loadAverage = os.loadavg().map((n) => Math.round(n * 100) / 100);
  let location: string;

  let fixture: BenchFixture;
  const seedStarted = performance.now();
  if (storage === 'postgres') {
    const admin = postgresAdminUrl();
    const problem = await postgresAnswers(admin);
    if (problem) {
      log(
        `PostgreSQL does not answer at ${admin.replace(/\/\/[^@]*@/, '//…@')} (${problem}): skipping the PostgreSQL run.`,
      );
      return undefined;
    }
    // The million calls and the users are seeded once into a template database and copied for
    // each run (bench/seed-template.ts).
    const seeded = await seededPostgres(
      admin,
      { users: options.users, calls: CALLS_LIST_CALLS },
      { keep: options.keep, rebuild: options.rebuildSeed },
    );
    location = seeded.url;
    fixture = seeded.fixture;
    notes.push(seeded.note);
    const database = await openDatabase({ databaseUrl: location, dataDir: location, poolSize: 1 });
    try {
      if (await autovacuumIsOff(database)) {
        notes.push(
          'the server runs with autovacuum = off: the service vacuums its tables itself, every 15 s (src/core/db/table-maintenance.ts)',
        );
      }
    } finally {
      await database.close();
    }
    log(`seed ready in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);
  } else {
    location = fs.mkdtempSync(path.join(os.tmpdir(), 'voiceplane-bench-'));
    const dir = location;
    cleanups.push(async () => {
      if (options.keep) log(`kept data directory ${dir}`);
      else fs.rmSync(dir, { recursive: true, force: true });
    });
    log(`data directory ${location}`);
    // Migrate and seed straight into the data directory, before any process opens it.
    const database = await openDatabase({
      databaseUrl: undefined,
      dataDir: location,
      poolSize: 4,
      timeouts: { ...DEFAULT_DATABASE_TIMEOUTS, statementMs: 0, queryMs: 0 },
    });
    try {
      await migrate(database);
      // 1,000,000 calls only when a calls list runs: they take a while to seed into PGlite.
      const calls = options.only.some((name) => name.startsWith('calls_list')) ? CALLS_LIST_CALLS : 0;
      fixture = await seedBench(database, { users: options.users, calls });
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
  }
  notes.push(
    fixture.tenantRateLimitRaised
      ? 'partner API rate limit raised for the bench tenant (tenants.rate_limit_per_second / rate_limit_burst = 1,000,000)'
      : 'tenants have no rate-limit columns: the partner API rate limit was not raised',
  );
  if (fixture.subscriptionsError) notes.push(`subscriptions not seeded: ${fixture.subscriptionsError}`);

  const wanted = SCENARIOS.filter((s) => options.only.includes(s.name));
  const context: ScenarioContext = { fixture, ...(storage === 'postgres' ? { databaseUrl: location } : {}) };
  const results = new Map<ScenarioName, LoadResult>();
  const skipped: PhaseResult['skipped'] = [];
  const logDir = RESULTS_DIR;
  const logFile = (what: string) => path.join(logDir, `${what}-${storage}.log`);
  for (const what of ['baseline', 'service', 'cluster']) fs.rmSync(logFile(what), { force: true });

  // 1. Baselines, in their own process. On PostgreSQL it stays up for the paired baselines
  // (bench/baseline-process.ts); the embedded engine's data directory admits one process at a time.
  let baselinePeak: number | null = null;
  const baselineScenarios = wanted.filter((s) => s.target === 'baseline');
  let pairBaseline: PairBaseline | undefined;
  let stopBaseline = async () => {};
  if (baselineScenarios.length) {
    const baseline = await startBaselineServer(
      options,
      storage,
      location,
      await freePort(),
      logFile('baseline'),
    );
    stopBaseline = async () => {
      baselinePeak ??= baseline.peakRssMb();
      await baseline.stop();
    };
    cleanups.push(() => baseline.stop());
    try {
      const phase = await runScenarios(baselineScenarios, baseline, context, options, '', results);
      for (const [k, v] of phase.results) results.set(k, v);
      skipped.push(...phase.skipped);
      baselinePeak = baseline.peakRssMb();
      if (storage === 'postgres')
        pairBaseline = pairedBaselines(baseline, baselineScenarios, context, options);
    } finally {
      if (!pairBaseline) await stopBaseline();
    }
  }

  // 2. The service, one process.
  const serviceScenarios = wanted.filter((s) => s.target === 'service');
  let servicePeak = 0;
  const peaksByScenario: Record<string, number | null> = {};
  const compound: PhaseResult['compound'] = new Map();
  const paired = new Map<ScenarioName, LoadResult>();
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
      args: [
        ...(options.profile ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []),
        // The production setting of docs/production.md, "Memory" (src/cluster.ts sets it for its workers).
        ...heapLimitArgv([], options.env.NODE_OPTIONS),
        DIST_SERVER,
      ],
      env: serviceEnv(options, storage, location, port, rateLimits.env),
      port,
      readyPath: '/readyz',
      logFile: logFile('service'),
    });
    cleanups.push(() => service.stop());
    try {
      if (
        serviceScenarios.some((s) =>
          [
            'webhook_trigger',
            'call_pipeline',
            'calls_create',
            'inbound_answer',
            'inbound_under_load',
          ].includes(s.name),
        ) ||
        options.only.some((name) => ['campaign_pace', 'webhook_trigger_no_dispatch'].includes(name))
      ) {
        const tools = await startToolReceiver();
        cleanups.push(async () => {
          const { calls, signed } = tools.received();
          log(`    the benchmark agent's tool endpoint received ${calls} calls, ${signed} of them signed`);
          await tools.close();
        });
        Object.assign(context, await setupAgent(service.baseUrl, fixture, tools.url));
      }
      if (serviceScenarios.some((s) => s.name.startsWith('console_'))) {
        const session = await signInConsole(service.baseUrl, fixture);
        context.consoleCookie = session.cookie;
        context.consoleUnavailable = session.unavailable;
      }
      const phase = await runScenarios(
        serviceScenarios,
        service,
        context,
        options,
        '',
        results,
        async (scenario) => {
          if (scenario.name === 'webhook_trigger' && storage === 'postgres') {
            const backlog = await queueBacklog(location);
            log(`    dispatch backlog right after the run: ${backlog} jobs due or running`);
            notes.push(`webhook_trigger left ${backlog} jobs due or running at the end of the measured run`);
          }
        },
        pairBaseline &&
          (async (scenario) =>
            (await serviceQuiet(service, location)) ? pairBaseline(scenario) : undefined),
      );
      for (const [k, v] of phase.results) results.set(k, v);
      for (const [k, v] of phase.paired) paired.set(k, v);
      for (const [k, v] of phase.peaks) peaksByScenario[k] = v;
      for (const [k, v] of phase.compound) compound.set(k, v);
      skipped.push(...phase.skipped);
      servicePeak = service.peakRssMb();
    } finally {
      // Calls left to dial would be dialled by the cluster run's first scenario.
      if (storage === 'postgres' && options.cluster > 1) await serviceQuiet(service, location);
      await service.stop();
      // webhook_trigger_no_dispatch, last, measures its baseline again right before it.
      if (!pairBaseline || !options.only.includes('webhook_trigger_no_dispatch')) await stopBaseline();
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
          // Scenarios with their own runner measure one process's limits; they are not repeated here.
          serviceScenarios.filter((s) => !s.run),
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

  // After the cluster run: what these leave queued must not be dispatched by it.
  // campaign_pace: a service process of its own, once the main one stopped (bench/campaign-pace.ts).
  let campaignRow: ScenarioResult | undefined;
  if (options.only.includes('campaign_pace')) {
    if (storage !== 'postgres') {
      skipped.push({
        name: 'campaign_pace',
        reason: 'PostgreSQL only: a second service process on the same database',
      });
    } else {
      log('  campaign_pace: a service with 2-second calls …');
      try {
        const outcome = await runCampaignPace(
          options,
          location,
          context,
          rateLimits.env,
          logFile('campaigns'),
        );
        campaignRow = toScenarioResult('campaign_pace', outcome.load, null, outcome.details);
        peaksByScenario.campaign_pace = outcome.peakRssMb;
      } catch (error) {
        log(`  campaign_pace failed: ${describeError(error)}`);
        skipped.push({ name: 'campaign_pace', reason: describeError(error) });
      }
    }
  }

  // webhook_trigger_no_dispatch: last, in a process of its own without job workers (bench/no-dispatch.ts).
  let noDispatchRow: ScenarioResult | undefined;
  if (options.only.includes('webhook_trigger_no_dispatch')) {
    const why =
      storage !== 'postgres'
        ? 'PostgreSQL only: a second service process on the same database'
        : !context.webhookPath
          ? 'needs the benchmark agent, set up by the main service phase (run it with another service scenario)'
          : undefined;
    if (why) {
      skipped.push({ name: 'webhook_trigger_no_dispatch', reason: why });
      await stopBaseline();
    } else {
      const again = await pairBaseline?.({
        name: 'webhook_trigger_no_dispatch',
        target: 'service',
        ratioTo: 'baseline_db_write',
        measures: 'the trigger webhook without dispatch',
        request: triggerRequest(context),
      });
      await stopBaseline();
      process.stdout.write('  webhook_trigger_no_dispatch: a service with WORKERS=0 … ');
      const outcome = await runTriggersWithoutDispatch(
        options,
        location,
        triggerRequest(context),
        rateLimits.env,
        logFile('no-dispatch'),
      );
      const base = again ?? results.get('baseline_db_write');
      const ratio = base?.rps ? ratioBetween(outcome.load.rps, base.rps) : null;
      log(`${outcome.load.rps.toLocaleString('en-US')} req/s, p99 ${outcome.load.p99_ms} ms`);
      results.set('webhook_trigger_no_dispatch', outcome.load);
      peaksByScenario.webhook_trigger_no_dispatch = outcome.peakRssMb;
      noDispatchRow = toScenarioResult('webhook_trigger_no_dispatch', outcome.load, ratio, {
        ...(again
          ? { baseline_rps: again.rps, baseline_measured: 'right before this scenario' }
          : { baseline: 'the run’s first baseline_db_write (not paired)' }),
      });
    }
  }

  const scenarios: ScenarioResult[] = [];
  for (const scenario of wanted) {
    const load = results.get(scenario.name);
    if (!load) continue;
    const own = compound.get(scenario.name);
    const base = paired.get(scenario.name);
    const baselines = base && scenario.ratioTo ? new Map([...results, [scenario.ratioTo, base]]) : results;
    const details = {
      ...own?.details,
      ...(base ? { baseline_rps: base.rps, baseline_measured: 'right before this scenario' } : {}),
    };
    scenarios.push(
      toScenarioResult(
        scenario.name,
        load,
        own ? own.ratio : ratioOf(scenario, load, baselines),
        Object.keys(details).length ? details : undefined,
      ),
    );
  }

  if (campaignRow) scenarios.push(campaignRow);
  if (noDispatchRow) scenarios.push(noDispatchRow);

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
    ...(storage === 'postgres'
      ? {
          db_cpu_ms_per_request: Object.fromEntries(
            [...results].map(([name, load]) => [name, load.db_cpu_ms_per_request ?? null]),
          ),
        }
      : {}),
    cluster,
    targets: [],
    notes,
  };
  if (storage === 'postgres') report.targets = checkTargets(report);
  return { report, profileSummary };
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
        report.db_cpu_ms_per_request,
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
    const details = formatDetails(report.scenarios);
    if (details) lines.push(`\n${details}`);
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
