/**
 * The built-in simulated carrier (TELEPHONY=simulated, decisions.md §7): numbers ending in 0000
 * do not answer, numbers ending in 9999 fail, every other number answers and talks for
 * SIMULATED_CALL_SECONDS. Without SIMULATED_REALTIME the call is over as soon as it is answered
 * (its end is stamped answered_at + duration, simulated time); with it, the call really lasts.
 *
 * Like a real carrier it keeps its own record, keyed by the idempotency key (the call id), in
 * `telephony_simulated_dials`: a repeated dial returns the first result and only counts the
 * request. The record lives in the database, so it survives a crash of the process.
 */
import os from 'node:os';
import { sql } from 'kysely';
import type { Clock } from '../core/clock.js';
import type { Db, Executor } from '../core/db.js';
import type { CallProgress, DialRequest, DialResult, TelephonyAdapter } from './port.js';

export interface SimulatedDialsTable {
  call_id: string;
  tenant_id: string;
  from_number: string;
  to_number: string;
  outcome: 'answered' | 'no_answer' | 'failed';
  failure_reason: string | null;
  answered_at: Date | null;
  duration_seconds: number | null;
  ends_at: Date | null;
  dial_requests: import('kysely').Generated<number>;
  dialled_by: string;
  created_at: Date;
  last_requested_at: Date;
}

declare module '../core/db.js' {
  interface Tables {
    telephony_simulated_dials: SimulatedDialsTable;
  }
}

export const SIMULATED_FAILURE_REASON = 'simulated carrier failure: the number could not be reached';

export interface SimulatedTelephonyOptions {
  db: Db;
  clock: Clock;
  callSeconds: number;
  realtime: boolean;
  /** Who dialled, kept in the record (tests tell worker processes apart with it). */
  dialerId?: string;
}

/** The outcome the simulator gives a number (decisions.md §7). */
export function simulatedOutcome(to: string): 'answered' | 'no_answer' | 'failed' {
  if (to.endsWith('0000')) return 'no_answer';
  if (to.endsWith('9999')) return 'failed';
  return 'answered';
}

export function createSimulatedTelephony(options: SimulatedTelephonyOptions): TelephonyAdapter {
  const { db, clock, callSeconds, realtime } = options;
  const dialerId = options.dialerId ?? `${os.hostname()}:${process.pid}`;

  return {
    name: 'simulated',

    async dial(request: DialRequest): Promise<DialResult> {
      const now = clock.now();
      const outcome = simulatedOutcome(request.to);
      const answered = outcome === 'answered';
      const row = await db
        .insertInto('telephony_simulated_dials')
        .values({
          call_id: request.callId,
          tenant_id: request.tenantId,
          from_number: request.from,
          to_number: request.to,
          outcome,
          failure_reason: outcome === 'failed' ? SIMULATED_FAILURE_REASON : null,
          answered_at: answered ? now : null,
          duration_seconds: answered ? callSeconds : null,
          ends_at: answered ? new Date(now.getTime() + callSeconds * 1000) : null,
          dialled_by: dialerId,
          created_at: now,
          last_requested_at: now,
        })
        .onConflict((oc) =>
          oc.column('call_id').doUpdateSet({
            dial_requests: sql`telephony_simulated_dials.dial_requests + 1`,
            last_requested_at: now,
          }),
        )
        .returning(['outcome', 'failure_reason', 'answered_at'])
        .executeTakeFirstOrThrow();
      if (row.outcome === 'answered') return { outcome: 'answered', answeredAt: row.answered_at as Date };
      if (row.outcome === 'no_answer') return { outcome: 'no_answer' };
      return { outcome: 'failed', reason: row.failure_reason ?? SIMULATED_FAILURE_REASON };
    },

    async progress(callId: string, tenantId: string): Promise<CallProgress> {
      const row = await findSimulatedDial(db, tenantId, callId);
      if (row?.outcome !== 'answered' || !row.ends_at) {
        return { state: 'failed', reason: 'the carrier has no answered call with this id' };
      }
      if (realtime && clock.now() < row.ends_at) return { state: 'in_progress', checkAgainAt: row.ends_at };
      return { state: 'completed', endedAt: row.ends_at, durationSeconds: row.duration_seconds ?? 0 };
    },
  };
}

export async function findSimulatedDial(db: Executor, tenantId: string, callId: string) {
  return db
    .selectFrom('telephony_simulated_dials')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('call_id', '=', callId)
    .executeTakeFirst();
}
