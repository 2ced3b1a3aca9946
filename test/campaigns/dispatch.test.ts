/**
 * The campaign scheduler with a hand-moved clock and the simulated carrier (numbers ending in 0000
 * go unanswered, 9999 fail): every row becomes exactly one call under the campaign's cap, a number
 * listed after upload is skipped at dial time, calling hours hold rows back, the campaign pauses
 * when the owner's credits run out and resumes after a grant, completes with its event, and
 * POST …/retry dials again only the unsuccessful rows.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACTIVE_POLL_MS, DEFAULT_CONCURRENT_CALLS, PAUSED_POLL_MS } from '../../src/campaigns/scheduler.js';
import { ManualClock } from '../../src/core/clock.js';
import { agentFixture, grantCredits } from '../calls/helpers.js';
import { createPlan, startTestApp, type TestApp, type TestTenant } from '../support/app.js';

const clock = new ManualClock('2026-05-04T15:00:00.000Z'); // a Monday
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock, env: { SIMULATED_CALL_SECONDS: '61' } });
});
afterAll(() => t.close());

const db = () => t.services.database.db;
const phones = (n: number, from = 100) =>
  Array.from({ length: n }, (_, i) => ({ phone: `+1415555${String(from + i).padStart(4, '0')}` }));

async function startCampaign(tenant: TestTenant, body: Record<string, unknown>) {
  const created = await tenant.request('POST', '/api/v1/campaigns', { name: 'Run', ...body });
  expect(created.status, created.raw).toBe(201);
  const started = await tenant.request('POST', `/api/v1/campaigns/${created.body.data.id}/start`);
  expect(started.status, started.raw).toBe(200);
  return created.body.data.id as string;
}

/** Runs the queue, then moves the clock on by a poll, `rounds` times. */
async function run(rounds: number, stepMs = ACTIVE_POLL_MS) {
  for (let i = 0; i < rounds; i++) {
    await t.services.jobRunner.drain();
    clock.advance(stepMs);
  }
  await t.services.jobRunner.drain();
}

const get = async (tenant: TestTenant, id: string) =>
  (await tenant.request('GET', `/api/v1/campaigns/${id}`)).body.data;
const recipients = async (tenant: TestTenant, id: string) =>
  (await tenant.request('GET', `/api/v1/campaigns/${id}/recipients?limit=100`)).body.data;
const eventsOf = async (tenantId: string, type: string) =>
  db()
    .selectFrom('events')
    .select(['type', 'data'])
    .where('tenant_id', '=', tenantId)
    .where('type', '=', type)
    .execute();

