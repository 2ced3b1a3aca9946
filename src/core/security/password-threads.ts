/**
 * Password hashing threads: one worker thread per core, each running its hashes one after the
 * other at a lower scheduling priority than the event loop.
 *
 * Why not libuv's pool (the binding's async functions): its threads run at the event loop's
 * priority, so while users are created both cores hash and every other request waits its turn
 * for a core; and a finished hash's slot was handed on through the event loop, so a busy loop
 * left the cores idle between hashes. Here each thread takes its next job from its own queue,
 * and lowers its own nice value (Linux keeps one per thread: /proc/thread-self names the thread),
 * so the kernel runs the event loop first and hashes with what is left (nice ranks threads of one
 * scheduling group: a process in another autogroup or cgroup is not ranked below, README
 * "Password hashing"). bench/README.md, "Hashing threads below the event loop", has the
 * measurements.
 */
import { createRequire } from 'node:module';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { type ApiError, temporarilyUnavailable } from '../errors.js';

/**
 * Nice value of a hashing thread: the lowest, so a hash gets what the event loop leaves of the
 * cores (the scheduler weighs nice 19 at ~1.5 % of nice 0). Under a load that saturates every core
 * hashes slow to a crawl while the rest of the API keeps its latency: the trade the bench's
 * mixed_create_read asks for. Nice 10 left plans_list's p99 beside users_create at ×4 of its p99
 * alone, nice 19 at ×3, SCHED_IDLE (`chrt --idle`) also ×3 with fewer users created.
 */
const HASH_THREAD_NICE = 19;

/** One hash at a time per core: more would not finish sooner (pure CPU), each holds 19 MiB. */
const THREADS = Math.max(1, os.availableParallelism());

export type HashJob =
  | { op: 'argon2-hash'; password: string; options: Record<string, number> }
  | { op: 'argon2-verify'; stored: string; password: string }
  | {
      op: 'scrypt';
      password: string;
      salt: Buffer;
      keylen: number;
      options: { N: number; r: number; p: number; maxmem: number };
    };

type Outcome =
  | { id: number; failed: false; expired: true }
  | { id: number; failed: false; result: string | boolean | Uint8Array }
  | { id: number; failed: true; result: string };

