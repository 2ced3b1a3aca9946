/** The job runner's per-key admission (src/core/jobs/key-gate.ts), with a clock the test moves. */
import { describe, expect, it } from 'vitest';
import { KeyGate } from '../../src/core/jobs/key-gate.js';

describe('KeyGate', () => {
  it('runs up to max per key, lines up the rest while the key progresses, hands them back when it stalls', () => {
    let now = 0;
    const gate = new KeyGate<string>(1000, () => now);
    expect(['a1', 'a2'].map((item) => gate.admit('a', 2, item))).toEqual(['run', 'run']);
    expect(gate.admit('a', 2, 'a3')).toBe('wait');
    // Another key is not affected by a's line.
    expect(gate.admit('b', 2, 'b1')).toBe('run');
    expect(gate.waiting).toBe(1);

    // A finished job of `a` passes its slot to the next in line.
    now = 500;
    expect(gate.finished('a', true)).toBe('a3');
    expect(gate.admit('a', 2, 'a4')).toBe('wait');

    // No success for longer than the patience: the line is handed back, newcomers too.
    now = 1600;
    expect(gate.takeStalled()).toEqual([{ key: 'a', item: 'a4' }]);
    expect(gate.admit('a', 2, 'a5')).toBe('defer');
    // A failure frees the slot but is no progress.
    expect(gate.finished('a', false)).toBeUndefined();
    expect(gate.admit('a', 2, 'a6')).toBe('run');
    expect(gate.admit('a', 2, 'a7')).toBe('defer');

    // Hand-backs are spread out: deferMs from now, then deferMs / max apart.
    expect([0, 1, 2].map(() => gate.deferUntil('a', now, 1000, 2))).toEqual([2600, 3100, 3600]);
  });

  it('keeps a quiet key’s line at max, so a key that just hung cannot fill the window', () => {
    let now = 0;
    const gate = new KeyGate<string>(1000, () => now);
    expect(['a1', 'a2'].map((item) => gate.admit('a', 2, item))).toEqual(['run', 'run']);
    // Busy but answering: the line may grow.
    expect(['a3', 'a4', 'a5'].map((item) => gate.admit('a', 2, item))).toEqual(['wait', 'wait', 'wait']);
    now = 200;
    expect(gate.finished('a', true)).toBe('a3');
    expect(gate.admit('a', 2, 'a6')).toBe('wait');
    // No success for a quarter of the patience: at most max in line, the rest back to the queue.
    now = 500;
    expect(gate.admit('a', 2, 'a7')).toBe('defer');
    expect(gate.waiting).toBe(3);
    // The stall check trims the line to max once the key is quiet, the first in line staying.
    expect(gate.takeStalled()).toEqual([{ key: 'a', item: 'a6' }]);
    expect(gate.waiting).toBe(2);
    // Another key still lines up freely.
    expect(['b1', 'b2', 'b3'].map((item) => gate.admit('b', 2, item))).toEqual(['run', 'run', 'wait']);
    expect(gate.takeStalled()).toEqual([]);
  });
});
