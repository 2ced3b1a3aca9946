/**
 * The built-in simulated carrier (TELEPHONY=simulated, docs/engines.md): numbers ending in 0000
 * do not answer, 9999 fail, 8888 reach voicemail, 7777 are transferred (simulated-conversation.ts);
 * every other number answers and talks for SIMULATED_CALL_SECONDS. An answered call gets a
 * scripted conversation (transcript, analysis, a recording served at an unguessable URL,
 * simulated-recordings.ts) written with the dial. The call really lasts (SIMULATED_REALTIME, the
 * default); with SIMULATED_REALTIME=false (tests, benchmarks) it is over as soon as it is answered
 * and its end is stamped answered_at + duration, compressed time.
 *
 * Like a real engine it keeps its own record of each call attempt it placed, in
 * `telephony_simulated_dials` (call id, attempt), and answers `findDial` from it. The record lives
 * in the database, so it survives a crash of the process. The pipeline sends one request per
 * attempt (src/calls/engine-dials.ts); should a second one come, the simulator answers it with the
 * first result and counts it (`dial_requests`): the tests' count of calls asked twice.
 */
import os from 'node:os';
import { sql } from 'kysely';
import { BoundedMap } from '../core/bounded-map.js';
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db/database.js';
import { randomBase62 } from '../core/ids.js';
import { coalesce } from '../core/jobs/batching.js';
import type { CallEndDetails } from './outcomes.js';
import type { CallProgress, DialRequest, DialResult, EnginePhoneNumbers, TelephonyAdapter } from './port.js';
import {
  type ScriptConfig,
  type SimulatedConversation,
  scriptConversation,
  simulatedPath,
  transcriptOf,
} from './simulated-conversation.js';
import { SIMULATED_RECORDINGS_PATH } from './simulated-recordings.js';
import { simulatedToolCalls } from './simulated-tools.js';
import type { ToolRunner } from './tool-paths.js';

/**
 * The simulator holds every E.164 number except those ending in 0000 (an unassigned number, for
 * tests of a refused import); a number is its own id, and its inbound calls need no routing.
 */
export const simulatedPhoneNumbers: EnginePhoneNumbers = {
  async find(number: string) {
    return /^\+[1-9]\d{6,14}$/.test(number) && !number.endsWith('0000') ? { id: number, number } : undefined;
  },
  async routeInbound() {},
};

export interface SimulatedDialsTable {
  call_id: string;
  /** The call's dial attempt (migration 0035; records before it are attempt 1). */
  attempt: import('kysely').Generated<number>;
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
  /** The scripted conversation of an answered attempt, or a voicemail hung up on (migration 0039). */
  conversation: import('kysely').ColumnType<SimulatedConversation | null, string | null, string | null>;
  /** The recording's URL token (random, unguessable); null when nothing was recorded. */
  recording_token: string | null;
}

declare module '../core/db/database.js' {
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
  /** Where the recordings' URLs point (PUBLIC_BASE_URL). */
  publicBaseUrl?: string;
  /** Runs a tool of the call's version in-process (the tools service): each is called once per answered call. */
  runTool?: ToolRunner;
}

/** The outcome the simulator gives a number (docs/engines.md), before voicemail's setting. */
export function simulatedOutcome(to: string): 'answered' | 'no_answer' | 'failed' {
  const path = simulatedPath(to);
  return path === 'no_answer' || path === 'failed' ? path : 'answered';
}

type DialRecord = import('kysely').Selectable<
  Pick<
    SimulatedDialsTable,
    | 'call_id'
    | 'tenant_id'
    | 'outcome'
    | 'failure_reason'
    | 'answered_at'
    | 'duration_seconds'
    | 'ends_at'
    | 'conversation'
    | 'recording_token'
  >
> & { attempt: number };

/**
 * A dial is one INSERT: once the process that sent it is gone, a statement it left running on the
 * server commits or fails within moments. Dispatch runs again only after the crashed worker's
 * lease (JOB_LEASE_SECONDS, at least 3 s), so this delays a recovery by 2 s at most.
 */
export const SIMULATED_DIAL_SETTLE_MS = 5_000;

const RECORD_COLUMNS = [
  'call_id',
  'attempt',
  'tenant_id',
  'outcome',
  'failure_reason',
  'answered_at',
  'duration_seconds',
  'ends_at',
  'conversation',
  'recording_token',
] as const;

