/**
 * The engine's dial claims (`engine_dials`) are purged once their call has ended and the
 * retention has passed (src/calls/dial-retention.ts): a call not over keeps every claim however
 * old, a call that ended recently keeps its claims (a late report still reads them), and the
 * maintenance job does the purge on its own.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINE_DIAL_RETENTION_MS, purgeResolvedEngineDials } from '../../src/calls/dial-retention.js';
import { ManualClock } from '../../src/core/clock.js';
import { ENGINE_DIAL_PURGE_QUEUE, scheduleMaintenance } from '../../src/maintenance/jobs.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { type AgentFixture, agentFixture } from './helpers.js';

const NOW = new Date('2026-03-10T12:00:00.000Z');
const DAY = 24 * 60 * 60 * 1000;
const ago = (ms: number) => new Date(NOW.getTime() - ms);

describe('engine dial claims retention', () => {
  const clock = new ManualClock(NOW.toISOString());
  let t: TestApp;
  let fixture: AgentFixture;

  beforeAll(async () => {
    t = await startTestApp({ clock });
    fixture = await agentFixture(t);
  });
  afterAll(() => t.close());

  const db = () => t.services.database.db;

  /** A call in `status` (ended at `endedAt`) with a claim for each of its `attempts`, requested at `requestedAt`. */
  async function callWithClaims(
    id: string,
    status: string,
    endedAt: Date | null,
    requestedAt: Date,
    attempts = 1,
  ) {
    await sql`
      INSERT INTO calls (id, tenant_id, agent_id, agent_version, user_id, from_number, to_number, name, email,
                         context, prompt, welcome_message, status, attempts, created_at, updated_at, ended_at)
      VALUES (${id}, ${fixture.tenant.id}, ${fixture.agent.id}, 1, ${fixture.userId}, '+14155550100',
              '+14155550123', 'Callee', NULL, '{}'::jsonb, 'Hi', 'Hello', ${status}, ${attempts},
              ${requestedAt}, ${endedAt ?? requestedAt}, ${endedAt})`.execute(db());
    await sql`
      INSERT INTO engine_dials (call_id, attempt, tenant_id, engine, requested_at)
      SELECT ${id}, g, ${fixture.tenant.id}, 'simulated', ${requestedAt}
      FROM generate_series(1, ${attempts}::int) g`.execute(db());
  }

  const claimsOf = async (id: string) =>
    Number(
      (
        await db()
          .selectFrom('engine_dials')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('call_id', '=', id)
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('deletes the claims of calls ended before the cutoff, in batches; keeps those of calls not over or ended since', async () => {
    for (let i = 0; i < 7; i++)
      await callWithClaims(`call_ended_old${i}`, 'completed', ago(8 * DAY), ago(8 * DAY));
    await callWithClaims('call_retried_old', 'no_answer', ago(8 * DAY), ago(9 * DAY), 3);
    await callWithClaims('call_ended_recent', 'failed', ago(DAY), ago(8 * DAY));
    await callWithClaims('call_still_dialing', 'dialing', null, ago(30 * DAY));
    await callWithClaims('call_talking', 'in_progress', null, ago(30 * DAY));

    const cutoff = ago(ENGINE_DIAL_RETENTION_MS);
    // Two statements of 4 leave the last batch full: the caller is told to come back.
    expect(await purgeResolvedEngineDials(db(), { cutoff, batchSize: 4, maxBatches: 2 })).toEqual({
      deleted: 8,
      more: true,
    });
    expect(await purgeResolvedEngineDials(db(), { cutoff, batchSize: 4, maxBatches: 2 })).toEqual({
      deleted: 2,
      more: false,
    });
    for (let i = 0; i < 7; i++) expect(await claimsOf(`call_ended_old${i}`)).toBe(0);
    expect(await claimsOf('call_retried_old')).toBe(0);
    expect(await claimsOf('call_ended_recent')).toBe(1);
    expect(await claimsOf('call_still_dialing')).toBe(1);
    expect(await claimsOf('call_talking')).toBe(1);
  });

  it('the maintenance job purges them and comes back', async () => {
    await callWithClaims('call_maintained_old', 'completed', ago(7 * DAY + 60_000), ago(7 * DAY + 60_000));
    await callWithClaims('call_maintained_fresh', 'completed', ago(6 * DAY), ago(6 * DAY));
    await scheduleMaintenance(t.services);
    await t.services.jobRunner.drain();
    expect(await claimsOf('call_maintained_old')).toBe(0);
    expect(await claimsOf('call_maintained_fresh')).toBe(1);
    const next = await db()
      .selectFrom('jobs')
      .select('run_at')
      .where('queue', '=', ENGINE_DIAL_PURGE_QUEUE)
      .where('status', '=', 'queued')
      .execute();
    expect(next).toHaveLength(1);
    expect(next[0].run_at.getTime()).toBeGreaterThan(NOW.getTime());
  });
});
