/**
 * webhook_trigger_no_dispatch (PostgreSQL only): the trigger webhook answered by a service process
 * of its own with `WORKERS=0`, after the main service stopped: the calls are stored (call,
 * timeline entry, event, dispatch job) but nothing dispatches them, so the row is the write path
 * alone, closed loop like webhook_trigger. Its ratio is to baseline_db_write measured again right
 * before it (the baseline server waits for it, idle). Run last: the calls it queues stay queued.
 */
import { heapLimitArgv } from '../src/core/config/memory.js';
import { freePort } from '../test/support/server-process.js';
import { serviceEnv } from './environment.js';
import { DIST_SERVER } from './harness.js';
import { type LoadResult, type RequestShape, runLoad } from './load.js';
import type { BenchOptions } from './options.js';
import { startProcess } from './processes.js';

export async function runTriggersWithoutDispatch(
  options: BenchOptions,
  location: string,
  trigger: () => RequestShape,
  extraEnv: Record<string, string>,
  logFile: string,
): Promise<{ load: LoadResult; peakRssMb: number }> {
  const port = await freePort();
  const service = await startProcess({
    name: 'service-no-dispatch',
    args: [...heapLimitArgv([], options.env.NODE_OPTIONS), DIST_SERVER],
    env: serviceEnv(options, 'postgres', location, port, { ...extraEnv, WORKERS: '0' }),
    port,
    readyPath: '/readyz',
    logFile,
  });
  try {
    const load = await runLoad({
      baseUrl: service.baseUrl,
      connections: options.connections,
      duration: options.duration,
      warmup: options.warmup,
      request: trigger,
      cpuSeconds: () => service.cpuSeconds(),
    });
    return { load, peakRssMb: service.peakRssMb() };
  } finally {
    await service.stop();
  }
}