const resultOf = (row: DialRecord): DialResult => {
  if (row.outcome === 'answered') return { outcome: 'answered', answeredAt: row.answered_at as Date };
  if (row.outcome === 'no_answer') {
    const voicemail = row.conversation?.answeredBy === 'voicemail';
    return voicemail
      ? { outcome: 'no_answer', endedReason: 'voicemail', answeredBy: 'voicemail' }
      : { outcome: 'no_answer' };
  }
  return { outcome: 'failed', reason: row.failure_reason ?? SIMULATED_FAILURE_REASON };
};

const dialKey = (callId: string, attempt: number) => `${callId}\u0000${attempt}`;
const versionKey = (r: Pick<DialRequest, 'tenantId' | 'agentId' | 'agentVersion'>) =>
  `${r.tenantId}\u0000${r.agentId}\u0000${r.agentVersion}`;

/** Dial records this process wrote, kept for the progress questions that follow them. */
const REMEMBERED_DIALS = 10_000;

export function createSimulatedTelephony(options: SimulatedTelephonyOptions): TelephonyAdapter {
  const { db, clock, callSeconds, realtime } = options;
  const dialerId = options.dialerId ?? `${os.hostname()}:${process.pid}`;
  /**
   * The answered record of each call this process dialled, as the insert returned it: the fields
   * progress reads never change once written (a repeated dial only counts the request), so the
   * progress question right after a dial needs no read. Another process's dial, or one forgotten,
   * is read. Only an answered attempt is ever asked about (a call's last).
   */
  const remembered = new BoundedMap<string, DialRecord>({ maxEntries: REMEMBERED_DIALS });
  /** Published versions never change: their configurations are kept once read. */
  const versionConfigs = new BoundedMap<string, ScriptConfig>({ maxEntries: REMEMBERED_DIALS });

  /** The script's configuration of each answered request's version, read once per version. */
  async function scriptConfigs(requests: DialRequest[]): Promise<Map<string, ScriptConfig>> {
    const found = new Map<string, ScriptConfig>();
    const missing = new Map<string, DialRequest>();
    for (const request of requests) {
      const key = versionKey(request);
      const known = versionConfigs.get(key);
      if (known) found.set(key, known);
      else missing.set(key, request);
    }
    if (missing.size === 0) return found;
    const rows = await db
      .selectFrom('agent_versions')
      .select(['tenant_id', 'agent_id', 'version', 'config'])
      .where(
        'agent_id',
        'in',
        [...missing.values()].map((request) => request.agentId),
      )
      .execute();
    for (const row of rows) {
      const key = versionKey({ tenantId: row.tenant_id, agentId: row.agent_id, agentVersion: row.version });
      if (!missing.has(key)) continue;
      const config = (row.config ?? {}) as ScriptConfig;
      versionConfigs.set(key, config);
      found.set(key, config);
    }
    return found;
  }

  const toolsPending = (row: DialRecord) =>
    Boolean(options.runTool && row.conversation?.tools?.length && !row.conversation.toolsCalled);
  const startTools = simulatedToolCalls(db, options.runTool);

  /** What an answered call's end tells: its script, as a voice engine's report would. */
  function detailsOf(row: DialRecord): CallEndDetails | undefined {
    const conversation = row.conversation;
    if (!conversation) return undefined;
    const details: CallEndDetails = {
      answeredBy: conversation.answeredBy,
      transcript: transcriptOf(conversation),
      analysis: conversation.analysis,
    };
    if (conversation.endedReason) details.endedReason = conversation.endedReason;
    if (conversation.transferredTo) details.transferredTo = conversation.transferredTo;
    if (row.recording_token && options.publicBaseUrl !== undefined) {
      details.recordingUrl = `${options.publicBaseUrl}${SIMULATED_RECORDINGS_PATH}/${row.recording_token}.wav`;
    }
    return details;
  }

  /**
   * Records the dials of one turn of the event loop in one statement (the dispatch worker dials a
   * claimed batch together). An attempt dialled twice in a batch is one row whose request count
   * grows by two, as two separate requests would make it.
   */
  const recordDials = coalesce(async (requests: DialRequest[]): Promise<DialRecord[]> => {
    const configs = await scriptConfigs(
      requests.filter((request) => simulatedOutcome(request.to) === 'answered'),
    );
    const now = clock.now();
    const asked = new Map<string, { request: DialRequest; times: number }>();
    for (const request of requests) {
      const key = dialKey(request.callId, request.attempt);
      const seen = asked.get(key);
      if (seen) seen.times++;
      else asked.set(key, { request, times: 1 });
    }
    const rows = await db
      .insertInto('telephony_simulated_dials')
      .values(
        [...asked.values()].map(({ request, times }) => {
          const path = simulatedPath(request.to);
          let outcome = simulatedOutcome(request.to);
          let conversation: SimulatedConversation | null = null;
          if (path === 'voicemail' || path === 'transfer' || path === 'human') {
            const config = configs.get(versionKey(request)) ?? {};
            conversation = scriptConversation(request, config, path) ?? null;
            // Voicemail answered and the agent hangs up on it: not answered, as an engine says it.
            if (!conversation) {
              outcome = 'no_answer';
              conversation = { turns: [], answeredBy: 'voicemail', endedReason: 'voicemail', analysis: {} };
            }
          }
          const answered = outcome === 'answered';
          return {
            call_id: request.callId,
            attempt: request.attempt,
            tenant_id: request.tenantId,
            from_number: request.from,
            to_number: request.to,
            outcome,
            failure_reason: outcome === 'failed' ? SIMULATED_FAILURE_REASON : null,
            answered_at: answered ? now : null,
            duration_seconds: answered ? callSeconds : null,
            ends_at: answered ? new Date(now.getTime() + callSeconds * 1000) : null,
            dial_requests: times,
            dialled_by: dialerId,
            conversation: conversation === null ? null : JSON.stringify(conversation),
            recording_token: answered ? randomBase62(32) : null,
            created_at: now,
            last_requested_at: now,
          };
        }),
      )
      .onConflict((oc) =>
        oc.columns(['call_id', 'attempt']).doUpdateSet({
          dial_requests: sql`telephony_simulated_dials.dial_requests + excluded.dial_requests`,
          last_requested_at: now,
        }),
      )
      .returning(RECORD_COLUMNS)
      .execute();
    for (const row of rows) if (row.outcome === 'answered') remembered.set(row.call_id, row);
    const byKey = new Map(rows.map((row) => [dialKey(row.call_id, row.attempt), row]));
    return requests.map((request) => byKey.get(dialKey(request.callId, request.attempt)) as DialRecord);
  });

  /** The carrier's answered records for one turn's progress questions, in one query. */
  const readDials = coalesce(async (keys: { tenantId: string; callId: string }[]) => {
    const rows = await db
      .selectFrom('telephony_simulated_dials')
      .select(RECORD_COLUMNS)
      .where(
        'call_id',
        'in',
        keys.map((key) => key.callId),
      )
      .where('outcome', '=', 'answered')
      .execute();
    const byCall = new Map(rows.map((row) => [row.call_id, row]));
    return keys.map((key) => {
      const row = byCall.get(key.callId);
      return row?.tenant_id === key.tenantId ? row : undefined;
    });
  });

  const findDial = (key: { tenantId: string; callId: string }): Promise<DialRecord | undefined> => {
    const known = remembered.get(key.callId);
    if (known) return Promise.resolve(known.tenant_id === key.tenantId ? known : undefined);
    return readDials(key);
  };

  return {
    name: 'simulated',
    dialSettleMs: SIMULATED_DIAL_SETTLE_MS,
    phoneNumbers: simulatedPhoneNumbers,

    async dial(request: DialRequest): Promise<DialResult> {
      return resultOf(await recordDials(request));
    },

    async findDial(request: DialRequest): Promise<DialResult | undefined> {
      const row = await db
        .selectFrom('telephony_simulated_dials')
        .select(RECORD_COLUMNS)
        .where('call_id', '=', request.callId)
        .where('attempt', '=', request.attempt)
        .executeTakeFirst();
      if (!row || row.tenant_id !== request.tenantId) return undefined;
      if (row.outcome === 'answered') remembered.set(row.call_id, row);
      return resultOf(row);
    },

    async progress(callId: string, tenantId: string): Promise<CallProgress> {
      const row = await findDial({ tenantId, callId });
      if (row?.outcome !== 'answered' || !row.ends_at) {
        return { state: 'failed', reason: 'the carrier has no answered call with this id' };
      }
      const now = clock.now();
      if (realtime && now < row.ends_at) {
        // In real time the tools are called halfway through the call, once its answer is on the
        // timeline (the first question comes right after the dial, before the answer is recorded).
        if (toolsPending(row) && row.answered_at) {
          const halfway = new Date((row.answered_at.getTime() + row.ends_at.getTime()) / 2);
          if (now < halfway) return { state: 'in_progress', checkAgainAt: halfway };
          startTools(row, tenantId);
        }
        return { state: 'in_progress', checkAgainAt: row.ends_at };
      }
      // Compressed time: the whole call is over at the first question. Its tools are started then
      // and run beside; their timeline entries come after the end.
      startTools(row, tenantId);
      return {
        state: 'completed',
        endedAt: row.ends_at,
        durationSeconds: row.duration_seconds ?? 0,
        details: detailsOf(row),
      };
    },
  };
}
