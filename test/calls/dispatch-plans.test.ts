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
import { startTestApp, type TestApp } from '../support/app.js';
import { genericPlan as planOf, statementOf } from '../support/plans.js';
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

const genericPlan = (text: string, types: string[], values: readonly unknown[]) =>
  planOf(t.services.database.db, text, types, values);

const steps = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    tenantId: fixture.tenant.id,
    callId: `call_backlog${i + 1}`,
    at: new Date(),
    startedAt: new Date(),
  }));

describe('dispatch statements behind a backlog', () => {
  it('queued → dialing reads the batch by primary key, not the queue', async () => {
    const statement = await statementOf((db) => startDialing(db, steps(5), 'simulated'));
    const plan = await genericPlan(
      statement.sql,
      ['text[]', 'text[]', 'timestamptz[]', 'boolean', 'text'],
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
