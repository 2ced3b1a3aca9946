/**
 * The job queue's shapes (./runner.ts re-exports them): the `jobs` table, a claimed job, the errors
 * a handler throws to steer its retries, and the job runner's options and interface.
 */

import type { Generated } from 'kysely';
import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';

export interface JobsTable {
  id: Generated<number>;
  tenant_id: string | null;
  queue: string;
  payload: unknown;
  status: 'queued' | 'running' | 'done' | 'failed';
  run_at: Date;
  attempts: Generated<number>;
  max_attempts: number;
  locked_by: string | null;
  locked_until: Date | null;
  last_error: string | null;
  singleton_key: string | null;
  created_at: Date;
  finished_at: Date | null;
}

declare module '../db/database.js' {
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

/** A cap on the jobs of one key (an endpoint) running at once in one job runner. */
export interface JobKeyLimit {
  /** The key a job counts against, or undefined for none. */
  key(job: Job): string | undefined;
  /** Jobs of one key running at once; never more than a third of the runner's `concurrency`. */
  max: number;
}

export interface JobRunnerOptions {
  db: Db;
  clock: Clock;
  handlers: Record<string, JobHandler>;
  /** Most jobs claimed by one statement; the jobs of one claim start together (see batching.ts). */
  batchSize?: number;
  /** Most jobs in hand at once (running, or waiting for their key); default 2 × batchSize. */
  concurrency?: number;
  /** Per-queue caps by key (src/core/jobs/key-gate.ts). */
  limits?: Record<string, JobKeyLimit>;
  /** A key whose jobs made no progress this long has its waiting jobs handed back. */
  keyPatienceMs?: number;
  /** A handed-back job runs again about this much later (not counted as an attempt). */
  keyDeferMs?: number;
  pollIntervalMs?: number;
  /**
   * A wake (a job just queued in this process) claims this much later, so the jobs queued
   * meanwhile share one claim and one statement per step instead of one each: at a few hundred
   * calls a second every trigger would otherwise claim its own dispatch job. Default 5 ms; 0
   * claims at once.
   */
  wakeDelayMs?: number;
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
  /** Keeps up to `concurrency` jobs in hand, claiming more as they finish. */
  start(): void;
  /** Stops claiming and waits for the jobs in hand. */
  stop(): Promise<void>;
  /** Claims one batch now and waits for its jobs; returns how many were claimed (tests drive the queue with it). */
  runOnce(): Promise<number>;
  /** Runs jobs as `start` does until none is due and none is in hand; returns how many were claimed. */
  drain(): Promise<number>;
  /** Wakes the poller (after an enqueue in this process). */
  wake(): void;
  readonly id: string;
}

export function backoffDelay(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
}
