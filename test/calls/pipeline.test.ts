/**
 * The durable call pipeline: states, outcomes of the simulated carrier, credits, idempotent
 * dispatch (a retried job never dials twice) and transient / permanent telephony errors.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CALL_MS, PROGRESS_QUEUE } from '../../src/calls/pipeline.js';
import { DISPATCH_QUEUE } from '../../src/calls/placement.js';
import { ManualClock } from '../../src/core/clock.js';
import type { Job } from '../../src/core/jobs/runner.js';
import { type TelephonyAdapter, TelephonyError } from '../../src/telephony/port.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { agentFixture, balanceOf, getCall, SwappableTelephony, trigger } from './helpers.js';

async function dialRecord(t: TestApp, callId: string) {
  return t.services.database.db
    .selectFrom('telephony_simulated_dials')
    .selectAll()
    .where('call_id', '=', callId)
    .execute();
}

async function place(t: TestApp, webhookId: string, phone = '+14155550123') {
  const response = await trigger(t, webhookId, { phone, name: 'Ada' });
  expect(response.status).toBe(202);
  return response.body.data.id as string;
}

describe('outcomes (SIMULATED_CALL_SECONDS=61)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { SIMULATED_CALL_SECONDS: '61' } });
  });
  afterAll(() => t.close());

  it('completes an answered call and debits ceil(duration / 60) minutes once', async () => {
    const { agent, userId } = await agentFixture(t, { credits: 10 });
    const id = await place(t, agent.webhook_id);
    expect(await t.services.jobRunner.drain()).toBeGreaterThan(0);
    const call = await getCall(t, id);
    expect(call).toMatchObject({ status: 'completed', duration_seconds: 61, failure_reason: null });
    expect(new Date(call.ended_at).getTime() - new Date(call.started_at).getTime()).toBe(61_000);
    expect(await balanceOf(t, userId)).toBe(8);
    const dials = await dialRecord(t, id);
    expect(dials).toHaveLength(1);
    expect(dials[0]).toMatchObject({
      from_number: '+14155550199',
      to_number: '+14155550123',
      outcome: 'answered',
      dial_requests: 1,
    });
    const ledger = await t.services.database.db
      .selectFrom('credit_ledger')
      .selectAll()
      .where('reference', '=', `call:${id}`)
      .execute();
    expect(ledger.map((row) => row.minutes)).toEqual([-2]);
  });

  it('ends numbers ending in 0000 as no_answer and 9999 as failed, debiting nothing', async () => {
    const { agent, userId } = await agentFixture(t, { credits: 10 });
    const noAnswer = await place(t, agent.webhook_id, '+14155550000');
    const failed = await place(t, agent.webhook_id, '+14155559999');
    await t.services.jobRunner.drain();
    expect(await getCall(t, noAnswer)).toMatchObject({
      status: 'no_answer',
      duration_seconds: null,
      started_at: null,
    });
    const failedCall = await getCall(t, failed);
    expect(failedCall).toMatchObject({ status: 'failed', duration_seconds: null });
    expect(failedCall.failure_reason).toMatch(/could not be reached/);
    expect(failedCall.ended_at).not.toBeNull();
    expect(await balanceOf(t, userId)).toBe(10);
  });

  it('lets a completed call take the balance below zero, and then refuses new calls (402)', async () => {
    const { agent, userId } = await agentFixture(t, { credits: 1 });
    await place(t, agent.webhook_id);
    await t.services.jobRunner.drain();
    expect(await balanceOf(t, userId)).toBe(-1);
    expect((await trigger(t, agent.webhook_id, { phone: '+14155550123', name: 'Ada' })).status).toBe(402);
  });

  it('never dials twice when the dispatch job runs again (crash before its acknowledgement)', async () => {
    const { agent, userId } = await agentFixture(t, { credits: 10 });
    const id = await place(t, agent.webhook_id);
    const job = await t.services.database.db
      .selectFrom('jobs')
      .selectAll()
      .where('queue', '=', DISPATCH_QUEUE)
      .where(({ ref }) => ref('payload', '->>').key('callId' as never), '=', id)
      .executeTakeFirstOrThrow();
    const handler = t.services.jobHandlers[DISPATCH_QUEUE];
    const asJob: Job = {
      id: job.id,
      tenantId: job.tenant_id,
      queue: job.queue,
      payload: job.payload,
      attempt: 1,
      maxAttempts: 8,
    };
    // Dial, lose the acknowledgement, run again; also twice at the same time (a taken-over lease).
    await handler(asJob);
    await Promise.all([handler({ ...asJob, attempt: 2 }), handler({ ...asJob, attempt: 2 })]);
    await t.services.jobRunner.drain();
    const dials = await dialRecord(t, id);
    expect(dials).toHaveLength(1);
    expect((await getCall(t, id)).status).toBe('completed');
    expect(await balanceOf(t, userId)).toBe(8);
  });
});

describe('states and real-time pacing (SIMULATED_REALTIME=true, 30 s calls, a hand-moved clock)', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-11-21T10:00:00.000Z');
  const telephony = new SwappableTelephony(clock);
  beforeAll(async () => {
    t = await startTestApp({
      clock,
      adapters: telephony.adapters,
      env: { SIMULATED_REALTIME: 'true', SIMULATED_CALL_SECONDS: '30' },
    });
  });
  afterAll(() => t.close());

  it('moves queued → dialing → in_progress → completed, ending when the call really ends', async () => {
    const { agent, userId } = await agentFixture(t, { credits: 5 });
    const seen: string[] = [];
    const real = telephony.real;
    const observed: TelephonyAdapter = {
      name: 'observed',
      async dial(request) {
        seen.push((await getCall(t, request.callId)).status);
        return real.dial(request);
      },
      progress: (callId, tenantId) => real.progress(callId, tenantId),
      findDial: (request, sentAt) => real.findDial(request, sentAt),
      dialSettleMs: real.dialSettleMs,
    };
    await telephony.during(observed, async () => {
      const id = await place(t, agent.webhook_id);
      expect((await getCall(t, id)).status).toBe('queued');
      await t.services.jobRunner.drain();
      expect(seen).toEqual(['dialing']);
      const talking = await getCall(t, id);
      expect(talking).toMatchObject({
        status: 'in_progress',
        started_at: '2026-11-21T10:00:00.000Z',
        ended_at: null,
      });
      expect(await balanceOf(t, userId)).toBe(5);

      clock.advance(29_000);
      await t.services.jobRunner.drain();
      expect((await getCall(t, id)).status).toBe('in_progress');

      clock.advance(1_000);
      await t.services.jobRunner.drain();
      expect(await getCall(t, id)).toMatchObject({
        status: 'completed',
        started_at: '2026-11-21T10:00:00.000Z',
        ended_at: '2026-11-21T10:00:30.000Z',
        duration_seconds: 30,
      });
      expect(await balanceOf(t, userId)).toBe(4);
      expect(await dialRecord(t, id)).toHaveLength(1);
    });
  });
});

describe('telephony errors', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-11-21T10:00:00.000Z');
  const telephony = new SwappableTelephony(clock);
  beforeAll(async () => {
    t = await startTestApp({ clock, adapters: telephony.adapters });
  });
  afterAll(() => t.close());

  function flaky(real: TelephonyAdapter, failures: number, transient: boolean) {
    let left = failures;
    const attempts: number[] = [];
    const adapter: TelephonyAdapter = {
      name: 'flaky',
      async dial(request) {
        attempts.push(clock.now().getTime());
        if (left-- > 0) throw new TelephonyError('carrier timeout', transient);
        return real.dial(request);
      },
      progress: (callId, tenantId) => real.progress(callId, tenantId),
      findDial: (request, sentAt) => real.findDial(request, sentAt),
      dialSettleMs: real.dialSettleMs,
    };
    return { adapter, attempts };
  }

  const withAdapter = <T>(adapter: TelephonyAdapter, work: () => Promise<T>) =>
    telephony.during(adapter, work);

  it('retries transient errors with growing back-off and then completes, dialled once', async () => {
    const { agent, userId } = await agentFixture(t, { credits: 5 });
    const { adapter, attempts } = flaky(telephony.real, 3, true);
    await withAdapter(adapter, async () => {
      const id = await place(t, agent.webhook_id);
      const delays: number[] = [];
      for (let i = 0; i < 4; i++) {
        await t.services.jobRunner.drain();
        if (i < 3) {
          expect((await getCall(t, id)).status).toBe('dialing');
          const job = await t.services.database.db
            .selectFrom('jobs')
            .select(['run_at', 'status'])
            .where('queue', '=', DISPATCH_QUEUE)
            .where(({ ref }) => ref('payload', '->>').key('callId' as never), '=', id)
            .executeTakeFirstOrThrow();
          expect(job.status).toBe('queued');
          delays.push(job.run_at.getTime() - clock.now().getTime());
        }
        clock.advance(60 * 60 * 1000);
      }
      expect(delays).toEqual([1000, 2000, 4000]);
      expect((await getCall(t, id)).status).toBe('completed');
      expect(await dialRecord(t, id)).toHaveLength(1);
      expect(await balanceOf(t, userId)).toBe(4);
    });
    expect(attempts).toHaveLength(4);
  });

  it('ends the call as failed at once on a permanent error, and after the last attempt on transient ones', async () => {
    const { agent, userId } = await agentFixture(t, { credits: 5 });
    await withAdapter(flaky(telephony.real, 1, false).adapter, async () => {
      const id = await place(t, agent.webhook_id);
      await t.services.jobRunner.drain();
      expect(await getCall(t, id)).toMatchObject({
        status: 'failed',
        failure_reason: 'telephony: carrier timeout',
      });
    });
    const { adapter, attempts } = flaky(telephony.real, 1000, true);
    await withAdapter(adapter, async () => {
      const id = await place(t, agent.webhook_id);
      for (let i = 0; i < 10; i++) {
        await t.services.jobRunner.drain();
        clock.advance(60 * 60 * 1000);
      }
      expect(await getCall(t, id)).toMatchObject({
        status: 'failed',
        failure_reason: 'telephony: carrier timeout',
      });
      expect(attempts).toHaveLength(8);
    });
    expect(await balanceOf(t, userId)).toBe(5);
  });

  it('sends a claimed dial that never reached the carrier (the process died in between) once it has settled', async () => {
    const { agent, tenant, userId } = await agentFixture(t, { credits: 5 });
    const real = telephony.real;
    // The first run claims the attempt, then dies before its request leaves: it never answers.
    const dying: TelephonyAdapter = {
      name: 'dying',
      dial: () => new Promise(() => {}),
      progress: (callId, tenantId) => real.progress(callId, tenantId),
      findDial: (request, sentAt) => real.findDial(request, sentAt),
      dialSettleMs: real.dialSettleMs,
    };
    const handler = t.services.jobHandlers[DISPATCH_QUEUE];
    const id = await place(t, agent.webhook_id);
    const first: Job = {
      id: -1,
      tenantId: null,
      queue: DISPATCH_QUEUE,
      payload: { callId: id, tenantId: tenant.id },
      attempt: 1,
      maxAttempts: 8,
    };
    await withAdapter(dying, async () => {
      void handler(first);
      for (let i = 0; i < 100; i++) {
        const claim = await t.services.database.db
          .selectFrom('engine_dials')
          .select('requests')
          .where('call_id', '=', id)
          .executeTakeFirst();
        if (claim) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    });
    // The next run finds the claim and nothing at the carrier: too early to tell, it waits.
    await expect(handler({ ...first, attempt: 2 })).rejects.toMatchObject({
      name: 'RetryJobError',
      countsAsAttempt: false,
      delayMs: real.dialSettleMs,
    });
    expect(await dialRecord(t, id)).toEqual([]);
    clock.advance(real.dialSettleMs);
    await handler({ ...first, attempt: 3 });
    expect((await getCall(t, id)).status).toBe('completed');
    expect(await dialRecord(t, id)).toEqual([expect.objectContaining({ attempt: 1, dial_requests: 1 })]);
    const claim = await t.services.database.db
      .selectFrom('engine_dials')
      .select(['requests', 'engine_call_id'])
      .where('call_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(claim).toEqual({ requests: 2, engine_call_id: null });
    await t.services.jobRunner.drain();
    expect(await dialRecord(t, id)).toHaveLength(1);
    expect(await balanceOf(t, userId)).toBe(4);
  });

  it('ends a call as failed when its last attempt fails on a step that is not the carrier (a database error)', async () => {
    const { agent, userId } = await agentFixture(t, { credits: 5 });
    const { db } = t.services.database;
    // The database refuses one step of the pipeline (answered → in_progress) for this agent's calls.
    await sql`CREATE FUNCTION refuse_in_progress() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'simulated storage failure'; END $$`.execute(db);
    await sql`CREATE TRIGGER refuse_in_progress BEFORE UPDATE ON calls FOR EACH ROW
      WHEN (NEW.status = 'in_progress' AND NEW.agent_id = ${sql.lit(agent.id)})
      EXECUTE FUNCTION refuse_in_progress()`.execute(db);
    try {
      const id = await place(t, agent.webhook_id);
      const seen: string[] = [];
      for (let i = 0; i < 10; i++) {
        await t.services.jobRunner.drain();
        seen.push((await getCall(t, id)).status);
        clock.advance(60 * 60 * 1000);
      }
      // Retried while attempts were left (the call stays dialing), then ended for good.
      expect(seen[0]).toBe('dialing');
      expect(await getCall(t, id)).toMatchObject({
        status: 'failed',
        failure_reason: expect.stringMatching(/^dispatch: .*simulated storage failure/),
      });
      const job = await db
        .selectFrom('jobs')
        .select(['status', 'attempts'])
        .where('queue', '=', DISPATCH_QUEUE)
        .where(({ ref }) => ref('payload', '->>').key('callId' as never), '=', id)
        .executeTakeFirstOrThrow();
      expect(job).toEqual({ status: 'done', attempts: 8 });
      // Each run after the first found the carrier's record of the attempt instead of asking again.
      expect(await dialRecord(t, id)).toEqual([expect.objectContaining({ dial_requests: 1 })]);
      expect(await balanceOf(t, userId)).toBe(5);
    } finally {
      await sql`DROP TRIGGER refuse_in_progress ON calls`.execute(db);
      await sql`DROP FUNCTION refuse_in_progress()`.execute(db);
    }
  });
});

describe('long calls: "still talking" is not a failed attempt', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-11-21T10:00:00.000Z');
  const telephony = new SwappableTelephony(clock);
  beforeAll(async () => {
    t = await startTestApp({ clock, adapters: telephony.adapters, env: { SIMULATED_CALL_SECONDS: '61' } });
  });
  afterAll(() => t.close());

  /** A carrier that answers and then reports the call talking, asking to check again in a minute. */
  function talkingUntil(real: TelephonyAdapter, done: () => boolean): TelephonyAdapter {
    return {
      name: 'long calls',
      dial: (request) => real.dial(request),
      findDial: (request, sentAt) => real.findDial(request, sentAt),
      dialSettleMs: real.dialSettleMs,
      async progress(callId, tenantId) {
        if (done()) return real.progress(callId, tenantId);
        return { state: 'in_progress', checkAgainAt: new Date(clock.now().getTime() + 60_000) };
      },
    };
  }

  async function progressJob(callId: string) {
    return t.services.database.db
      .selectFrom('jobs')
      .select(['status', 'attempts', 'max_attempts'])
      .where('queue', '=', PROGRESS_QUEUE)
      .where(({ ref }) => ref('payload', '->>').key('callId' as never), '=', callId)
      .executeTakeFirstOrThrow();
  }

  it('keeps checking a call that talks past 50 checks, then completes and debits it', async () => {
    const { agent, userId } = await agentFixture(t, { credits: 10 });
    let finished = false;
    await telephony.during(
      talkingUntil(telephony.real, () => finished),
      async () => {
        const id = await place(t, agent.webhook_id);
        await t.services.jobRunner.drain();
        for (let check = 0; check < 60; check++) {
          clock.advance(60_000);
          await t.services.jobRunner.drain();
        }
        expect((await getCall(t, id)).status).toBe('in_progress');
        const job = await progressJob(id);
        expect(job.status).toBe('queued');
        expect(job.attempts).toBe(0);
        expect(job.max_attempts).toBe(50);

        finished = true;
        clock.advance(60_000);
        await t.services.jobRunner.drain();
        expect((await getCall(t, id)).status).toBe('completed');
        expect(await balanceOf(t, userId)).toBe(8);
      },
    );
  });

  it('ends as failed, without a debit, a call still reported talking 4 hours after it was answered', async () => {
    const { agent, userId } = await agentFixture(t, { credits: 10 });
    await telephony.during(
      talkingUntil(telephony.real, () => false),
      async () => {
        const id = await place(t, agent.webhook_id);
        await t.services.jobRunner.drain();
        const answeredAt = new Date((await getCall(t, id)).started_at).getTime();
        clock.advance(MAX_CALL_MS - 60_000);
        await t.services.jobRunner.drain();
        expect((await getCall(t, id)).status).toBe('in_progress');
        clock.advance(60_000);
        await t.services.jobRunner.drain();
        const call = await getCall(t, id);
        expect(call).toMatchObject({ status: 'failed', duration_seconds: null });
        expect(call.failure_reason).toMatch(
          /still reported the call in progress 4 hours after it was answered/,
        );
        expect(new Date(call.ended_at).getTime() - answeredAt).toBe(MAX_CALL_MS);
        expect((await progressJob(id)).status).toBe('done');
        expect(await balanceOf(t, userId)).toBe(10);
      },
    );
  });
});
