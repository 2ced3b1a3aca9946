/**
 * The durable job queue: rows in `jobs`, written in the same transaction as the change that
 * needs them (a call to dial, an email to send), claimed with FOR UPDATE SKIP LOCKED under a
 * lease so a crashed job runner's job is taken over, retried with exponential back-off.
 * Handlers must tolerate running twice (a crash between the work and its acknowledgement).
 */
import { sql } from 'kysely';
import type { Clock } from './clock.js';
import { type Db, type Executor, runPrepared } from './db.js';
import { randomBase62 } from './ids.js';

export interface JobsTable {
  id: import('kysely').Generated<number>;
  tenant_id: string | null;
  queue: string;
  payload: unknown;
  status: 'queued' | 'running' | 'done' | 'failed';
  run_at: Date;
  attempts: import('kysely').Generated<number>;
  max_attempts: number;
  locked_by: string | null;
  locked_until: Date | null;
  last_error: string | null;
  singleton_key: string | null;
  created_at: Date;
  finished_at: Date | null;
}

declare module './db.js' {
  interface Tables {
    jobs: JobsTable;
  }
}

export interface Job<P = any> {
  id: number;
  tenantId: string | null;
  queue: string;
  payload: P;
  /** 1 on the first run. */
  attempt: number;
  maxAttempts: number;
}

export interface EnqueueOptions {
  queue: string;
  payload: unknown;
  tenantId?: string | null;
  runAt: Date;
  maxAttempts?: number;
  /** When set, nothing is enqueued while a queued or running job has the same key. */
  singletonKey?: string;
}

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

/** A failure that retrying cannot fix: the job ends as failed at once. */
export class PermanentJobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentJobError';
  }
}

/**
 * A transient failure that wants a specific delay before the next attempt. With
 * `countsAsAttempt: false` it is not a failure at all but "not yet" (a call still talking): the
 * run is given back, so polling for as long as it takes never uses up the job's attempts.
 */
export class RetryJobError extends Error {
  readonly countsAsAttempt: boolean;
  constructor(
    message: string,
    readonly delayMs: number,
    options: { countsAsAttempt?: boolean } = {},
  ) {
    super(message);
    this.name = 'RetryJobError';
    this.countsAsAttempt = options.countsAsAttempt ?? true;
  }
}

export type JobHandler = (job: Job) => Promise<void>;

