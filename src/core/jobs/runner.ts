/**
 * The durable job queue: rows in `jobs`, written in the same transaction as the change that
 * needs them (a call to dial, an email to send), claimed with FOR UPDATE SKIP LOCKED under a
 * lease so a crashed job runner's job is taken over, retried with exponential back-off.
 * Handlers must tolerate running twice (a crash between the work and its acknowledgement).
 */
import { type Executor, isReportedOutage, runPrepared } from '../db/database.js';
import { randomBase62 } from '../ids.js';
import { traceJob } from '../observability/tracing.js';
import { capKeyLimits, KeyGate } from './key-gate.js';
import { claimJobs, handBackJobs, markJobsDone, recordJobFailure, renewJobLeases } from './statements.js';
import {
  backoffDelay,
  type EnqueueOptions,
  type Job,
  type JobRunner,
  type JobRunnerOptions,
  PermanentJobError,
  RetryJobError,
} from './types.js';

export * from './types.js';

/**
 * The one way job rows are written, for a statement that defines `new_job` before it (columns
 * tenant_id, queue, payload jsonb, run_at, max_attempts, singleton_key): each is queued, due at its
 * `run_at`. `enqueueJob` defines one job from its values; the call webhook defines the call's
 * dispatch job from the call it has just stored, so the two are one statement (one round trip).
 */
export const INSERT_NEW_JOBS = `
  INSERT INTO jobs (tenant_id, queue, payload, status, run_at, max_attempts, singleton_key, created_at)
  SELECT tenant_id, queue, payload, 'queued', run_at, max_attempts, singleton_key, run_at FROM new_job`;

/** Enqueues a job; pass the transaction of the change it belongs to. Returns its id, or null (singleton). */
export async function enqueueJob(executor: Executor, options: EnqueueOptions): Promise<number | null> {
  const rows = await runPrepared<{ id: number }>(executor, {
    name: 'jobs_enqueue',
    text: `
      WITH new_job AS (
        SELECT $1::text AS tenant_id, $2::text AS queue, $3::jsonb AS payload, $4::timestamptz AS run_at,
               $5::integer AS max_attempts, $6::text AS singleton_key
      )
      ${INSERT_NEW_JOBS}
      ON CONFLICT (singleton_key) WHERE singleton_key IS NOT NULL AND status IN ('queued', 'running') DO NOTHING
      RETURNING id`,
    values: [
      options.tenantId ?? null,
      options.queue,
      JSON.stringify(options.payload ?? {}),
      options.runAt,
      options.maxAttempts ?? 10,
      options.singletonKey ?? null,
    ],
  });
  return rows[0]?.id ?? null;
}

/** The jobs of one claim: acknowledged together, in one statement, once none of them still runs. */
interface ClaimGroup {
  /** Jobs of the claim not finished yet (running, waiting for their key). */
  unfinished: number;
  /** Succeeded jobs waiting for the group's acknowledgement. */
  acks: InHand[];
  /** Window mode: a hanging job does not hold the others' acknowledgement longer than this. */
  ackTimer?: NodeJS.Timeout;
  window: boolean;
}

