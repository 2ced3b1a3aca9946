/**
 * A claimed batch of dispatch jobs moves through each step in one statement (src/core/jobs/batching.ts):
 * the outcome of every call, every debit and every carrier record must be what ten separate
 * dispatches would give.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coalesce } from '../../src/core/jobs/batching.js';
import { createTenant, startTestApp, type TestApp } from '../support/app.js';
import { recordStatements } from '../support/statements.js';
import { agentFixture, balanceOf, getCall, trigger } from './helpers.js';

describe('coalesce', () => {
  it('runs the calls of one turn as one batch, in order, and later calls as another', async () => {
    const batches: number[][] = [];
    const double = coalesce(async (inputs: number[]) => {
      batches.push(inputs);
      return inputs.map((n) => n * 2);
    });
    expect(await Promise.all([double(1), double(2), double(3)])).toEqual([2, 4, 6]);
    expect(await double(4)).toBe(8);
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });

  it('splits a turn larger than maxBatch and fails every caller of a failed batch', async () => {
    const batches: number[][] = [];
    const check = coalesce(async (inputs: number[]) => {
      batches.push(inputs);
      if (inputs.includes(3)) throw new Error('refused');
      return inputs;
    }, 2);
    const results = await Promise.allSettled([check(1), check(2), check(3), check(4), check(5)]);
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
    ]);
  });

  it('fails the batch when the step answers the wrong number of results', async () => {
    const broken = coalesce(async (inputs: number[]) => inputs.slice(1));
    await expect(Promise.all([broken(1), broken(2)])).rejects.toThrow(/1 results for 2 inputs/);
  });
});

describe('a batch of calls dispatched together (SIMULATED_CALL_SECONDS=61)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { SIMULATED_CALL_SECONDS: '61' } });
  });
  afterAll(() => t.close());

  it('ends every call as it would alone, debits each owner the sum once per call, in a few statements', async () => {
    const tenant = await createTenant(t);
    const first = await agentFixture(t, { tenant, credits: 100 });
    const second = await agentFixture(t, { tenant, credits: 50 });
    // The owners' first credits queued jobs of their own (credits.restored): run them first.
    await t.services.jobRunner.drain();
    const phones = [
      ...Array.from({ length: 5 }, (_, i) => [first, `+1415555010${i}`] as const),
      [first, '+14155550000'] as const, // no answer
      [first, '+14155559999'] as const, // fails
      ...Array.from({ length: 3 }, (_, i) => [second, `+1415555020${i}`] as const),
    ];
    const ids: string[] = [];
    for (const [fixture, phone] of phones) {
      const response = await trigger(t, fixture.agent.webhook_id, { phone, name: 'Ada' });
      expect(response.status).toBe(202);
      ids.push(response.body.data.id);
    }

    let dispatched = 0;
    const statements = await recordStatements(async () => {
      dispatched = await t.services.jobRunner.drain();
    });
    expect(dispatched).toBe(10);

    const calls = await Promise.all(ids.map((id) => getCall(t, id)));
    expect(calls.map((call) => call.status)).toEqual([
      ...Array(5).fill('completed'),
      'no_answer',
      'failed',
      ...Array(3).fill('completed'),
    ]);
    for (const call of calls.filter((c) => c.status === 'completed')) {
      expect(call).toMatchObject({ duration_seconds: 61, failure_reason: null });
    }
    // 61 s is 2 minutes a call: 5 calls of the first owner, 3 of the second.
    expect(await balanceOf(t, first.userId)).toBe(100 - 10);
    expect(await balanceOf(t, second.userId)).toBe(50 - 6);
    const ledger = await t.services.database.db
      .selectFrom('credit_ledger')
      .select(['reference', 'minutes', 'user_id'])
      .where(
        'reference',
        'in',
        ids.map((id) => `call:${id}`),
      )
      .execute();
    expect(ledger).toHaveLength(8);
    expect(ledger.every((row) => row.minutes === -2)).toBe(true);
    const dials = await t.services.database.db
      .selectFrom('telephony_simulated_dials')
      .select(['call_id', 'dial_requests'])
      .where('call_id', 'in', ids)
      .execute();
    expect(dials.map((d) => d.dial_requests)).toEqual(Array(10).fill(1));

    // Ten separate dispatches take 40+ statements (5 per call); together, each step is one (the
    // simulator's analyses of the answered calls too: one statement).
    const writes = statements.filter((s) => /^\s*(WITH|UPDATE|INSERT)/i.test(s.text));
    expect(writes.length).toBeLessThanOrEqual(9);
    // The ends of one turn are one statement: the carrier's answers to the progress questions come
    // from its memory of the dials, so completed calls end in the turn of the unanswered and failed
    // ones (one statement); two when the answers are read from the database (a turn later).
    const ends = statements.filter((s) => s.text.includes('credit_ledger'));
    expect(ends.length).toBeGreaterThanOrEqual(1);
    expect(ends.length).toBeLessThanOrEqual(2);
  });

  it('counts a call dialled twice in one batch as two requests to the carrier', async () => {
    const { agent, tenant } = await agentFixture(t, { credits: 10 });
    const response = await trigger(t, agent.webhook_id, { phone: '+14155550300', name: 'Ada' });
    const callId = response.body.data.id as string;
    const call = {
      callId,
      attempt: 1,
      tenantId: tenant.id,
      agentId: 'agt_unused',
      agentVersion: 1,
      from: '+14155550199',
      to: '+14155550300',
      name: 'Ada',
      email: null,
      prompt: 'p',
      welcomeMessage: 'w',
      context: {},
    };
    const telephony = t.services.telephony as NonNullable<typeof t.services.telephony>;
    const [a, b] = await Promise.all([telephony.dial(call), telephony.dial(call)]);
    expect(a).toEqual(b);
    const dial = await t.services.database.db
      .selectFrom('telephony_simulated_dials')
      .select('dial_requests')
      .where('call_id', '=', callId)
      .executeTakeFirstOrThrow();
    expect(dial.dial_requests).toBe(2);
  });
});
