/**
 * mixed_create_read: does hashing starve the event loop? plans_list is measured alone, then
 * again while users_create keeps the hash pool busy on its own connections; the p99 of plans_list
 * under the mix over its p99 alone is the answer (the target: at most 3×; see bench/README.md,
 * "Targets").
 */
import { type LoadResult, type RequestShape, runLoad } from './load.js';
import type { CompoundResult, ScenarioRun } from './scenario-types.js';

/** Connections sending users_create beside plans_list: more than the hash pool's slots (one per core). */
export const MIXED_CREATE_CONNECTIONS = 8;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runMixedCreateRead(
  run: ScenarioRun,
  plans: RequestShape,
  create: () => RequestShape,
): Promise<CompoundResult> {
  const { baseUrl, options, cpuSeconds } = run;
  const alone = await runLoad({
    baseUrl,
    connections: options.connections,
    duration: options.duration,
    warmup: options.warmup,
    request: plans,
    cpuSeconds,
  });
  // users_create starts first and runs past the end of the measured window, so the hash pool is
  // full for all of it; plans_list is already warm from the run alone.
  const background = runLoad({
    baseUrl,
    connections: MIXED_CREATE_CONNECTIONS,
    duration: options.warmup + options.duration + 2,
    warmup: 0,
    request: create,
  });
  await sleep(Math.max(1, options.warmup) * 1000);
  const mixed = await runLoad({
    baseUrl,
    connections: options.connections,
    duration: options.duration,
    warmup: 0,
    request: plans,
    cpuSeconds,
  });
  const creating = await background;
  // p99s to the hundredth of a millisecond (load.ts); one under 1 ms alone counts as 1 ms, a
  // difference no user notices. Rounded up, so the ≤ 3× target is never met by rounding.
  const factor = Math.ceil((mixed.p99_ms / Math.max(1, alone.p99_ms)) * 100) / 100;
  const load: LoadResult = {
    ...mixed,
    non2xx: alone.non2xx + mixed.non2xx + creating.non2xx,
    errors: alone.errors + mixed.errors + creating.errors,
  };
  return {
    load,
    ratio: null,
    details: {
      plans_list_alone: { rps: alone.rps, p50_ms: alone.p50_ms, p99_ms: alone.p99_ms },
      plans_list_mixed: { rps: mixed.rps, p50_ms: mixed.p50_ms, p99_ms: mixed.p99_ms },
      p99_factor: factor,
      users_create: {
        connections: MIXED_CREATE_CONNECTIONS,
        rps: creating.rps,
        p99_ms: creating.p99_ms,
        statuses: creating.statuses,
      },
    },
  };
}

export function describeMixed(result: CompoundResult): string {
  const d = result.details as {
    plans_list_alone: { p99_ms: number };
    p99_factor: number;
    users_create: { rps: number };
  };
  return `plans_list p99 ${d.plans_list_alone.p99_ms} ms alone → ${result.load.p99_ms} ms beside users_create (×${d.p99_factor}; ${d.users_create.rps} users/s)`;
}