describe('dispatch', () => {
  it('turns every row into exactly one call under the cap, and completes', async () => {
    const { tenant, agent } = await agentFixture(t, { credits: 1000 });
    const id = await startCampaign(tenant, {
      agent_id: agent.id,
      recipients: phones(7),
      max_concurrent_calls: 2,
    });
    // The live tick (armed by the start) run twice at once, a lease taken over: the second finds
    // its chain superseded. Two calls: the cap counts the campaign's calls not yet ended.
    const [queued] = await db()
      .selectFrom('jobs')
      .select(['id', 'payload'])
      .where('queue', '=', 'campaigns.tick')
      .where('status', '=', 'queued')
      .where('tenant_id', '=', tenant.id)
      .execute();
    const job = {
      id: queued.id,
      tenantId: tenant.id,
      queue: 'campaigns.tick',
      payload: queued.payload,
      attempt: 1,
      maxAttempts: 9,
    };
    await Promise.all([
      t.services.jobHandlers['campaigns.tick'](job),
      t.services.jobHandlers['campaigns.tick'](job),
    ]);
    expect(
      (await db().selectFrom('calls').select('id').where('tenant_id', '=', tenant.id).execute()).length,
    ).toBe(2);
    // The simulator's calls are over at once: each end tells the campaign, which fills the freed
    // slot, so the whole list is called without a tick of the chain (the clock never moves).
    await t.services.jobRunner.drain();
    const calls = await db()
      .selectFrom('calls')
      .select(['id', 'to_number', 'created_at'])
      .where('tenant_id', '=', tenant.id)
      .execute();
    expect(calls.length).toBe(7);
    expect(new Set(calls.map((c) => c.to_number)).size).toBe(7);
    const rows = await recipients(tenant, id);
    expect(rows.every((r: any) => r.status === 'done' && r.outcome === 'completed' && r.attempts === 1)).toBe(
      true,
    );
    expect(new Set(rows.map((r: any) => r.call_id)).size).toBe(7);
    const campaign = await get(tenant, id);
    expect(campaign).toMatchObject({
      status: 'completed',
      recipients: { done: 7, total: 7 },
      outcomes: { completed: 7 },
      minutes_used: 14,
    });
    expect(campaign.finished_at).not.toBeNull();
    const completed = await eventsOf(tenant.id, 'campaign.completed');
    expect(completed.length).toBe(1);
    expect((completed[0].data as any).object).toMatchObject({ id, status: 'completed' });
    expect((await eventsOf(tenant.id, 'campaign.started')).length).toBe(1);
  });

  it('skips a number listed after upload at dial time, with its reason', async () => {
    const { tenant, agent } = await agentFixture(t, { credits: 1000 });
    const created = await tenant.request('POST', '/api/v1/campaigns', {
      name: 'DNC',
      agent_id: agent.id,
      recipients: phones(2, 300),
    });
    const id = created.body.data.id;
    await tenant.request('POST', '/api/v1/do-not-call', { phone_number: '+14155550301' });
    await tenant.request('POST', `/api/v1/campaigns/${id}/start`);
    await run(2);
    const rows = await recipients(tenant, id);
    expect(rows.map((r: any) => [r.phone, r.status, r.skip_reason, r.call_id === null])).toEqual([
      ['+14155550300', 'done', null, false],
      ['+14155550301', 'skipped', 'do_not_call', true],
    ]);
    expect((await get(tenant, id)).status).toBe('completed');

    // The results as CSV: one line per recipient, its call and how it ended.
    const csv = await tenant.request('GET', `/api/v1/campaigns/${id}/results.csv`);
    expect(csv.status, csv.raw).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    const lines = csv.raw.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'line,phone,name,email,status,skip_reason,attempts,call_id,outcome,ended_reason,duration_seconds,billed_minutes,started_at,ended_at,context',
    );
    const [first, second] = lines.slice(1).map((line) => line.split(','));
    expect(first.slice(0, 2)).toEqual(['1', '+14155550300']);
    expect([first[4], first[8], first[9], first[10], first[11]]).toEqual([
      'done',
      'completed',
      'completed',
      '61',
      '2',
    ]);
    expect(first[7]).toBe(rows[0].call_id);
    expect([second[1], second[4], second[5], second[7]]).toEqual([
      '+14155550301',
      'skipped',
      'do_not_call',
      '',
    ]);
    expect(lines.length).toBe(3);
    const otherTenant = (await agentFixture(t)).tenant;
    expect((await otherTenant.request('GET', `/api/v1/campaigns/${id}/results.csv`)).status).toBe(404);
  });

  it('holds rows back outside the campaign’s calling hours', async () => {
    clock.set('2026-05-04T22:00:00.000Z'); // Monday 18:00 in New York
    const { tenant, agent } = await agentFixture(t, { credits: 1000 });
    const id = await startCampaign(tenant, {
      agent_id: agent.id,
      recipients: phones(1, 400),
      calling_hours: { timezone: 'America/New_York', days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' },
    });
    await run(3);
    expect((await recipients(tenant, id))[0].status).toBe('pending');
    clock.set('2026-05-05T13:00:00.000Z'); // Tuesday 09:00
    await run(1);
    expect((await recipients(tenant, id))[0]).toMatchObject({ status: 'done', outcome: 'completed' });
  });

  it('pauses when the owner’s credits run out and resumes by itself after a grant', async () => {
    clock.set('2026-05-06T15:00:00.000Z');
    const { tenant, agent, userId } = await agentFixture(t, { credits: 2 });
    const id = await startCampaign(tenant, {
      agent_id: agent.id,
      recipients: phones(3, 500),
      max_concurrent_calls: 1,
    });
    await run(3);
    const paused = await get(tenant, id);
    expect(paused).toMatchObject({
      status: 'paused',
      pause_reason: 'insufficient_credits',
      recipients: { done: 1, pending: 2 },
    });
    const pausedEvents = await eventsOf(tenant.id, 'campaign.paused');
    expect((pausedEvents[0].data as any).object).toMatchObject({ id, pause_reason: 'insufficient_credits' });
    await run(2, PAUSED_POLL_MS);
    expect((await get(tenant, id)).status).toBe('paused');
    await grantCredits(t, userId, 100);
    await run(4, PAUSED_POLL_MS);
    expect(await get(tenant, id)).toMatchObject({ status: 'completed', recipients: { done: 3 } });
  });

  it('without a cap keeps 10 calls outstanding, so a 2-minute balance pauses a 40-row list after those', async () => {
    clock.set('2026-05-07T15:00:00.000Z');
    const { tenant, agent } = await agentFixture(t, { credits: 2 });
    const id = await startCampaign(tenant, { agent_id: agent.id, recipients: phones(40, 600) });
    await t.services.jobRunner.drain();
    await run(3);
    const placed = await sql<{ n: number }>`
      SELECT count(*)::integer AS n FROM calls WHERE tenant_id = ${tenant.id}`.execute(db());
    expect(placed.rows[0].n).toBe(DEFAULT_CONCURRENT_CALLS);
    expect(await get(tenant, id)).toMatchObject({
      status: 'paused',
      pause_reason: 'insufficient_credits',
      recipients: { pending: 40 - DEFAULT_CONCURRENT_CALLS },
    });
  });

  it('retries only the rows whose calls went unanswered or failed, each with a new call', async () => {
    clock.set('2026-05-07T15:00:00.000Z');
    const { tenant, agent } = await agentFixture(t, { credits: 1000 });
    const id = await startCampaign(tenant, {
      agent_id: agent.id,
      recipients: [{ phone: '+14155510000' }, { phone: '+14155519999' }, { phone: '+14155512345' }],
    });
    await run(2);
    const before = await recipients(tenant, id);
    expect(before.map((r: any) => r.outcome)).toEqual(['no_answer', 'failed', 'completed']);
    expect((await get(tenant, id)).status).toBe('completed');
    const retried = await tenant.request('POST', `/api/v1/campaigns/${id}/retry`);
    expect(retried.body.data).toMatchObject({ requeued: 2, status: 'running' });
    await run(2);
    const after = await recipients(tenant, id);
    expect(after.map((r: any) => r.attempts)).toEqual([2, 2, 1]);
    expect(after[0].call_id).not.toBe(before[0].call_id);
    expect(after[1].call_id).not.toBe(before[1].call_id);
    expect(after[2].call_id).toBe(before[2].call_id);
    expect((await get(tenant, id)).status).toBe('completed');
    expect((await eventsOf(tenant.id, 'campaign.completed')).length).toBe(2);
  });

  it('the campaign’s retry setting calls an unanswered recipient again after its delay', async () => {
    clock.set('2026-05-08T15:00:00.000Z');
    const { tenant, agent } = await agentFixture(t, { credits: 1000 });
    const id = await startCampaign(tenant, {
      agent_id: agent.id,
      recipients: [{ phone: '+14155520000' }],
      retry: { max_attempts: 2, delay_minutes: 10 },
    });
    await run(2);
    expect((await recipients(tenant, id))[0]).toMatchObject({
      status: 'pending',
      attempts: 1,
      outcome: 'no_answer',
    });
    clock.advance(10 * 60_000);
    await run(2);
    expect((await recipients(tenant, id))[0]).toMatchObject({
      status: 'done',
      attempts: 2,
      outcome: 'no_answer',
    });
    expect((await get(tenant, id)).status).toBe('completed');
    const count = await sql<{
      n: number;
    }>`SELECT count(*)::integer AS n FROM calls WHERE tenant_id = ${tenant.id}`.execute(db());
    expect(count.rows[0].n).toBe(2);
  });
  it('calls recipients added to a running campaign at once, even while it waits for a retry’s delay', async () => {
    clock.set('2026-05-09T15:00:00.000Z');
    const { tenant, agent } = await agentFixture(t, { credits: 1000 });
    const id = await startCampaign(tenant, {
      agent_id: agent.id,
      recipients: [{ phone: '+14155530000' }],
      retry: { max_attempts: 2, delay_minutes: 60 },
    });
    await run(2);
    expect((await recipients(tenant, id))[0]).toMatchObject({ status: 'pending', attempts: 1 });
    const added = await tenant.request('POST', `/api/v1/campaigns/${id}/recipients`, {
      recipients: [{ phone: '+14155530001' }],
    });
    expect(added.status, added.raw).toBe(201);
    await t.services.jobRunner.drain();
    const rows = await recipients(tenant, id);
    expect(rows.map((r: any) => [r.phone, r.status, r.attempts])).toEqual([
      ['+14155530000', 'pending', 1],
      ['+14155530001', 'done', 1],
    ]);
  });

  it('cancel withdraws the calls not dialled yet; a call already dialling goes on', async () => {
    // The agent's calling hours (two hours from now) hold the campaign's calls queued in the pipeline.
    const hhmm = (ms: number) => new Date(clock.now().getTime() + ms).toISOString().slice(11, 16);
    const { tenant, agent } = await agentFixture(t, { credits: 1000 });
    await sql`UPDATE agents SET settings = ${JSON.stringify({
      calling_hours: {
        timezone: 'UTC',
        days: [1, 2, 3, 4, 5, 6, 7],
        start: hhmm(2 * 3600_000),
        end: hhmm(3 * 3600_000),
      },
    })}::jsonb WHERE id = ${agent.id}`.execute(db());
    const id = await startCampaign(tenant, {
      agent_id: agent.id,
      recipients: phones(5),
      max_concurrent_calls: 3,
    });
    await t.services.jobRunner.drain();
    const callsOf = () =>
      db()
        .selectFrom('calls')
        .select(['id', 'status', 'ended_reason'])
        .where('tenant_id', '=', tenant.id)
        .orderBy('id')
        .execute();
    const before = await callsOf();
    expect(before.map((c) => c.status)).toEqual(['queued', 'queued', 'queued']);
    // One of them is being dialled at this moment (the engine has it).
    await sql`UPDATE calls SET status = 'dialing' WHERE id = ${before[0].id}`.execute(db());

    const canceled = await tenant.request('POST', `/api/v1/campaigns/${id}/cancel`);
    expect(canceled.status, canceled.raw).toBe(200);
    expect(canceled.body.data).toMatchObject({ status: 'canceled', recipients: { canceled: 4, pending: 0 } });
    const after = await callsOf();
    expect(after.map((c) => [c.status, c.ended_reason])).toEqual([
      ['dialing', null],
      ['failed', 'canceled'],
      ['failed', 'canceled'],
    ]);
    const failedEvents = await eventsOf(tenant.id, 'call.failed');
    expect(failedEvents.map((e) => (e.data as any).object.ended_reason)).toEqual(['canceled', 'canceled']);
    // At the window's opening the dispatch jobs run: only the call that was dialling reaches the carrier.
    clock.advance(4 * 3600_000);
    await t.services.jobRunner.drain();
    const dials = await sql<{ call_id: string }>`
      SELECT d.call_id FROM telephony_simulated_dials d JOIN calls c ON c.id = d.call_id
      WHERE c.tenant_id = ${tenant.id}`.execute(db());
    expect(dials.rows.map((d) => d.call_id)).toEqual([before[0].id]);
    expect((await callsOf()).map((c) => c.status)).toEqual(['completed', 'failed', 'failed']);
  });
});