// CommonJS, run with `eval`: no file to resolve, the same under tsx, vitest and dist/.
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const argon2 = require(workerData.argon2Path);
try {
  const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
  os.setPriority(tid, workerData.nice);
} catch {
  // Not Linux, or no /proc: the thread keeps the process's priority.
}
parentPort.on('message', (job) => {
  if (Date.now() > job.deadline) {
    parentPort.postMessage({ id: job.id, failed: false, expired: true });
    return;
  }
  try {
    let result;
    if (job.op === 'argon2-hash') result = argon2.hashSync(job.password, job.options);
    else if (job.op === 'argon2-verify') result = argon2.verifySync(job.stored, job.password);
    else result = crypto.scryptSync(job.password, job.salt, job.keylen, job.options);
    parentPort.postMessage({ id: job.id, failed: false, result });
  } catch (error) {
    parentPort.postMessage({ id: job.id, failed: true, result: String((error && error.message) || error) });
  }
});
`;

/**
 * A job still queued after this long is dropped with a 503 instead of run: by then its client has
 * likely given up (a sign-in waiting half a minute), and on a machine too busy to hash, running it
 * anyway only delays the jobs behind it.
 */
export const HASH_QUEUE_DEADLINE_MS = 30_000;

/** An idle thread is stopped after this long (its isolate and arena, ~30 MB, given back). */
const IDLE_THREAD_MS = 30_000;

/** A job lost with its thread: 503, retried like any other moment of unavailability. */
function hashingUnavailable(reason: string): ApiError {
  const error = temporarilyUnavailable();
  error.cause = reason;
  return error;
}

/** The binding refused the job's input (a malformed stored hash, parameters out of range). */
export class HashInputError extends Error {}

interface HashThread {
  worker: Worker;
  pending: Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>;
  idleTimer?: NodeJS.Timeout;
}

const argon2Path = createRequire(import.meta.url).resolve('@node-rs/argon2');
const threads: HashThread[] = [];
let nextJobId = 1;

function startThread(): HashThread {
  const worker = new Worker(THREAD_SOURCE, {
    eval: true,
    workerData: { argon2Path, nice: HASH_THREAD_NICE },
  });
  // Idle hashing threads must not keep a finished process (or a test file) alive; one with work
  // does (a script awaiting a hash).
  worker.unref();
  const thread: HashThread = { worker, pending: new Map() };
  const retire = (reason: string) => {
    const error = hashingUnavailable(reason);
    clearTimeout(thread.idleTimer);
    const index = threads.indexOf(thread);
    if (index >= 0) threads.splice(index, 1);
    for (const job of thread.pending.values()) job.reject(error);
    thread.pending.clear();
  };
  worker.on('message', (outcome: Outcome) => {
    const job = thread.pending.get(outcome.id);
    if (!job) return;
    thread.pending.delete(outcome.id);
    if (thread.pending.size === 0) {
      worker.unref();
      thread.idleTimer = setTimeout(() => {
        retire('the password hashing thread was stopped');
        void worker.terminate();
      }, IDLE_THREAD_MS).unref();
    }
    if (outcome.failed) job.reject(new HashInputError(outcome.result));
    else if ('expired' in outcome) job.reject(hashingUnavailable('waited too long for a hashing thread'));
    else job.resolve(outcome.result);
  });
  worker.on('error', (error) => retire(`the password hashing thread failed: ${error.message}`));
  worker.on('exit', (code) => retire(`the password hashing thread exited (code ${code})`));
  return thread;
}

/**
 * The thread with the fewest jobs queued; a new one while every thread has work and there are
 * fewer than one per core (so a crashed or stopped thread is replaced on the next job).
 */
function leastBusyThread(): HashThread {
  const best = threads.reduce<HashThread | undefined>(
    (chosen, thread) => (chosen && chosen.pending.size <= thread.pending.size ? chosen : thread),
    undefined,
  );
  if (best && (best.pending.size === 0 || threads.length >= THREADS)) return best;
  const started = startThread();
  threads.push(started);
  return started;
}

/**
 * Runs `job` on a hashing thread. Rejects with HashInputError when the binding refuses the
 * input, with a 503 ApiError when the thread itself failed (the job may not have run) or the job
 * waited longer than `deadlineMs` for its turn.
 */
export function runHashJob(
  job: Extract<HashJob, { op: 'argon2-hash' }>,
  deadlineMs?: number,
): Promise<string>;
export function runHashJob(
  job: Extract<HashJob, { op: 'argon2-verify' }>,
  deadlineMs?: number,
): Promise<boolean>;
export function runHashJob(job: Extract<HashJob, { op: 'scrypt' }>, deadlineMs?: number): Promise<Buffer>;
export function runHashJob(job: HashJob, deadlineMs = HASH_QUEUE_DEADLINE_MS): Promise<unknown> {
  const thread = leastBusyThread();
  const id = nextJobId++;
  return new Promise((resolve, reject) => {
    thread.pending.set(id, {
      resolve: (value) => resolve(value instanceof Uint8Array ? Buffer.from(value) : value),
      reject,
    });
    if (thread.pending.size === 1) {
      clearTimeout(thread.idleTimer);
      thread.worker.ref();
    }
    thread.worker.postMessage({ ...job, id, deadline: Date.now() + deadlineMs });
  });
}

/** Stops every hashing thread; their jobs fail with 503 and the next job starts a new thread. */
export async function stopHashThreads(): Promise<void> {
  await Promise.all(threads.map((thread) => thread.worker.terminate()));
}