export interface JobRunnerOptions {
  db: Db;
  clock: Clock;
  handlers: Record<string, JobHandler>;
  /** Jobs claimed per poll and run concurrently. */
  batchSize?: number;
  pollIntervalMs?: number;
  /** How long a claim holds before another job runner may take the job over; renewed while it runs. */
  leaseMs?: number;
  /** Back-off before attempt n+1: base * 2^(n-1), capped. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  logger?: JobLogger;
}

/** Where job failures and retries are logged. */
export interface JobLogger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface JobRunner {
  start(): void;
  /** Stops polling and waits for the jobs in hand. */
  stop(): Promise<void>;
  /** Claims and runs one batch now; returns how many jobs ran (tests drive the queue with it). */
  runOnce(): Promise<number>;
  /** Runs batches until none is due. */
  drain(): Promise<number>;
  /** Wakes the poller (after an enqueue in this process). */
  wake(): void;
  readonly id: string;
}

export function backoffDelay(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
}

export function createJobRunner(options: JobRunnerOptions): JobRunner {
  const { db, clock, handlers } = options;
  const id = `wrk_${randomBase62(12)}`;
  const batchSize = options.batchSize ?? 10;
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  // Short, and renewed every third of it while a job runs: a crashed process's jobs are taken
  // over within seconds, and a long job is not taken over while its job runner is alive.
  const leaseMs = options.leaseMs ?? 15_000;
  const backoffBaseMs = options.backoffBaseMs ?? 1_000;
  const backoffMaxMs = options.backoffMaxMs ?? 15 * 60_000;
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<unknown> = Promise.resolve();
  let wakeRequested = false;
  let inBatch = false;

  async function claim(): Promise<Job[]> {
    const queues = Object.keys(handlers);
    if (queues.length === 0) return [];
    const now = clock.now();
    // A walk of the jobs_due index that stops after `batchSize` rows (migration 0007), whatever the
    // backlog. `= ANY(ARRAY(…))` rather than `IN (…)` keeps the generic plan on the primary key.
    const rows = await runPrepared<{
      id: number;
      tenant_id: string | null;
      queue: string;
      payload: unknown;
      attempts: number;
      max_attempts: number;
    }>(db, {
      name: 'jobs_claim',
      text: `
        UPDATE jobs SET status = 'running', attempts = attempts + 1, locked_by = $1, locked_until = $2
        WHERE id = ANY(ARRAY(
          SELECT id FROM jobs
          WHERE queue = ANY($3::text[])
            AND ((status = 'queued' AND run_at <= $4) OR (status = 'running' AND locked_until < $4))
          ORDER BY run_at, id
          LIMIT $5
          FOR UPDATE SKIP LOCKED
        ))
        RETURNING id, tenant_id, queue, payload, attempts, max_attempts`,
      values: [id, new Date(now.getTime() + leaseMs), queues, now, batchSize],
    });
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
    const now = clock.now();
    const mine = (qb: any) =>
      qb.where('id', '=', job.id).where('locked_by', '=', id).where('status', '=', 'running');
    const message = error instanceof Error ? error.message : String(error);
    const notYet = error instanceof RetryJobError && !error.countsAsAttempt;
    const permanent = error instanceof PermanentJobError || (job.attempt >= job.maxAttempts && !notYet);
    if (permanent) {
      options.logger?.error(
        { jobId: job.id, queue: job.queue, attempt: job.attempt, reason: message },
        'job failed',
      );
      await mine(
        db
          .updateTable('jobs')
          .set({ status: 'failed', finished_at: now, last_error: message, locked_until: null }),
      ).execute();
      return;
    }
    const delay =
      error instanceof RetryJobError ? error.delayMs : backoffDelay(job.attempt, backoffBaseMs, backoffMaxMs);
    if (!notYet) {
      options.logger?.warn(
        { jobId: job.id, queue: job.queue, attempt: job.attempt, reason: message },
        'job will retry',
      );
    }
    await mine(
      db.updateTable('jobs').set({
        status: 'queued',
        run_at: new Date(now.getTime() + delay),
        ...(notYet ? { attempts: sql`attempts - 1` } : {}),
        last_error: message,
        locked_until: null,
        locked_by: null,
      }),
    ).execute();
  }

  /** Runs a job; true when it succeeded (acknowledged with its batch), a failure is recorded here. */
  async function runJob(job: Job): Promise<boolean> {
    try {
      await handlers[job.queue](job);
      return true;
    } catch (error) {
      await finishFailed(job, error ?? new Error('job failed'));
      return false;
    }
  }

  const inHand = new Set<number>();
  let renewal: NodeJS.Timeout | undefined;

  function renewLeases(): void {
    if (inHand.size === 0) return;
    db.updateTable('jobs')
      .set({ locked_until: new Date(clock.now().getTime() + leaseMs) })
      .where('id', 'in', [...inHand])
      .where('locked_by', '=', id)
      .where('status', '=', 'running')
      .execute()
      .catch((error) => options.logger?.warn({ err: error }, 'job lease renewal failed'));
  }

  async function runOnce(): Promise<number> {
    const jobs = await claim();
    if (jobs.length === 0) return 0;
    for (const job of jobs) inHand.add(job.id);
    renewal ??= setInterval(renewLeases, Math.max(1, Math.floor(leaseMs / 3))).unref();
    try {
      // Settled, not all(): when the database goes away, recording one job's failure fails too,
      // and the batch must still wait for its other jobs before their leases stop being renewed.
      // A job whose outcome could not be recorded keeps its lease and is run again once it expires.
      const outcomes = await Promise.allSettled(jobs.map(runJob));
      const done = jobs
        .filter((_, i) => outcomes[i].status === 'fulfilled' && outcomes[i].value)
        .map((job) => job.id);
      if (done.length > 0) {
        // Acknowledged in one statement, only the jobs this job runner still holds.
        await runPrepared(db, {
          name: 'jobs_mark_done',
          text: `
            UPDATE jobs SET status = 'done', finished_at = $3::timestamptz, locked_until = NULL
            WHERE id = ANY($1::bigint[]) AND locked_by = $2 AND status = 'running'`,
          values: [done, id, clock.now()],
        });
      }
      const unrecorded = outcomes.find((outcome) => outcome.status === 'rejected');
      if (unrecorded) throw unrecorded.reason;
    } finally {
      for (const job of jobs) inHand.delete(job.id);
      if (inHand.size === 0) {
        clearInterval(renewal);
        renewal = undefined;
      }
    }
    return jobs.length;
  }

  async function loop(): Promise<void> {
    if (!running) return;
    let ran = 0;
    inBatch = true;
    const batch = runOnce()
      .then((n) => {
        ran = n;
      })
      .catch((error) => options.logger?.error({ err: error }, 'job poll failed'));
    current = batch;
    await batch;
    inBatch = false;
    if (!running) return;
    const again = ran > 0 || wakeRequested;
    wakeRequested = false;
    timer = setTimeout(loop, again ? 0 : pollIntervalMs);
  }

  return {
    id,
    start() {
      if (running) return;
      running = true;
      timer = setTimeout(loop, 0);
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      await current;
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
      if (inBatch) {
        wakeRequested = true;
      } else if (running) {
        clearTimeout(timer);
        timer = setTimeout(loop, 0);
      }
    },
  };
}