describe('a campaign paused for a balance resumes as soon as the balance comes back', () => {
  it('a top-up of the owner’s credits resumes it at once, without waiting for its next check', async () => {
    clock.set('2026-05-11T15:00:00.000Z');
    const { tenant, agent, userId } = await agentFixture(t, { credits: 0 });
    const plan = await createPlan(t, tenant.id, { name: 'Two minutes', included_minutes: 2 });
    const subscribed = await tenant.request('POST', '/api/v1/subscriptions', {
      user_id: userId,
      plan_id: plan.id,
    });
    expect(subscribed.status, subscribed.raw).toBe(201);
    const id = await startCampaign(tenant, {
      agent_id: agent.id,
      recipients: phones(3, 700),
      max_concurrent_calls: 1,
    });
    await run(3);
    expect(await get(tenant, id)).toMatchObject({ status: 'paused', pause_reason: 'insufficient_credits' });

    // The clock stands still from here: only the top-up's own job can resume the campaign.
    const topUp = await tenant.request(
      'POST',
      `/api/v1/users/${userId}/top-ups`,
      { minutes: 100 },
      { 'Idempotency-Key': `campaign-top-up-${userId}` },
    );
    expect(topUp.status, topUp.raw).toBe(201);
    await t.services.jobRunner.drain();
    expect(await get(tenant, id)).toMatchObject({ status: 'completed', recipients: { done: 3 } });
  });

  it('a credit of the tenant’s wallet resumes it at once', async () => {
    clock.set('2026-05-12T15:00:00.000Z');
    const { tenant, agent } = await agentFixture(t, { credits: 100 });
    const wallet = await t.admin('PUT', `/admin/v1/tenants/${tenant.id}/wallet`, {
      wholesale_rate: 0.05,
      currency: 'usd',
    });
    expect([200, 201]).toContain(wallet.status);
    const credit = (minutes: number) =>
      t.admin('POST', `/admin/v1/tenants/${tenant.id}/wallet/credits`, { minutes });
    expect((await credit(2)).status).toBe(201);
    const id = await startCampaign(tenant, {
      agent_id: agent.id,
      recipients: phones(3, 710),
      max_concurrent_calls: 1,
    });
    await run(3);
    expect(await get(tenant, id)).toMatchObject({
      status: 'paused',
      pause_reason: 'tenant_balance_exhausted',
    });

    expect((await credit(100)).status).toBe(201);
    await t.services.jobRunner.drain();
    expect(await get(tenant, id)).toMatchObject({ status: 'completed', recipients: { done: 3 } });
  });

  it('a credit that leaves the balance at zero or below wakes nothing', async () => {
    clock.set('2026-05-13T15:00:00.000Z');
    const { tenant, userId } = await agentFixture(t, { credits: 0 });
    await grantCredits(t, userId, 5);
    await t.admin('POST', `/admin/v1/users/${userId}/credits`, { minutes: -9 });
    await grantCredits(t, userId, 3);
    const restored = await db()
      .selectFrom('jobs')
      .select(['payload'])
      .where('queue', '=', 'credits.restored')
      .where('tenant_id', '=', tenant.id)
      .execute();
    // 0 → 5 came back above zero; -4 → -1 did not.
    expect(restored.map((job) => job.payload)).toEqual([{ user_id: userId }]);
  });
});

