/**
 * Dispatch reaches a batch's calls by primary key however many calls wait or talk
 * (src/calls/dispatch-repository.ts): a status compared with a literal let the planner walk the
 * partial index of every queued call of the tenant for each batch, and filter it, which behind a
 * backlog made dispatch several times slower. The statistics here are stale on purpose (analysed
 * before the backlog), as a live database's are in the middle of a burst.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markInProgress, startDialing } from '../../src/calls/dispatch-repository.js';
import type { Executor } from '../../src/core/db.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { type AgentFixture, agentFixture } from './helpers.js';

let t: TestApp;
let fixture: AgentFixture;
const BACKLOG = 2_000;

beforeAll(async () => {
  t = await startTestApp();
  fixture = await agentFixture(t);
  const db = t.services.database.db;
  await sql`ANALYZE calls`.execute(db);
  await sql`
    INSERT INTO calls (id, tenant_id, agent_id, agent_version, user_id, from_number, to_number, name, email,
                       context, prompt, welcome_message, status, created_at, updated_at)
    SELECT 'call_backlog' || g, ${fixture.tenant.id}, ${fixture.agent.id}, 1, ${fixture.userId},
           '+14155550100', '+1415' || lpad(g::text, 7, '0'), 'Callee', NULL, '{}'::jsonb, 'Hi', 'Hello',
           'queued', now(), now()
    FROM generate_series(1, ${BACKLOG}::int) g`.execute(db);
});
afterAll(() => t.close());

/** The statement `run` sends, as text and values, without running it. */
async function statementOf(run: (executor: Executor) => Promise<unknown>) {
  let captured: { sql: string; parameters: readonly unknown[] } | undefined;
  const capture = {
    executeQuery: async (query: { sql: string; parameters: readonly unknown[] }) => {
      captured = query;
      return { rows: [] };
    },
  } as unknown as Executor;
  await run(capture);
  if (!captured) throw new Error('no statement was sent');
  return captured;
}

/** A value as an SQL literal (EXECUTE takes no bound parameters). */
function literal(value: unknown): string {
  if (Array.isArray(value)) return `ARRAY[${value.map(literal).join(', ')}]`;
  if (value instanceof Date) return `'${value.toISOString()}'`;
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  return `'${String(value).replaceAll("'", "''")}'`;
}

let probes = 0;

/** The generic plan (the one a prepared statement keeps) of `text` for these parameter types. */
async function genericPlan(text: string, types: string[], values: readonly unknown[]): Promise<string> {
  const name = `dispatch_plan_probe_${++probes}`;
  const args = values.map((value, i) => `${literal(value)}::${types[i]}`).join(', ');
  return t.services.database.db.transaction().execute(async (tx) => {
    await sql`SET LOCAL plan_cache_mode = force_generic_plan`.execute(tx);
    await sql.raw(`PREPARE ${name}(${types.join(', ')}) AS ${text}`).execute(tx);
    const rows = await sql.raw<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE ${name}(${args})`).execute(tx);
    await sql.raw(`DEALLOCATE ${name}`).execute(tx);
    return rows.rows.map((row) => row['QUERY PLAN']).join('\n');
  });
}

const steps = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    tenantId: fixture.tenant.id,
    callId: `call_backlog${i + 1}`,
    at: new Date(),
    startedAt: new Date(),
  }));

describe('dispatch statements behind a backlog', () => {
  it('queued → dialing reads the batch by primary key, not the queue', async () => {
    const statement = await statementOf((db) => startDialing(db, steps(5)));
    const plan = await genericPlan(
      statement.sql,
      ['text[]', 'text[]', 'timestamptz[]', 'boolean'],
      statement.parameters,
    );
    expect(plan).toContain('calls_pkey');
    expect(plan).not.toMatch(/calls_(tenant|agent)_(waiting|active)/);
  });

  it('dialing → in_progress reads the batch by primary key, not the live calls', async () => {
    await sql`UPDATE calls SET status = 'dialing' WHERE id LIKE 'call_backlog%'`.execute(
      t.services.database.db,
    );
    const statement = await statementOf((db) => markInProgress(db, steps(5), 'simulated'));
    const plan = await genericPlan(
      statement.sql,
      ['text[]', 'text[]', 'timestamptz[]', 'timestamptz[]', 'text', 'text[]'],
      statement.parameters,
    );
    expect(plan).toContain('calls_pkey');
    expect(plan).not.toMatch(/calls_(tenant|agent)_(waiting|active)/);
  });
});
