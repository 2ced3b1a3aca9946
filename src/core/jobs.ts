/**
 * The durable job queue: rows in `jobs`, written in the same transaction as the change that
 * needs them (a call to dial, an email to send), claimed with FOR UPDATE SKIP LOCKED under a
 * lease so a crashed job runner's job is taken over, retried with exponential back-off.
 * Handlers must tolerate running twice (a crash between the work and its acknowledgement).
 */
import { coalesce } from './batching.js';
import { type Executor, runPrepared } from './db.js';
import { randomBase62 } from './ids.js';
import { claimJobs, handBackJobs, markJobsDone, recordJobFailure, renewJobLeases } from './job-statements.js';
import {
  backoffDelay,
  type EnqueueOptions,
  type Job,
  type JobKeyLimit,
  type JobRunner,
  type JobRunnerOptions,
  PermanentJobError,
  RetryJobError,
} from './job-types.js';
import { KeyGate } from './key-gate.js';

export * from './job-types.js';

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

interface InHand {
  job: Job;
  /** The limit key it counts against, if any. */
  key?: string;
  /** Settles when the job's outcome is recorded; rejects when it could not be (it runs again after its lease). */
  done: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * A sliding window over the queue: up to `concurrency` jobs in hand, and as soon as some finish
 * (those finishing in the same turn together) the freed slots are claimed again, so a job that
 * takes long (a hanging webhook endpoint) holds only its own slot. The jobs of one claim start
 * in the same turn, so steps that coalesce (batching.ts) still meet. Jobs finishing in the same
 * turn are acknowledged in one statement. A queue with a limit (`limits`) runs at most `max` jobs
 * per key at once; see key-gate.ts for the ones over it.
 */
export function createJobRunner(options: JobRunnerOptions): JobRunner {
  const { db, clock, handlers } = options;
  const id = `wrk_${randomBase62(12)}`;
  const batchSize = options.batchSize ?? 10;
  const concurrency = Math.max(1, options.concurrency ?? 2 * batchSize);
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  // Short, and renewed every third of it while a job runs: a crashed process's jobs are taken
  // over within seconds, and a long job is not taken over while its job runner is alive.
  const leaseMs = options.leaseMs ?? 15_000;
  const backoffBaseMs = options.backoffBaseMs ?? 1_000;
  const backoffMaxMs = options.backoffMaxMs ?? 15 * 60_000;
  const limits = options.limits ?? {};
  const keyPatienceMs = options.keyPatienceMs ?? 1_000;
  const keyDeferMs = options.keyDeferMs ?? 1_000;
  const gate = new KeyGate<InHand>(keyPatienceMs);
  const inHand = new Map<number, InHand>();
  /** Jobs of runOnce() batches still going: their leases are renewed until the whole batch ends. */
  const inBatches = new Map<number, number>();
  let running = false;
  let drainers = 0;
  let claiming: Promise<void> | undefined;
  let claimAgain = false;
  let pumpQueued = false;
  let pollTimer: NodeJS.Timeout | undefined;
  let renewal: NodeJS.Timeout | undefined;
  let stallCheck: NodeJS.Timeout | undefined;
  let claimed = 0;
  let idleWaiters: { resolve(): void; reject(error: unknown): void }[] = [];
  let drainError: unknown;

  async function claim(limit: number): Promise<Job[]> {
    const queues = Object.keys(handlers);
    if (queues.length === 0 || limit <= 0) return [];
    const now = clock.now();
    const rows = await claimJobs(db, id, queues, now, new Date(now.getTime() + leaseMs), limit);
    claimed += rows.length;
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
    else if (!notYet) options.logger?.warn(log, 'job will retry');
    const delay =
      error instanceof RetryJobError ? error.delayMs : backoffDelay(job.attempt, backoffBaseMs, backoffMaxMs);
    await recordJobFailure(db, id, job.id, {
      message,
      at,
      runAt: permanent ? null : new Date(at.getTime() + delay),
      countsAsAttempt: !notYet,
    });
  }

  // Jobs finishing in the same turn are acknowledged together (a claimed batch of dispatch jobs
  // finishes together: one statement, as when the whole batch was acknowledged at once).
  const acknowledge = coalesce(async (ids: number[]) => {
    await markJobsDone(db, id, ids, clock.now());
    return ids.map(() => undefined);
  });

  function settle(entry: InHand, outcome: { error?: unknown; succeeded: boolean }): void {
    inHand.delete(entry.job.id);
    if ('error' in outcome) entry.reject(outcome.error);
    else entry.resolve();
    if (entry.key !== undefined) {
      const next = gate.finished(entry.key, outcome.succeeded);
      if (next) launch(next);
    }
    stopRenewalWhenIdle();
    schedulePump();
  }

  function stopRenewalWhenIdle(): void {
    if (inHand.size > 0 || inBatches.size > 0) return;
    clearInterval(renewal);
    renewal = undefined;
  }

  function launch(entry: InHand): void {
    const { job } = entry;
    void (async () => {
      let succeeded = false;
      try {
        await handlers[job.queue](job);
        succeeded = true;
      } catch (error) {
        try {
          await finishFailed(job, error ?? new Error('job failed'));
        } catch (unrecorded) {
          settle(entry, { error: unrecorded, succeeded: false });
          return;
        }
        settle(entry, { succeeded: false });
        return;
      }
      try {
        await acknowledge(job.id);
        settle(entry, { succeeded });
      } catch (unrecorded) {
        settle(entry, { error: unrecorded, succeeded });
      }
    })();
  }

  /** Hands jobs back unrun (their key stalled), spread out in time, in one statement. */
  function handBack(entries: InHand[]): void {
    if (entries.length === 0) return;
    const nowMs = clock.now().getTime();
    const back = entries.map((entry) => ({
      id: entry.job.id,
      runAt: new Date(gate.deferUntil(entry.key ?? '', nowMs, keyDeferMs, limitOf(entry.job)?.max ?? 1)),
    }));
    handBackJobs(db, id, back).then(
      () => {
        for (const entry of entries) settle(entry, { succeeded: false });
      },
      (error) => {
        for (const entry of entries) settle(entry, { error, succeeded: false });
      },
    );
  }

  const limitOf = (job: Job): JobKeyLimit | undefined => limits[job.queue];

  /** Takes the claimed jobs in hand and starts those their key allows. */
  function admit(jobs: Job[]): Promise<void>[] {
    const deferred: InHand[] = [];
    const dones = jobs.map((job) => {
      let resolve!: () => void;
      let reject!: (error: unknown) => void;
      const done = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      const limit = limitOf(job);
      const key = limit?.key(job);
      const entry: InHand = {
        job,
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
    renewJobLeases(db, id, [...ids], new Date(clock.now().getTime() + leaseMs)).catch((error) =>
      options.logger?.warn({ err: error }, 'job lease renewal failed'),
    );
  }

  function schedulePump(): void {
    if (pumpQueued || !(running || drainers > 0)) return;
    pumpQueued = true;
    setImmediate(() => {
      pumpQueued = false;
      pump();
    });
  }

  function settleIdle(error?: unknown): void {
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const waiter of waiters) {
      if (error === undefined) waiter.resolve();
      else waiter.reject(error);
    }
  }

  /** Claims as many jobs as there are free slots (at most a batch), and again while the queue gives them. */
  function pump(): void {
    if (!(running || drainers > 0)) return;
    if (claiming) {
      claimAgain = true;
      return;
    }
    const want = Math.min(batchSize, concurrency - inHand.size);
    if (want <= 0) return;
    clearTimeout(pollTimer);
    claiming = (async () => {
      let full = false;
      try {
        const jobs = await claim(want);
        full = jobs.length === want;
        for (const done of admit(jobs)) {
          done.catch((error) => {
            drainError ??= error;
          });
        }
      } catch (error) {
        options.logger?.error({ err: error }, 'job poll failed');
        drainError ??= error;
      }
      claiming = undefined;
      if (full || claimAgain) {
        claimAgain = false;
        schedulePump();
        return;
      }
      // Nothing more is due: idle once nothing is in hand either; a finishing job claims again.
      if (inHand.size === 0) {
        const error = drainError;
        drainError = undefined;
        settleIdle(error);
      }
      if (running) pollTimer = setTimeout(pump, pollIntervalMs);
    })();
  }

  return {
    id,
    start() {
      if (running) return;
      running = true;
      schedulePump();
    },
    async stop() {
      running = false;
      clearTimeout(pollTimer);
      await claiming;
      await Promise.allSettled([...inHand.values()].map((entry) => entry.done));
    },
    async runOnce() {
      const jobs = await claim(batchSize);
      // Settled, not all(): when recording one job's outcome fails, the others are still waited for,
      // and that job's lease is renewed with theirs; it runs again once the lease lapses.
      for (const job of jobs) inBatches.set(job.id, (inBatches.get(job.id) ?? 0) + 1);
      let outcomes: PromiseSettledResult<void>[];
      try {
        outcomes = await Promise.allSettled(admit(jobs));
      } finally {
        for (const job of jobs) {
          const n = (inBatches.get(job.id) ?? 1) - 1;
          if (n > 0) inBatches.set(job.id, n);
          else inBatches.delete(job.id);
        }
        stopRenewalWhenIdle();
      }
      const unrecorded = outcomes.find((outcome) => outcome.status === 'rejected');
      if (unrecorded) throw unrecorded.reason;
      return jobs.length;
    },
    async drain() {
      const before = claimed;
      drainers += 1;
      try {
        await new Promise<void>((resolve, reject) => {
          idleWaiters.push({ resolve, reject });
          schedulePump();
        });
      } finally {
        drainers -= 1;
      }
      return claimed - before;
    },
    wake() {
      if (!running) return;
      clearTimeout(pollTimer);
      schedulePump();
    },
  };
}
