/**
 * The memory settings a server process starts with (src/core/config/memory.ts, README "Memory"): a V8
 * heap limit, so garbage does not pile up to hundreds of MB beyond a ~60 MB live set.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { heapLimitArgv, RECOMMENDED_OLD_SPACE_MB } from '../../src/core/config/memory.js';

const LIMIT_FLAG = `--max-old-space-size=${RECOMMENDED_OLD_SPACE_MB}`;

describe('memory settings', () => {
  it('adds the heap limit to a server process unless the operator gave one', () => {
    expect(heapLimitArgv([])).toEqual([LIMIT_FLAG]);
    expect(heapLimitArgv(['--enable-source-maps'], '--no-warnings')).toEqual([
      '--enable-source-maps',
      LIMIT_FLAG,
    ]);
    expect(heapLimitArgv(['--max-old-space-size=2048'])).toEqual(['--max-old-space-size=2048']);
    expect(heapLimitArgv([], '--max-old-space-size=1024 --no-warnings')).toEqual([]);
    expect(heapLimitArgv([], '--max_old_space_size=1024')).toEqual([]);
  });

  it('limits the heap of a process started with those flags, and npm start passes them', () => {
    const run = spawnSync(
      process.execPath,
      [...heapLimitArgv([]), '-e', 'console.log(require("v8").getHeapStatistics().heap_size_limit)'],
      { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } },
    );
    const limitMb = Number(run.stdout.trim()) / 1024 / 1024;
    // The old-space limit plus V8's young generation.
    expect(limitMb).toBeGreaterThanOrEqual(RECOMMENDED_OLD_SPACE_MB);
    expect(limitMb).toBeLessThan(RECOMMENDED_OLD_SPACE_MB + 128);

    const scripts = JSON.parse(fs.readFileSync('package.json', 'utf8')).scripts as Record<string, string>;
    expect(scripts.start).toContain(LIMIT_FLAG);
  });
});
