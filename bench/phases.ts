/** Running scenarios against a started process, and the multi-process run. */
import path from 'node:path';
import { freePort } from '../test/support/server-process.js';
import type { PairBaseline } from './baseline-process.js';
import { queueBacklog } from './database.js';
import { serviceEnv } from './environment.js';
import { cleanups, DIST_CLUSTER, log, ROOT } from './harness.js';
import { type LoadResult, runLoad } from './load.js';
import type { BenchOptions, ScenarioName } from './options.js';
import { type Started, startPostgresCpuMeter, startProcess } from './processes.js';
import { type BenchReport, type ClusterScenarioResult, ratioBetween, toScenarioResult } from './report.js';
import { describeError, send } from './requests.js';
import type { Scenario, ScenarioContext } from './scenario-types.js';

export interface PhaseResult {
  results: Map<ScenarioName, LoadResult>;
  /** Peak RSS (MB) of the answering process(es) during each scenario (warm-up included). */
  peaks: Map<ScenarioName, number | null>;
  skipped: { name: ScenarioName; reason: string }[];
  /** Scenarios with their own runner: their ratio and what their row is made of. */
  compound: Map<ScenarioName, { ratio: number | null; details: Record<string, unknown> }>;
  /** Each scenario's baseline, measured again right before it (bench/baseline-process.ts). */
  paired: Map<ScenarioName, LoadResult>;
}

const DATABASE_SETTLE_LIMIT_MS = 60_000;

/**
 * Waits (at most a minute) until the local PostgreSQL is nearly idle: the work an earlier scenario
 * left behind (autovacuum of the rows it churned, a checkpoint) must not be measured as this one's.
 */
async function databaseSettled(dbCpuSeconds: () => number | null, name: string): Promise<void> {
  const started = Date.now();
  let before = dbCpuSeconds();
  while (before !== null && Date.now() - started < DATABASE_SETTLE_LIMIT_MS) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = dbCpuSeconds();
    if (now === null || now - before < 0.5 * 0.1) {
      const waited = Date.now() - started;
      if (waited > 1_000)
        log(`  (PostgreSQL busy with earlier work: ${name} waited ${(waited / 1000).toFixed(1)} s)`);
      return;
    }
    before = now;
  }
  log(`  (PostgreSQL still busy after ${DATABASE_SETTLE_LIMIT_MS / 1000} s: ${name} starts anyway)`);
}

/** PostgreSQL's own CPU is measurable only when the server runs on this machine: its database then. */
function localDatabaseName(url: string | undefined): string | undefined {
  if (!url) return undefined;
  const parsed = new URL(url);
  const local = ['', 'localhost', '127.0.0.1', '[::1]'].includes(parsed.hostname);
  return local ? decodeURIComponent(parsed.pathname.slice(1)) : undefined;
}

export async function runScenarios(
  scenarios: Scenario[],
  target: Started,
  context: ScenarioContext,
  options: BenchOptions,
  label: string,
  /** Results measured before this phase (the baselines), for ratios and compound runners. */
  earlier: Map<ScenarioName, LoadResult>,
  afterEach?: (scenario: Scenario) => Promise<void>,
  pairBaseline?: PairBaseline,
): Promise<PhaseResult> {
  const phase: PhaseResult = {
    results: new Map(),
    peaks: new Map(),
    skipped: [],
    compound: new Map(),
    paired: new Map(),
  };
  const dbCpu = localDatabaseName(context.databaseUrl);
  const meter = dbCpu ? startPostgresCpuMeter(dbCpu) : undefined;
  try {
    await runEach(
      { scenarios, target, context, options, label, earlier, afterEach, pairBaseline },
      phase,
      meter?.seconds,
    );
  } finally {
    meter?.stop();
  }
  return phase;
}

/** runScenarios' arguments, as it was called. */
interface PhaseInputs {
  scenarios: Scenario[];
  target: Started;
  context: ScenarioContext;
  options: BenchOptions;
  label: string;
  earlier: Map<ScenarioName, LoadResult>;
  afterEach?: (scenario: Scenario) => Promise<void>;
  pairBaseline?: PairBaseline;
}