describe('a campaign fills a free slot as soon as one of its calls ends (2-second calls)', () => {
  const realtime = new ManualClock('2026-05-04T15:00:00.000Z');
  let rt: TestApp;
  beforeAll(async () => {
    rt = await startTestApp({
      clock: realtime,
      env: { SIMULATED_REALTIME: 'true', SIMULATED_CALL_SECONDS: '2' },
    });
  });
  afterAll(() => rt?.close());

  /** The most calls of the tenant dialling or talking at once, replaying their timeline in order. */
  async function peakLive(tenantId: string): Promise<number> {
    const events = await rt.services.database.db
      .selectFrom('call_events')
      .select(['call_id', 'status'])
      .where('tenant_id', '=', tenantId)
      .orderBy('id')
      .execute();
    const live = new Set<string>();
    let peak = 0;
    for (const event of events) {
      if (event.status === 'dialing') live.add(event.call_id);
      else if (event.status !== 'in_progress') live.delete(event.call_id);
      peak = Math.max(peak, live.size);
    }
    return peak;
  }

  it('a cap of 3 with 2-second calls keeps 3 calls going: 9 rows in 6 seconds, not at 5-second ticks', async () => {
    const { tenant, agent } = await agentFixture(rt, { credits: 1000 });
    const created = await tenant.request('POST', '/api/v1/campaigns', {
      name: 'Pace',
      agent_id: agent.id,
      recipients: phones(9, 800),
      max_concurrent_calls: 3,
    });
    expect(created.status, created.raw).toBe(201);
    const id = created.body.data.id;
    expect((await tenant.request('POST', `/api/v1/campaigns/${id}/start`)).status).toBe(200);
    const callsSoFar = async () =>
      rt.services.database.db
        .selectFrom('calls')
        .select(['status'])
        .where('tenant_id', '=', tenant.id)
        .execute();

    await rt.services.jobRunner.drain();
    expect((await callsSoFar()).map((c) => c.status)).toEqual(Array(3).fill('in_progress'));
    // Each second, well before the chain's next tick (5 s): the ends at 2 s and 4 s fill their slots.
    for (const [second, placed] of [
      [1, 3],
      [2, 6],
      [3, 6],
      [4, 9],
    ]) {
      realtime.set(new Date(Date.parse('2026-05-04T15:00:00.000Z') + second * 1000));
      await rt.services.jobRunner.drain();
      expect((await callsSoFar()).length, `calls placed after ${second} s`).toBe(placed);
    }
    realtime.set('2026-05-04T15:00:06.000Z');
    await rt.services.jobRunner.drain();
    const campaign = (await tenant.request('GET', `/api/v1/campaigns/${id}`)).body.data;
    expect(campaign).toMatchObject({
      status: 'completed',
      recipients: { done: 9, total: 9 },
      outcomes: { completed: 9 },
      finished_at: '2026-05-04T15:00:06.000Z',
    });
    expect(await peakLive(tenant.id)).toBe(3);
  });
});
