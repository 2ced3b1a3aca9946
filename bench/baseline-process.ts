/**
 * The bare baseline server (bench/baseline-server.ts) as a process, and the paired baselines.
 *
 * This VM's speed drifts by tens of percent within minutes (bench/README.md), so a ratio between
 * a scenario and a baseline measured ten minutes earlier measured the drift as much as the
 * service. On PostgreSQL the baseline server therefore stays up, idle, while the service runs, and
 * the baseline a scenario's ratio is taken against is measured again right before it, once the
 * service is idle and the database has settled: the ratio compares two loads a few seconds apart. (PGlite lets one process
 * open a data directory at a time: the embedded run keeps its ratios to the first baselines.)
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { queueBacklog } from './database.js';
import { DIST_SERVER, log, ROOT } from './harness.js';
import { type LoadResult, runLoad } from './load.js';
import type { BenchOptions, Storage } from './options.js';
import { type Started, startProcess } from './processes.js';
import type { Scenario, ScenarioContext } from './scenario-types.js';

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

export function startBaselineServer(
  options: BenchOptions,
  storage: Storage,
  location: string,
  port: number,
  logFile: string,
): Promise<Started> {
  return startProcess({
    name: 'baseline server',
    args: [compileBaselineServer()],
    env: {
      NODE_ENV: 'production',
      PORT: String(port),
      ...(storage === 'postgres' ? { BASELINE_DATABASE_URL: location } : { BASELINE_DATA_DIR: location }),
      // The same hash as the service's, also when a run lowers it with --env, on its threads.
      BASELINE_HASH_MEMORY_KIB: options.env.PASSWORD_HASH_MEMORY_KIB ?? '19456',
      BASELINE_HASH_THREADS_MODULE: path.join(
        path.dirname(DIST_SERVER),
        'core',
        'security',
        'password-threads.js',
      ),
      // The same connection pool as the service's, also when a run changes it with --env.
      ...(options.env.DB_POOL_SIZE ? { DB_POOL_SIZE: options.env.DB_POOL_SIZE } : {}),
    },
    port,
    readyPath: '/static',
    logFile,
  });
}

const QUIET_LIMIT_MS = 120_000;

/**
 * Waits (at most two minutes) until the service has nothing left to do from earlier scenarios:
 * no job due or running (webhook_trigger leaves thousands of calls to dial) and the process idle.
 * A baseline measured beside that work would be lowered by it, and the ratio flattered. False when
 * the service did not get there: the scenario then keeps the first baseline.
 */
export async function serviceQuiet(service: Started, databaseUrl: string): Promise<boolean> {
  const started = Date.now();
  while (Date.now() - started < QUIET_LIMIT_MS) {
    const cpuBefore = service.cpuSeconds();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const busy = service.cpuSeconds() - cpuBefore;
    if (busy < 0.05 && (await queueBacklog(databaseUrl).catch(() => -1)) === 0) return true;
  }
  log(`  (the service was still busy after ${QUIET_LIMIT_MS / 1000} s: the first baseline stays)`);
  return false;
}

/** A baseline measured again for one scenario, right before it. */
export type PairBaseline = (scenario: Scenario) => Promise<LoadResult | undefined>;

/**
 * Measures `scenario`'s baseline on the running baseline server with the run's duration and
 * warm-up. Open-loop scenarios are not paired: their rate is fixed, their ratio no target.
 */
export function pairedBaselines(
  baseline: Started,
  baselines: Scenario[],
  context: ScenarioContext,
  options: BenchOptions,
): PairBaseline {
  return async (scenario) => {
    const of = baselines.find((candidate) => candidate.name === scenario.ratioTo);
    if (!of || scenario.overallRate) return undefined;
    const load = await runLoad({
      baseUrl: baseline.baseUrl,
      connections: options.connections,
      duration: options.duration,
      warmup: options.warmup,
      request: of.request(context),
      cpuSeconds: () => baseline.cpuSeconds(),
    });
    log(`  ${of.name} again, for ${scenario.name}: ${load.rps.toLocaleString('en-US')} req/s`);
    return load;
  };
}
