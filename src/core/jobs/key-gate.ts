/**
 * Per-key admission for the job runner (src/core/jobs/runner.ts): at most `max` jobs of one key (an
 * event delivery's endpoint) run at once in a runner. A claimed job over its key's limit waits in
 * line in memory while the key makes progress (a healthy endpoint frees its slots within
 * milliseconds), and is handed back to the queue for later when the key has made none for
 * `patienceMs` (a dead or hanging endpoint): so one key can never hold more than `max` running
 * jobs plus, for at most `patienceMs`, a few waiting ones, and the rest of the window stays free
 * for other keys. A key quiet for a quarter of that (no success since) keeps at most `max` in
 * line: the rest go back to the queue at once, so a key that just hung cannot fill the window
 * with waiting jobs during its patience (an endpoint hanging beside a busy one moved the busy
 * one's p99 from ~0.26 to ~1 s: bench/README.md, `event_latency`). Pure bookkeeping: no
 * database, no timers.
 */
import type { JobKeyLimit } from './types.js';

/**
 * The queues' per-key limits as a runner of `concurrency` slots applies them: never more than a
 * third of its window, whatever a limit or JOB_CONCURRENCY says, so two stuck keys (hung
 * endpoints) always leave a third of the slots to everything else.
 */
export function capKeyLimits(
  limits: Record<string, JobKeyLimit>,
  concurrency: number,
): Record<string, JobKeyLimit> {
  const share = Math.max(1, Math.floor(concurrency / 3));
  return Object.fromEntries(
    Object.entries(limits).map(([queue, limit]) => [queue, { ...limit, max: Math.min(limit.max, share) }]),
  );
}

interface KeyState<T> {
  /** The key's limit, as last admitted with. */
  max: number;
  running: number;
  waiting: T[];
  /** When a job of this key last finished successfully (or its first job started). */
  progressAt: number;
  /** Hand-backs are spread out from here, so a long backlog does not come back all at once. */
  deferCursor: number;
}

export type Admission = 'run' | 'wait' | 'defer';

export class KeyGate<T> {
  private readonly keys = new Map<string, KeyState<T>>();

  constructor(
    private readonly patienceMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  private stalled(state: KeyState<T>): boolean {
    return this.now() - state.progressAt > this.patienceMs;
  }

  /** No success for a quarter of the patience: the key may be hanging; its line stays short. */
  private quiet(state: KeyState<T>): boolean {
    return this.now() - state.progressAt > this.patienceMs / 4;
  }

  /** Whether `item` of `key` runs now (its slot is taken), waits in line, or goes back to the queue. */
  admit(key: string, max: number, item: T): Admission {
    let state = this.keys.get(key);
    if (!state) {
      state = { max, running: 0, waiting: [], progressAt: this.now(), deferCursor: 0 };
      this.keys.set(key, state);
    }
    state.max = max;
    if (state.running < max) {
      state.running += 1;
      return 'run';
    }
    if (this.stalled(state)) return 'defer';
    if (state.waiting.length >= max && this.quiet(state)) return 'defer';
    state.waiting.push(item);
    return 'wait';
  }

  /** A job of `key` ended; returns the next waiting item, whose slot it now holds, if any. */
  finished(key: string, succeeded: boolean): T | undefined {
    const state = this.keys.get(key);
    if (!state) return undefined;
    state.running -= 1;
    if (succeeded) state.progressAt = this.now();
    const next = state.waiting.shift();
    if (next !== undefined) {
      state.running += 1;
      return next;
    }
    if (state.running === 0) this.keys.delete(key);
    return undefined;
  }

  /**
   * The waiting items of keys that made no progress for `patienceMs`, taken out of line; of keys
   * quiet for a quarter of it, those beyond `max` (the latest first in line keep their places).
   */
  takeStalled(): { key: string; item: T }[] {
    const taken: { key: string; item: T }[] = [];
    for (const [key, state] of this.keys) {
      if (state.waiting.length === 0) continue;
      const keep = this.stalled(state) ? 0 : this.quiet(state) ? state.max : state.waiting.length;
      for (const item of state.waiting.splice(keep)) taken.push({ key, item });
    }
    return taken;
  }

  get waiting(): number {
    let count = 0;
    for (const state of this.keys.values()) count += state.waiting.length;
    return count;
  }

  /**
   * When a job of `key` handed back at `nowMs` runs again: `deferMs` from now, and each further
   * one `deferMs / max` after the previous, so a stalled key's backlog returns about as fast as
   * its `max` slots could take it.
   */
  deferUntil(key: string, nowMs: number, deferMs: number, max: number): number {
    const state = this.keys.get(key);
    const at = Math.max(nowMs + deferMs, state?.deferCursor ?? 0);
    if (state) state.deferCursor = at + deferMs / Math.max(1, max);
    return at;
  }
}
