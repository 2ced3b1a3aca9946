/**
 * The SQL of inbound calls (docs/phone-numbers.md): a call to one of a tenant's numbers is stored
 * in one statement with its first timeline entry, its partner event and its job, in the state the
 * inbound path decided:
 * - `queued`, with its dispatch job: the simulator, whose calls the pipeline plays (`call.queued`);
 * - `dialing`, with the engine's call id and the backstop (engine check) job: a voice engine that
 *   already holds the call (Vapi); its reports move it on like an outbound call's;
 * - `in_progress`, answered now (Retell's call_started);
 * - `failed`, declined (`call.failed`, with `ended_reason` saying why; nothing billed).
 */
import { type Executor, runPrepared } from '../core/db/database.js';
import { INSERT_NEW_JOBS } from '../core/jobs/runner.js';
import { ENGINE_CHECK_EVERY_MS, ENGINE_CHECK_MAX_ATTEMPTS, ENGINE_CHECK_QUEUE } from './engine-dials.js';
import { DISPATCH_MAX_ATTEMPTS, DISPATCH_QUEUE } from './placement.js';
import { CALL_COLUMNS, dispatchKeyOf, recordCallEvents } from './repository.js';

const CALL_COLUMN_LIST = CALL_COLUMNS.join(', ');

export interface NewInboundCall {
  id: string;
  tenantId: string;
  /** Null for a call declined before an agent could take it. */
  agentId: string | null;
  agentVersion: number | null;
  userId: string | null;
  /** The caller, and the tenant's number. */
  from: string;
  to: string;
  prompt: string;
  welcomeMessage: string;
  status: 'queued' | 'dialing' | 'in_progress' | 'failed';
  createdAt: Date;
  /** The engine holding the call, and its id for it (voice engines). */
  engine: string | null;
  engineCallId: string | null;
  /** A declined call: why, as a word (`ended_reason`) and in words (`failure_reason`). */
  endedReason?: string;
  failureReason?: string;
}

/**
 * Stores the call, its timeline entry, its event and its job in one statement. Answers false when a
 * call with the engine's call id already exists (an engine's message that came twice): nothing stored.
 */
export async function insertInboundCall(
  db: Executor,
  call: NewInboundCall,
  engineName: string,
): Promise<boolean> {
  const final = call.status === 'failed';
  const input = {
    id: call.id,
    tenant_id: call.tenantId,
    agent_id: call.agentId,
    agent_version: call.agentVersion,
    user_id: call.userId,
    from_number: call.from,
    to_number: call.to,
    prompt: call.prompt,
    welcome_message: call.welcomeMessage,
    status: call.status,
    created_at: call.createdAt,
    started_at: call.status === 'in_progress' ? call.createdAt : null,
    ended_at: final ? call.createdAt : null,
    engine: call.engine,
    engine_call_id: call.engineCallId,
    ended_reason: call.endedReason ?? null,
    failure_reason: call.failureReason ?? null,
    billed_minutes: final ? 0 : null,
    attempts: call.status === 'queued' || final ? 0 : 1,
    detail: final ? { failure_reason: call.failureReason, billed_minutes: 0 } : { direction: 'inbound' },
    job_queue: call.status === 'queued' ? DISPATCH_QUEUE : final ? null : ENGINE_CHECK_QUEUE,
    job_key: call.status === 'queued' ? dispatchKeyOf(call.id) : `engine-check:${call.id}`,
    job_max_attempts: call.status === 'queued' ? DISPATCH_MAX_ATTEMPTS : ENGINE_CHECK_MAX_ATTEMPTS,
    job_run_at: new Date(call.createdAt.getTime() + (call.status === 'queued' ? 0 : ENGINE_CHECK_EVERY_MS)),
  };
  const rows = await runPrepared<{ id: string }>(db, {
    name: 'calls_insert_inbound',
    text: `
      WITH input AS (
        SELECT * FROM jsonb_to_record($1::jsonb) AS i(
          id text, tenant_id text, agent_id text, agent_version integer, user_id text, from_number text,
          to_number text, prompt text, welcome_message text, status text, created_at timestamptz,
          started_at timestamptz, ended_at timestamptz, engine text, engine_call_id text, ended_reason text,
          failure_reason text, billed_minutes integer, attempts integer, detail jsonb, job_queue text,
          job_key text, job_max_attempts integer, job_run_at timestamptz)
      ), inserted AS (
        INSERT INTO calls (id, tenant_id, agent_id, agent_version, user_id, from_number, to_number, name, email,
                           context, prompt, welcome_message, status, created_at, updated_at, started_at, ended_at,
                           engine, engine_call_id, ended_reason, failure_reason, billed_minutes, attempts,
                           duration_seconds, direction)
        SELECT i.id, i.tenant_id, i.agent_id, i.agent_version, i.user_id, i.from_number, i.to_number, '', NULL,
               '{}'::jsonb, i.prompt, i.welcome_message, i.status, i.created_at, i.created_at, i.started_at,
               i.ended_at, i.engine, i.engine_call_id, i.ended_reason, i.failure_reason, i.billed_minutes,
               i.attempts, CASE WHEN i.status = 'failed' THEN 0 END, 'inbound'
        FROM input i
        ON CONFLICT DO NOTHING
        RETURNING ${CALL_COLUMN_LIST}
      ), first_event AS (
        INSERT INTO call_events (tenant_id, call_id, status, at, detail)
        SELECT c.tenant_id, c.id, c.status, c.created_at, jsonb_strip_nulls(i.detail) FROM inserted c, input i
        RETURNING id, call_id, status, at, detail
      ), ${recordCallEvents({
        calls: `(SELECT * FROM inserted WHERE status IN ('queued', 'in_progress', 'failed'))`,
        type: `CASE c.status WHEN 'in_progress' THEN 'call.started' ELSE 'call.' || c.status END`,
        newEvents: 'first_event',
        engine: '$2::text',
        earlierTimeline: false,
      })},
      new_job AS (
        SELECT c.tenant_id, i.job_queue AS queue, jsonb_build_object('callId', c.id, 'tenantId', c.tenant_id) AS payload,
               i.job_run_at AS run_at, i.job_max_attempts AS max_attempts, i.job_key AS singleton_key
        FROM inserted c, input i WHERE i.job_queue IS NOT NULL
      ), job AS (
        ${INSERT_NEW_JOBS}
        RETURNING id
      )
      SELECT id FROM inserted`,
    values: [JSON.stringify(input), engineName],
  });
  return rows.length === 1;
}
