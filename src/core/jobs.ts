/**
 * The durable job queue: rows in `jobs`, written in the same transaction as the change that
 * needs them (a call to dial, an email to send), claimed with FOR UPDATE SKIP LOCKED under a
 * lease so a crashed worker's job is taken over, retried with exponential back-off.
 * Handlers must tolerate running twice (a crash between the work and its acknowledgement).
 */
import { sql } from 'kysely';
import type { Clock } from './clock.js';
import { compileOnce, type Db, type Executor } from './db.js';
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

/** Enqueues a job; pass the transaction of the change it belongs to. Returns its id, or null (singleton). */
export async function enqueueJob(executor: Executor, options: EnqueueOptions): Promise<number | null> {
  const row = await executor
    .insertInto('jobs')
    .values({
      tenant_id: options.tenantId ?? null,
      queue: options.queue,
      payload: JSON.stringify(options.payload ?? {}),
      status: 'queued',
      run_at: options.runAt,
      max_attempts: options.maxAttempts ?? 10,
      singleton_key: options.singletonKey ?? null,
      created_at: options.runAt,
    })
    .onConflict((oc) =>
      oc
        .column('singleton_key')
        .where('singleton_key', 'is not', null)
        .where('status', 'in', ['queued', 'running'])
        .doNothing(),
    )
    .returning('id')
    .executeTakeFirst();
  return row?.id ?? null;
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

export interface WorkerOptions {
  db: Db;
  clock: Clock;
  handlers: Record<string, JobHandler>;
  /** Jobs claimed per poll and run concurrently. */
  batchSize?: number;
  pollIntervalMs?: number;
  /** How long a claim holds before another worker may take the job over; renewed while it runs. */
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

export interface Worker {
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

/**
 * Claims due jobs (and jobs whose lease ran out) for `workerId`, oldest first: a walk of the
 * jobs_due index that stops after `limit` rows (migration 0007), whatever the backlog. `= ANY(ARRAY(…))`
 * rather than `IN (…)` keeps the prepared statement's generic plan on the primary key.
 */
const claimJobs = compileOnce(
  5,
  (db, workerId: string, lockedUntil: Date, queues: string[], now: Date, limit: number) =>
    sql<{
      id: number;
      tenant_id: string | null;
      queue: string;
      payload: unknown;
      attempts: number;
      max_attempts: number;
    }>`
      UPDATE jobs SET status = 'running', attempts = attempts + 1, locked_by = ${workerId},
             locked_until = ${lockedUntil}
      WHERE id = ANY(ARRAY(
        SELECT id FROM jobs
        WHERE queue = ANY(${queues}::text[])
          AND ((status = 'queued' AND run_at <= ${now}) OR (status = 'running' AND locked_until < ${now}))
        ORDER BY run_at, id
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ))
      RETURNING id, tenant_id, queue, payload, attempts, max_attempts`.compile(db),
);

/** Acknowledges a batch's successful jobs in one statement (only those this worker still holds). */
const markJobsDone = compileOnce(3, (db, jobIds: number[], workerId: string, now: Date) =>
  sql`
    UPDATE jobs SET status = 'done', finished_at = ${now}::timestamptz, locked_until = NULL
    WHERE id = ANY(${jobIds}::bigint[]) AND locked_by = ${workerId} AND status = 'running'`.compile(db),
);

export function createWorker(options: WorkerOptions): Worker {
  const { db, clock, handlers } = options;
  const id = `wrk_${randomBase62(12)}`;
  const batchSize = options.batchSize ?? 10;
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  // Short, and renewed every third of it while a job runs: a crashed process's jobs are taken
  // over within seconds, and a long job is not taken over while its worker is alive.
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
    const rows = await claimJobs(db, id, new Date(now.getTime() + leaseMs), queues, now, batchSize);
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
      if (done.length > 0) await markJobsDone(db, done, id, clock.now());
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
