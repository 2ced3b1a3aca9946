/**
 * Call controls in dispatch, with a hand-moved clock: calling hours (a call placed outside its
 * window waits with `scheduled_for`, across a DST change), retries of unanswered calls, and the
 * agent and tenant concurrency caps (waiting calls are woken when a call ends, not by polling).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { agentFixture, trigger } from './helpers.js';

const clock = new ManualClock('2026-03-06T23:00:00.000Z');
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock, env: { SIMULATED_CALL_SECONDS: '61', RATE_LIMIT_WEBHOOK_BURST: '100' } });
});
afterAll(() => t.close());

const db = () => t.services.database.db;

async function setSettings(agentId: string, settings: object) {
  await sql`UPDATE agents SET settings = ${JSON.stringify(settings)}::jsonb WHERE id = ${agentId}`.execute(
    db(),
  );
}

async function place(tenant: { request: any }, agentId: string, phone = '+14155550123') {
  const response = await tenant.request('POST', '/api/v1/calls', { agent_id: agentId, phone, name: 'Ada' });
  expect(response.status).toBe(202);
  return response.body.data;
}

async function read(tenant: { request: any }, callId: string) {
  return (await tenant.request('GET', `/api/v1/calls/${callId}`)).body.data;
}

/** The most calls dialling or talking at once, replaying the timeline events in the order they were written. */
async function peakConcurrency(callIds: string[]): Promise<number> {
  const events = await db()
    .selectFrom('call_events')
    .select(['call_id', 'status'])
    .where('call_id', 'in', callIds)
    .orderBy('id')
    .execute();
  let active = 0;
  let peak = 0;
  const live = new Set<string>();
  for (const event of events) {
    if (event.status === 'dialing') live.add(event.call_id);
    else if (event.status !== 'in_progress') live.delete(event.call_id);
    active = live.size;
    peak = Math.max(peak, active);
  }
  return peak;
}