async function runEach(
  inputs: PhaseInputs,
  phase: PhaseResult,
  dbCpuSeconds: (() => number | null) | undefined,
): Promise<void> {
  const { scenarios, target, context, options, label, earlier, afterEach, pairBaseline } = inputs;
  for (const scenario of scenarios) {
    if (dbCpuSeconds) await databaseSettled(dbCpuSeconds, scenario.name);
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
    // A kept ratio target is judged on the median of `pairedRuns` paired runs (the VM drifts).
    const runs = pairBaseline && scenario.pairedRuns && !scenario.run ? scenario.pairedRuns : 1;
    const measured: { result: LoadResult; base: LoadResult | undefined }[] = [];
    const peakSince = target.peakWindow();
    for (let round = 0; round < runs; round++) {
      const base = await pairBaseline?.(scenario);
      if (base) phase.paired.set(scenario.name, base);
      // The baseline's own writes leave work behind too (a checkpoint, an ANALYZE).
      if (base && dbCpuSeconds) await databaseSettled(dbCpuSeconds, scenario.name);
      process.stdout.write(
        `  ${label}${scenario.name}: warm-up ${options.warmup} s, measuring ${options.duration} s` +
          `${scenario.overallRate ? ` at ${scenario.overallRate} req/s offered` : ''} … `,
      );
      let result: LoadResult;
      if (scenario.run) {
        const outcome = await scenario.run({
          baseUrl,
          context,
          options,
          results: new Map([
            ...earlier,
            ...phase.results,
            ...(base && scenario.ratioTo ? [[scenario.ratioTo, base] as const] : []),
          ]),
          cpuSeconds: () => target.cpuSeconds(),
          log,
        });
        result = outcome.load;
        phase.compound.set(scenario.name, { ratio: outcome.ratio, details: outcome.details });
      } else {
        result = await runLoad({
          baseUrl,
          connections: options.connections,
          duration: options.duration,
          warmup: options.warmup,
          overallRate: scenario.overallRate,
          openLoop: options.openLoop,
          request,
          cpuSeconds: () => target.cpuSeconds(),
          dbCpuSeconds,
        });
      }
      measured.push({ result, base });
      if (round < runs - 1)
        log(
          `${result.rps.toLocaleString('en-US')} req/s beside a baseline of ${base?.rps.toLocaleString('en-US')}`,
        );
    }
    let medianNote: string | undefined;
    const ratioOfRun = (m: (typeof measured)[number]) => (m.base?.rps ? m.result.rps / m.base.rps : 0);
    const median = [...measured].sort((x, y) => ratioOfRun(x) - ratioOfRun(y))[
      Math.floor(measured.length / 2)
    ];
    const result = median.result;
    if (median.base) phase.paired.set(scenario.name, median.base);
    if (measured.length > 1) {
      const ratio = ratioBetween(median.result.rps, median.base?.rps ?? 1);
      phase.compound.set(scenario.name, {
        ratio,
        details: {
          paired_runs: measured.map((m) => ({
            rps: m.result.rps,
            baseline_rps: m.base?.rps ?? null,
            ratio: m.base?.rps ? ratioBetween(m.result.rps, m.base.rps) : null,
          })),
          ratio_is: `median of ${measured.length} paired runs`,
        },
      });
      medianNote = `    ${scenario.name}: median of ${measured.length} paired runs ${(ratio * 100).toFixed(1)} % (${measured.map((m) => (ratioOfRun(m) * 100).toFixed(1)).join(', ')})`;
    }
    phase.results.set(scenario.name, result);
    const peak = peakSince();
    phase.peaks.set(scenario.name, peak);
    const odd = Object.entries(result.statuses).filter(([code]) => !code.startsWith('2'));
    log(
      `${result.rps.toLocaleString('en-US')} req/s, p50 ${result.p50_ms} ms, p99 ${result.p99_ms} ms, ` +
        `${result.cpu_ms_per_request ?? '?'} CPU ms/req` +
        (result.db_cpu_ms_per_request == null
          ? ''
          : ` + ${result.db_cpu_ms_per_request} PostgreSQL CPU ms/req`) +
        (peak === null ? '' : `, peak RSS ${peak} MB`) +
        (result.non2xx
          ? `, non-2xx ${result.non2xx} (${odd.map(([c, n]) => `${c}×${n}`).join(' ')}${result.errors ? ` errors×${result.errors}` : ''})`
          : ''),
    );
    if (medianNote) log(medianNote);
    const factor = phase.compound.get(scenario.name)?.details.p99_factor;
    if (typeof factor === 'number') log(`    plans_list p99 beside users_create: ×${factor} its p99 alone`);
    await afterEach?.(scenario);
  }
}

export function ratioOf(
  scenario: Scenario,
  load: LoadResult,
  baselines: Map<ScenarioName, LoadResult>,
): number | null {
  if (!scenario.ratioTo) return null;
  const base = baselines.get(scenario.ratioTo);
  if (!base || base.rps === 0) return null;
  return ratioBetween(load.rps, base.rps);
}

export async function runCluster(
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
    phase = await runScenarios(scenarios, service, context, options, `[${options.cluster}p] `, single);
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