interface InHand {
  job: Job;
  group: ClaimGroup;
  /** The limit key it counts against, if any. */
  key?: string;
  /** Settles when the job's outcome is recorded; rejects when it could not be (it runs again after its lease). */
  done: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

/** A group's acknowledgement waits at most this long for the group's slowest job. */
const ACK_DELAY_MS = 50;

/** A claim's statements cost as much for one job as for 25 (JobRunnerOptions.wakeDelayMs). */
export const DEFAULT_WAKE_DELAY_MS = 5;

/**
 * `start()` runs a sliding window over the queue: up to `concurrency` jobs in hand, and as slots
 * free the runner claims again (at most `batchSize` a statement), so a job that takes long (a
 * hanging webhook endpoint) holds only its own slot, never the jobs claimed with it or after it.
 * The jobs of one claim start in the same turn, so steps that coalesce (batching.ts) still meet,
 * and are acknowledged in one statement once all have finished (or ACK_DELAY_MS after the first,
 * when one lingers). `runOnce()`/`drain()` claim a batch and wait for all of it, as tests expect.
 * A queue with a limit (`limits`) runs at most `max` jobs per key at once (key-gate.ts).
 */
export function createJobRunner(options: JobRunnerOptions): JobRunner {
  const { db, clock, handlers } = options;
  const id = `wrk_${randomBase62(12)}`;
  const batchSize = options.batchSize ?? 10;
  const concurrency = Math.max(1, options.concurrency ?? 2 * batchSize);
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const wakeDelayMs = options.wakeDelayMs ?? DEFAULT_WAKE_DELAY_MS;
  // Short, and renewed every third of it while a job runs: a crashed process's jobs are taken
  // over within seconds, and a long job is not taken over while its job runner is alive.
  const leaseMs = options.leaseMs ?? 15_000;
  const backoffBaseMs = options.backoffBaseMs ?? 1_000;
  const backoffMaxMs = options.backoffMaxMs ?? 15 * 60_000;
  const limits = capKeyLimits(options.limits ?? {}, concurrency);
  const keyPatienceMs = options.keyPatienceMs ?? 1_000;
  const keyDeferMs = options.keyDeferMs ?? 1_000;
  const gate = new KeyGate<InHand>(keyPatienceMs);
  /** Claimed and not yet recorded: their leases are renewed. */
  const inHand = new Map<number, InHand>();
  /** Of those, finished and waiting for their group's acknowledgement (they hold no slot). */
  let acking = 0;
  /** Jobs of runOnce() batches still going: their leases are renewed until the batch ends. */
  const inBatches = new Map<number, number>();
  let running = false;
  let claiming: Promise<void> | undefined;
  let claimAgain = false;
  /** The last claim found fewer jobs than it asked for: wait for the poll, a wake or an idle window. */
  let exhausted = false;
  let pumpQueued = false;
  let pollTimer: NodeJS.Timeout | undefined;
  let wakeTimer: NodeJS.Timeout | undefined;
  let renewal: NodeJS.Timeout | undefined;
  let stallCheck: NodeJS.Timeout | undefined;

  async function claim(limit: number): Promise<Job[]> {
    const queues = Object.keys(handlers);
    if (queues.length === 0 || limit <= 0) return [];
    const now = clock.now();
    const rows = await claimJobs(db, id, queues, now, new Date(now.getTime() + leaseMs), limit);
    return rows.map((row) => ({
      id: row.id,
      tenantId: row.tenant_id,
      queue: row.queue,
      payload: row.payload,
      attempt: row.attempts,
      maxAttempts: row.max_attempts,
    }));
  }

  /** Records a failed run: retried later with back-off, or failed for good. */
  async function finishFailed(job: Job, error: unknown): Promise<void> {
    const at = clock.now();
    const message = error instanceof Error ? error.message : String(error);
    const notYet = error instanceof RetryJobError && !error.countsAsAttempt;
    const permanent = error instanceof PermanentJobError || (job.attempt >= job.maxAttempts && !notYet);
    const log = { jobId: job.id, queue: job.queue, attempt: job.attempt, reason: message };
    if (permanent) options.logger?.error(log, 'job failed');
    // A database outage is logged once, by core/db/health.ts, not per job.
    else if (!notYet && !isReportedOutage(error)) options.logger?.warn(log, 'job will retry');
    const delay =
      error instanceof RetryJobError ? error.delayMs : backoffDelay(job.attempt, backoffBaseMs, backoffMaxMs);
    await recordJobFailure(db, id, job.id, {
      message,
      at,
      runAt: permanent ? null : new Date(at.getTime() + delay),
      countsAsAttempt: !notYet,
    });
  }

  /** The job's outcome is recorded (or could not be): it leaves the runner's hands. */
  function release(entry: InHand, error?: unknown): void {
    inHand.delete(entry.job.id);
    if (error === undefined) entry.resolve();
    else entry.reject(error);
    if (inHand.size === 0 && inBatches.size === 0) {
      clearInterval(renewal);
      renewal = undefined;
    }
    if (inHand.size === 0 || !exhausted) schedulePump();
  }

  function flushAcks(group: ClaimGroup): void {
    clearTimeout(group.ackTimer);
    group.ackTimer = undefined;
    const entries = group.acks.splice(0);
    if (entries.length === 0) return;
    acking -= entries.length;
    const ids = entries.map((entry) => entry.job.id);
    markJobsDone(db, id, ids, clock.now()).then(
      () => {
        for (const entry of entries) release(entry);
      },
      (error) => {
        for (const entry of entries) release(entry, error);
      },
    );
  }

  /** The handler of `entry` ended (or the job was handed back): its slot and its key's slot are free. */
  function finished(entry: InHand, succeeded: boolean): void {
    const { group } = entry;
    group.unfinished -= 1;
    if (succeeded) {
      group.acks.push(entry);
      acking += 1;
    }
    if (group.unfinished === 0) flushAcks(group);
    else if (group.acks.length > 0 && group.window) {
      group.ackTimer ??= setTimeout(() => flushAcks(group), ACK_DELAY_MS);
    }
    if (entry.key !== undefined) {
      const next = gate.finished(entry.key, succeeded);
      if (next) launch(next);
    }
    if (!exhausted) schedulePump();
  }

  function launch(entry: InHand): void {
    const { job } = entry;
    traceJob(job, () => handlers[job.queue](job)).then(
      () => finished(entry, true),
      (error) => {
        finished(entry, false);
        finishFailed(job, error ?? new Error('job failed')).then(
          () => release(entry),
          (unrecorded) => release(entry, unrecorded),
        );
      },
    );
  }

  /** Hands jobs back unrun (their key stalled), spread out in time, in one statement. */
  function handBack(entries: InHand[]): void {
    if (entries.length === 0) return;
    const nowMs = clock.now().getTime();
    const back = entries.map((entry) => ({
      id: entry.job.id,
      runAt: new Date(gate.deferUntil(entry.key ?? '', nowMs, keyDeferMs, limits[entry.job.queue]?.max ?? 1)),
    }));
    for (const entry of entries) finished({ ...entry, key: undefined }, false);
    handBackJobs(db, id, back).then(
      () => {
        for (const entry of entries) release(entry);
      },
      (error) => {
        for (const entry of entries) release(entry, error);
      },
    );
  }

  /** Takes the claimed jobs in hand and starts those their key allows. */
  function admit(jobs: Job[], window: boolean): Promise<void>[] {
    const group: ClaimGroup = { unfinished: jobs.length, acks: [], window };
    const deferred: InHand[] = [];
    const dones = jobs.map((job) => {
      let resolve!: () => void;
      let reject!: (error: unknown) => void;
      const done = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      const limit = limits[job.queue];
      const key = limit?.key(job);
      const entry: InHand = {
        job,
        group,
        key: key === undefined ? undefined : `${job.queue}:${key}`,
        done,
        resolve,
        reject,
      };
      inHand.set(job.id, entry);
      const admission = entry.key === undefined || !limit ? 'run' : gate.admit(entry.key, limit.max, entry);
      if (admission === 'run') launch(entry);
      else if (admission === 'defer') deferred.push(entry);
      return done;
    });
    handBack(deferred);
    if (inHand.size > 0) renewal ??= setInterval(renewLeases, Math.max(1, Math.floor(leaseMs / 3))).unref();
    if (gate.waiting > 0) {
      stallCheck ??= setInterval(checkStalled, Math.max(1, Math.floor(keyPatienceMs / 4))).unref();
    }
    return dones;
  }

  function checkStalled(): void {
    handBack(gate.takeStalled().map(({ item }) => item));
    if (gate.waiting === 0) {
      clearInterval(stallCheck);
      stallCheck = undefined;
    }
  }

  function renewLeases(): void {
    const ids = new Set([...inHand.keys(), ...inBatches.keys()]);
    if (ids.size === 0) return;
    renewJobLeases(db, id, [...ids], new Date(clock.now().getTime() + leaseMs)).catch((error) => {
      if (!isReportedOutage(error)) options.logger?.warn({ err: error }, 'job lease renewal failed');
    });
  }

  function schedulePump(): void {
    if (pumpQueued || !running) return;
    pumpQueued = true;
    setImmediate(() => {
      pumpQueued = false;
      pump();
    });
  }

  /** Claims as many jobs as there are free slots (at most a batch), and again while the queue gives them. */
  function pump(): void {
    if (!running) return;
    if (claiming) {
      claimAgain = true;
      return;
    }
    // Finished jobs waiting for their group's acknowledgement hold no slot.
    const want = Math.min(batchSize, concurrency - (inHand.size - acking));
    if (want <= 0) return;
    clearTimeout(pollTimer);
    claiming = (async () => {
      let full = false;
      try {
        const jobs = await claim(want);
        full = jobs.length === want;
        for (const done of admit(jobs, true)) done.catch(() => {});
      } catch (error) {
        if (!isReportedOutage(error)) options.logger?.error({ err: error }, 'job poll failed');
      }
      claiming = undefined;
      exhausted = !full;
      if (full || claimAgain) {
        claimAgain = false;
        schedulePump();
      } else if (running) {
        pollTimer = setTimeout(pump, pollIntervalMs);
      }
    })();
  }

  async function runOnce(): Promise<number> {
    const jobs = await claim(batchSize);
    // Settled, not all(): when recording one job's outcome fails, the others are still waited for,
    // and that job's lease is renewed with theirs; it runs again once the lease lapses.
    for (const job of jobs) inBatches.set(job.id, (inBatches.get(job.id) ?? 0) + 1);
    let outcomes: PromiseSettledResult<void>[];
    try {
      outcomes = await Promise.allSettled(admit(jobs, false));
    } finally {
      for (const job of jobs) {
        const n = (inBatches.get(job.id) ?? 1) - 1;
        if (n > 0) inBatches.set(job.id, n);
        else inBatches.delete(job.id);
      }
      if (inHand.size === 0 && inBatches.size === 0) {
        clearInterval(renewal);
        renewal = undefined;
      }
    }
    const unrecorded = outcomes.find((outcome) => outcome.status === 'rejected');
    if (unrecorded) throw unrecorded.reason;
    return jobs.length;
  }

  return {
    id,
    start() {
      if (running) return;
      running = true;
      exhausted = false;
      schedulePump();
    },
    async stop() {
      running = false;
      clearTimeout(pollTimer);
      clearTimeout(wakeTimer);
      wakeTimer = undefined;
      await claiming;
      await Promise.allSettled([...inHand.values()].map((entry) => entry.done));
    },
    runOnce,
    async drain() {
      let total = 0;
      for (;;) {
        const n = await runOnce();
        if (n === 0) return total;
        total += n;
      }
    },
    wake() {
      if (!running) return;
      exhausted = false;
      if (wakeDelayMs === 0) {
        clearTimeout(pollTimer);
        schedulePump();
        return;
      }
      if (wakeTimer) return;
      wakeTimer = setTimeout(() => {
        wakeTimer = undefined;
        clearTimeout(pollTimer);
        schedulePump();
      }, wakeDelayMs);
    },
  };
}
