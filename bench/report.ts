/** The result file (`bench/results/latest*.json`) and the printed tables. */
import type { LoadResult } from './load.js';
import type { ScenarioName, Storage } from './options.js';

export interface ScenarioResult {
  name: ScenarioName;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  non2xx: number;
  /** rps over the scenario's baseline (reads: baseline_db_read, writes: baseline_db_write); null for baselines. */
  ratio: number | null;
}

export interface ClusterScenarioResult extends ScenarioResult {
  /** rps over the same scenario with one process. */
  speedup: number | null;
}

export interface TargetCheck {
  target: string;
  value: string;
  met: boolean;
}

export interface BenchReport {
  storage: Storage;
  node: string;
  cpus: number;
  /** Peak resident memory of the service process during the run (VmHWM). */
  peak_rss_mb: number;
  scenarios: ScenarioResult[];
  measured_at: string;
  settings: { duration_s: number; warmup_s: number; connections: number; users: number };
  /** Load average when the run started: the machine is shared, so numbers move with it. */
  load_average: number[];
  baseline_peak_rss_mb: number | null;
  /** Peak RSS of the service during each scenario, warm-up included (Linux; null elsewhere). */
  peak_rss_mb_by_scenario: Record<string, number | null>;
  skipped: { name: ScenarioName; reason: string }[];
  /** Answers by status code per scenario (diagnostics for non-2xx). */
  statuses: Record<string, Record<string, number>>;
  /**
   * CPU milliseconds the answering process spent per request (user + system, from /proc): unlike
   * req/s it barely moves when other work shares the machine.
   */
  cpu_ms_per_request: Record<string, number | null>;
  cluster: {
    processes: number;
    peak_rss_mb: number;
    scenarios: ClusterScenarioResult[];
    cpu_ms_per_request: Record<string, number | null>;
  } | null;
  targets: TargetCheck[];
  notes: string[];
}

export function toScenarioResult(name: ScenarioName, load: LoadResult, ratio: number | null): ScenarioResult {
  return { name, rps: load.rps, p50_ms: load.p50_ms, p99_ms: load.p99_ms, non2xx: load.non2xx, ratio };
}

const pad = (value: string, width: number, left = false) =>
  left ? value.padEnd(width) : value.padStart(width);
const fmtRatio = (ratio: number | null) => (ratio === null ? '–' : `${Math.round(ratio * 100)} %`);

export function formatTable(
  title: string,
  rows: (ScenarioResult & { speedup?: number | null })[],
  skipped: { name: string; reason: string }[],
  cpu: Record<string, number | null> = {},
): string {
  const withSpeedup = rows.some((row) => row.speedup !== undefined);
  const header = [
    pad('scenario', 18, true),
    pad('req/s', 9),
    pad('p50 ms', 8),
    pad('p99 ms', 8),
    pad('non-2xx', 8),
    pad('ratio', 7),
    pad('CPU ms/req', 11),
    ...(withSpeedup ? [pad('vs 1 proc', 10)] : []),
  ].join(' ');
  const lines = [title, header, '-'.repeat(header.length)];
  for (const row of rows) {
    lines.push(
      [
        pad(row.name, 18, true),
        pad(row.rps.toLocaleString('en-US'), 9),
        pad(row.p50_ms.toFixed(1), 8),
        pad(row.p99_ms.toFixed(1), 8),
        pad(String(row.non2xx), 8),
        pad(fmtRatio(row.ratio), 7),
        pad(cpu[row.name] == null ? '–' : cpu[row.name]!.toFixed(3), 11),
        ...(withSpeedup ? [pad(row.speedup == null ? '–' : `×${row.speedup.toFixed(2)}`, 10)] : []),
      ].join(' '),
    );
  }
  for (const skip of skipped) {
    const reason = skip.reason.length > 90 ? `${skip.reason.slice(0, 89)}…` : skip.reason;
    lines.push(`${pad(skip.name, 18, true)} skipped: ${reason}`);
  }
  return lines.join('\n');
}

/** The performance targets of issue 7 (PostgreSQL, one service process). */
export function checkTargets(report: BenchReport): TargetCheck[] {
  const get = (name: ScenarioName) => report.scenarios.find((s) => s.name === name);
  const checks: TargetCheck[] = [];
  const ratioAtLeast = (name: ScenarioName, min: number) => {
    const s = get(name);
    if (s?.ratio == null) return;
    checks.push({
      target: `${name} ≥ ${min * 100} % of its baseline`,
      value: fmtRatio(s.ratio),
      met: s.ratio >= min,
    });
  };
  ratioAtLeast('plans_list', 0.7);
  ratioAtLeast('subscription_get', 0.7);
  const search = get('users_search');
  if (search)
    checks.push({
      target: 'users_search p99 < 50 ms',
      value: `${search.p99_ms} ms`,
      met: search.p99_ms < 50,
    });
  ratioAtLeast('users_create', 0.5);
  ratioAtLeast('webhook_trigger', 0.5);
  const failing = report.scenarios.filter((s) => s.non2xx > 0);
  checks.push({
    target: 'zero non-2xx in every scenario',
    value: failing.length ? failing.map((s) => `${s.name}: ${s.non2xx}`).join(', ') : '0',
    met: failing.length === 0,
  });
  checks.push({
    target: 'peak RSS < 300 MB',
    value: `${report.peak_rss_mb} MB`,
    met: report.peak_rss_mb < 300,
  });
  return checks;
}

export function formatTargets(checks: TargetCheck[]): string {
  return ['targets:', ...checks.map((c) => `  ${c.met ? 'met   ' : 'MISSED'}  ${c.target}: ${c.value}`)].join(
    '\n',
  );
}
