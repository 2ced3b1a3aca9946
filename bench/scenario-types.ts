/** What a scenario is, and what one with its own runner gets and answers (bench/scenarios.ts). */
import type { LoadResult, RequestShape } from './load.js';
import type { BenchOptions, ScenarioName } from './options.js';
import type { BenchFixture } from './seed.js';

export interface ScenarioContext {
  fixture: BenchFixture;
  /** Path of the benchmark agent's call-trigger webhook, when agents exist. */
  webhookPath?: string;
  /** The benchmark agent (the webhook's), for POST /api/v1/calls. */
  agentId?: string;
  /** Why the webhook scenario cannot run, when it cannot. */
  webhookUnavailable?: string;
  /** The Cookie header of a console owner's session (bench/console-scenarios.ts). */
  consoleCookie?: string;
  /** Why the console scenarios cannot run, when they cannot. */
  consoleUnavailable?: string;
  /** PostgreSQL only: the benchmark database, for what only the database can tell (dispatch times). */
  databaseUrl?: string;
}

/** What a scenario with its own `run` gets. */
export interface ScenarioRun {
  baseUrl: string;
  context: ScenarioContext;
  options: BenchOptions;
  /** Results so far in this engine's run, baselines included. */
  results: Map<ScenarioName, LoadResult>;
  cpuSeconds: () => number;
  log(message: string): void;
}

export interface CompoundResult {
  /** The row of the table (what each field means is in bench/README.md, per scenario). */
  load: LoadResult;
  ratio: number | null;
  details: Record<string, unknown>;
}

export interface Scenario {
  name: ScenarioName;
  /** Which process answers: the bare baseline server or the service. */
  target: 'baseline' | 'service';
  /** The baseline the ratio is computed against; undefined for the baselines themselves. */
  ratioTo?: 'baseline_db_read' | 'baseline_db_write' | 'baseline_hash';
  /** What it measures (printed in bench/README.md). */
  measures: string;
  /** PostgreSQL: run this many times, each with its paired baseline; the ratio is the median run's. */
  pairedRuns?: number;
  /** Open loop: requests offered per second over all connections, evenly spaced (paced.ts). */
  overallRate?: number;
  /** Reason the scenario cannot run yet (checked before the probe request). */
  unavailable?(context: ScenarioContext): string | undefined;
  request(context: ScenarioContext): RequestShape | (() => RequestShape);
  /** Replaces the single closed-loop load; such scenarios are left out of the multi-process run. */
  run?(run: ScenarioRun): Promise<CompoundResult>;
}
