/**
 * Multi-process entry point: `WEB_CONCURRENCY=N node dist/cluster.js` runs N copies of the server
 * (src/server.ts) sharing one port through node:cluster. PostgreSQL only: the embedded database
 * lives in one process that holds DATA_DIR, so several processes cannot share it.
 *
 * The primary applies pending migrations once, forks the workers, restarts a worker that dies
 * unexpectedly, and on SIGTERM/SIGINT passes the signal on and waits for every worker's graceful
 * shutdown (in-flight requests and jobs finish).
 */
import cluster, { type Worker } from 'node:cluster';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type Config, ConfigError, loadConfig } from './core/config/config.js';
import { heapLimitArgv, RECOMMENDED_MMAP_THRESHOLD } from './core/config/memory.js';
import { openDatabase } from './core/db/database.js';
import { migrate } from './core/db/migrate.js';
import { serveClusterMetrics } from './metrics/cluster.js';

const MAX_PROCESSES = 64;
/** A worker that dies sooner than this after starting counts towards the crash loop guard. */
const EARLY_EXIT_MS = 10_000;
const MAX_EARLY_EXITS = 5;
const SHUTDOWN_TIMEOUT_MS = 30_000;

/** WEB_CONCURRENCY: the number of server processes; defaults to the number of CPUs. */
export function webConcurrency(env: Record<string, string | undefined> = process.env): number {
  const raw = env.WEB_CONCURRENCY;
  if (raw === undefined || raw === '') return Math.min(MAX_PROCESSES, os.availableParallelism());
  if (!/^\d+$/.test(raw)) throw new ConfigError('WEB_CONCURRENCY', `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < 1 || value > MAX_PROCESSES) {
    throw new ConfigError('WEB_CONCURRENCY', `must be between 1 and ${MAX_PROCESSES}, got ${value}`);
  }
  return value;
}

function usesPostgres(config: Config): boolean {
  return config.databaseUrl !== undefined && /^postgres(ql)?:/.test(config.databaseUrl);
}

/** The compiled server next to this file (server.js), or server.ts when run through tsx. */
function serverEntry(): string {
  const self = fileURLToPath(import.meta.url);
  return path.join(path.dirname(self), `server${path.extname(self)}`);
}

async function runPrimary(): Promise<void> {
  let config: Config;
  let processes: number;
  try {
    config = loadConfig();
    processes = webConcurrency();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(78);
    }
    throw error;
  }

  if (!usesPostgres(config)) {
    if (processes > 1) {
      console.error(
        `WEB_CONCURRENCY=${processes} needs PostgreSQL (DATABASE_URL=postgres://…). The embedded database is ` +
          'single-process by design: one process owns DATA_DIR. Unset WEB_CONCURRENCY (or set it to 1) to run embedded.',
      );
      process.exit(78);
    }
  }
  if (processes === 1) {
    await import(pathToFileURL(serverEntry()).href);
    return;
  }

  // Migrate once here so the workers start against an up-to-date schema without queueing on the
  // migration lock one after another.
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: 1,
  });
  try {
    await migrate(database);
  } finally {
    await database.close();
  }

  // glibc keeps a freed 19 MiB password-hash buffer in each hashing thread's malloc arena once it has
  // raised its mmap threshold; a fixed threshold returns it to the system (README, "Memory").
  // Read by glibc when a process starts, so it is set here for the workers.
  process.env.MALLOC_MMAP_THRESHOLD_ ??= String(RECOMMENDED_MMAP_THRESHOLD);
  cluster.setupPrimary({
    exec: serverEntry(),
    execArgv: heapLimitArgv(process.execArgv, process.env.NODE_OPTIONS),
  });
  let stopping = false;
  const startedAt = new Map<Worker, number>();
  let earlyExits = 0;

  serveClusterMetrics();
  const fork = () => startedAt.set(cluster.fork(), Date.now());
  for (let i = 0; i < processes; i++) fork();

  cluster.on('exit', (worker, code, signal) => {
    const started = startedAt.get(worker) ?? 0;
    startedAt.delete(worker);
    if (stopping) {
      if (startedAt.size === 0) process.exit(0);
      return;
    }
    console.error(
      `voiceplane: worker ${worker.process.pid} exited (${signal ?? `code ${code}`}); starting another`,
    );
    if (Date.now() - started < EARLY_EXIT_MS && ++earlyExits >= MAX_EARLY_EXITS) {
      console.error(`voiceplane: ${MAX_EARLY_EXITS} workers exited right after starting; giving up`);
      process.exit(1);
    }
    fork();
  });

  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    if (startedAt.size === 0) process.exit(0);
    for (const worker of startedAt.keys()) worker.process.kill(signal);
    setTimeout(() => {
      console.error('voiceplane: workers did not stop in time; exiting');
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

if (cluster.isPrimary) {
  runPrimary().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