describe('calling hours', () => {
  it('accepts a call outside the window, shows scheduled_for, and dials it when the window opens (after a DST change)', async () => {
    clock.set('2026-03-06T23:00:00.000Z'); // Friday 18:00 EST
    const { tenant, agent } = await agentFixture(t);
    await setSettings(agent.id, {
      calling_hours: { timezone: 'America/New_York', days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' },
    });
    const placed = await place(tenant, agent.id);
    // Monday 09:00 EDT: the clocks went forward on Sunday.
    expect(placed).toMatchObject({ status: 'queued', scheduled_for: '2026-03-09T13:00:00.000Z' });
    await t.services.jobRunner.drain();
    expect(await read(tenant, placed.id)).toMatchObject({ status: 'queued', attempts: 0 });

    clock.set('2026-03-09T12:59:00.000Z');
    await t.services.jobRunner.drain();
    expect((await read(tenant, placed.id)).status).toBe('queued');

    clock.set('2026-03-09T13:00:00.000Z');
    await t.services.jobRunner.drain();
    const call = await read(tenant, placed.id);
    expect(call).toMatchObject({
      status: 'completed',
      scheduled_for: null,
      attempts: 1,
      ended_reason: 'completed',
    });
    expect(call.events.find((e: { status: string }) => e.status === 'dialing').at).toBe(
      '2026-03-09T13:00:00.000Z',
    );
  });

  it('dials at once inside a window that crosses midnight, and waits for the next one outside it', async () => {
    clock.set('2026-06-07T05:00:00.000Z'); // Sunday 01:00 EDT, inside Saturday 22:00–02:00
    const { tenant, agent } = await agentFixture(t);
    await setSettings(agent.id, {
      calling_hours: { timezone: 'America/New_York', days: [6], start: '22:00', end: '02:00' },
    });
    const inside = await place(tenant, agent.id);
    expect(inside.scheduled_for).toBeNull();
    await t.services.jobRunner.drain();
    expect((await read(tenant, inside.id)).status).toBe('completed');

    clock.set('2026-06-07T07:00:00.000Z'); // Sunday 03:00 EDT: closed until Saturday 22:00
    const outside = await place(tenant, agent.id);
    expect(outside.scheduled_for).toBe('2026-06-14T02:00:00.000Z');
    await t.services.jobRunner.drain();
    expect((await read(tenant, outside.id)).status).toBe('queued');
    clock.set('2026-06-14T02:00:00.000Z');
    await t.services.jobRunner.drain();
    expect((await read(tenant, outside.id)).status).toBe('completed');
  });
});

describe('retries of unanswered calls', () => {
  it('re-queues a no_answer with scheduled_for until max_attempts, each attempt an event, billing nothing', async () => {
    clock.set('2026-05-04T15:00:00.000Z');
    const { tenant, agent } = await agentFixture(t, { credits: 10 });
    await setSettings(agent.id, { retry: { max_attempts: 3, delay_minutes: 10 } });
    const placed = await place(tenant, agent.id, '+14155550000');
    await t.services.jobRunner.drain();
    expect(await read(tenant, placed.id)).toMatchObject({
      status: 'queued',
      attempts: 1,
      scheduled_for: '2026-05-04T15:10:00.000Z',
      ended_reason: null,
    });
    clock.advance(9 * 60_000);
    await t.services.jobRunner.drain();
    expect((await read(tenant, placed.id)).attempts).toBe(1);
    clock.advance(60_000);
    await t.services.jobRunner.drain();
    expect(await read(tenant, placed.id)).toMatchObject({ status: 'queued', attempts: 2 });
    clock.advance(10 * 60_000);
    await t.services.jobRunner.drain();
    const call = await read(tenant, placed.id);
    expect(call).toMatchObject({
      status: 'no_answer',
      attempts: 3,
      ended_reason: 'no_answer',
      billed_minutes: 0,
      scheduled_for: null,
    });
    expect(call.events.map((e: { status: string }) => e.status)).toEqual([
      'queued',
      'dialing',
      'queued',
      'dialing',
      'queued',
      'dialing',
      'no_answer',
    ]);
    expect(call.events[2].detail).toEqual({
      reason: 'no_answer',
      attempt: 2,
      scheduled_for: '2026-05-04T15:10:00.000Z',
    });
    // Each attempt is a call of its own at the carrier, asked for once.
    const dials = await db()
      .selectFrom('telephony_simulated_dials')
      .select(['attempt', 'dial_requests', 'outcome'])
      .where('call_id', '=', placed.id)
      .orderBy('attempt')
      .execute();
    expect(dials).toEqual([1, 2, 3].map((attempt) => ({ attempt, dial_requests: 1, outcome: 'no_answer' })));
    const balance = await t.admin('GET', `/admin/v1/users/${call.user_id}/credits`);
    expect(balance.body.data.balance_minutes).toBe(10);
  });
});

describe('concurrency caps', () => {
  it('keeps an agent’s calls beyond max_concurrent_calls queued and starts each when one ends, without waiting for a poll', async () => {
    clock.set('2026-05-05T15:00:00.000Z');
    const { tenant, agent } = await agentFixture(t);
    await setSettings(agent.id, { max_concurrent_calls: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const response = await trigger(t, agent.webhook_id, { phone: `+1415555020${i}`, name: 'Ada' });
      ids.push(response.body.data.id);
    }
    // The clock never moves: a waiting call parked behind the cap only starts if a call's end wakes it.
    await t.services.jobRunner.drain();
    const calls = await Promise.all(ids.map((id) => read(tenant, id)));
    expect(calls.map((c) => c.status)).toEqual(Array(7).fill('completed'));
    expect(await peakConcurrency(ids)).toBe(2);
  });

  it('applies the tenant-wide cap across its agents', async () => {
    clock.set('2026-05-06T15:00:00.000Z');
    const first = await agentFixture(t);
    const second = await agentFixture(t, { tenant: first.tenant });
    await sql`UPDATE tenants SET max_concurrent_calls = 1 WHERE id = ${first.tenant.id}`.execute(db());
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const agent = i % 2 === 0 ? first.agent : second.agent;
      ids.push((await place(first.tenant, agent.id, `+1415555030${i}`)).id);
    }
    await t.services.jobRunner.drain();
    const calls = await Promise.all(ids.map((id) => read(first.tenant, id)));
    expect(calls.map((c) => c.status)).toEqual(Array(6).fill('completed'));
    expect(await peakConcurrency(ids)).toBe(1);
  });
});

describe('the do-not-call list at dial time', () => {
  async function list(tenant: { request: any }, phone: string) {
    const response = await tenant.request('POST', '/api/v1/do-not-call', { phone_number: phone });
    expect(response.status, response.raw).toBe(201);
  }

  async function dialRecords(callId: string) {
    return db()
      .selectFrom('telephony_simulated_dials')
      .select('call_id')
      .where('call_id', '=', callId)
      .execute();
  }

  function expectRefusedUnplaced(call: any) {
    expect(call).toMatchObject({
      status: 'failed',
      ended_reason: 'do_not_call',
      failure_reason: 'The number is on the tenant’s do-not-call list; no call was placed.',
      attempts: 0,
      billed_minutes: 0,
      started_at: null,
    });
    expect(call.events.map((e: { status: string }) => e.status)).toEqual(['queued', 'failed']);
  }

  it('never dials a number listed while its call waited for the calling hours', async () => {
    clock.set('2026-03-06T23:00:00.000Z'); // Friday 18:00 EST
    const { tenant, agent, userId } = await agentFixture(t, { credits: 10 });
    await setSettings(agent.id, {
      calling_hours: { timezone: 'America/New_York', days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' },
    });
    const placed = await place(tenant, agent.id, '+14155550401');
    await t.services.jobRunner.drain();
    await list(tenant, '+14155550401');
    clock.set('2026-03-09T13:00:00.000Z');
    await t.services.jobRunner.drain();
    expectRefusedUnplaced(await read(tenant, placed.id));
    expect(await dialRecords(placed.id)).toEqual([]);
    const balance = await t.admin('GET', `/admin/v1/users/${userId}/credits`);
    expect(balance.body.data.balance_minutes).toBe(10);
    const failed = await db()
      .selectFrom('events')
      .select('data')
      .where('tenant_id', '=', tenant.id)
      .where('type', '=', 'call.failed')
      .execute();
    expect(failed.map((e) => (e.data as any).object)).toEqual([
      expect.objectContaining({ id: placed.id, ended_reason: 'do_not_call' }),
    ]);
  });

  it('never dials a number listed while its call waited behind the agent’s concurrency cap', async () => {
    clock.set('2026-05-07T15:00:00.000Z');
    const { tenant, agent } = await agentFixture(t, { credits: 10 });
    await setSettings(agent.id, { max_concurrent_calls: 1 });
    // A call of the agent still talking holds its only slot.
    const talking = await place(tenant, agent.id, '+14155550402');
    await t.services.jobRunner.drain();
    await sql`UPDATE calls SET status = 'in_progress' WHERE id = ${talking.id}`.execute(db());
    const waiting = await place(tenant, agent.id, '+14155550403');
    await t.services.jobRunner.drain();
    expect(await read(tenant, waiting.id)).toMatchObject({ status: 'queued', attempts: 0 });
    await list(tenant, '+14155550403');
    // The slot frees; the waiting call's turn comes (the cap's backstop looks again after 30 s).
    await sql`UPDATE calls SET status = 'completed' WHERE id = ${talking.id}`.execute(db());
    clock.advance(30_000);
    await t.services.jobRunner.drain();
    expectRefusedUnplaced(await read(tenant, waiting.id));
    expect(await dialRecords(waiting.id)).toEqual([]);
  });

  it('checks again at each attempt of a retried call', async () => {
    clock.set('2026-05-08T15:00:00.000Z');
    const { tenant, agent } = await agentFixture(t, { credits: 10 });
    await setSettings(agent.id, { retry: { max_attempts: 3, delay_minutes: 10 } });
    const placed = await place(tenant, agent.id, '+14155550000');
    await t.services.jobRunner.drain();
    expect(await read(tenant, placed.id)).toMatchObject({ status: 'queued', attempts: 1 });
    await list(tenant, '+14155550000');
    clock.advance(10 * 60_000);
    await t.services.jobRunner.drain();
    const call = await read(tenant, placed.id);
    expect(call).toMatchObject({ status: 'failed', ended_reason: 'do_not_call', attempts: 1 });
    expect(await dialRecords(placed.id)).toHaveLength(1);
  });
});
