/**
 * Call events: `call.queued`, `call.started`, `call.completed`, `call.no_answer`, `call.failed`,
 * each written by the statement that changes the call's status, with the call as
 * `GET /api/v1/calls/{id}` showed it at that moment (timeline included), and delivered signed to a
 * subscribed endpoint; a refused trigger records nothing.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentFixture, trigger } from '../calls/helpers.js';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { type Receiver, startReceiver } from './helpers.js';

let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  t = await startTestApp({ env: { SIMULATED_CALL_SECONDS: '61', WEBHOOK_ALLOW_PRIVATE: 'true' } });
});
afterAll(async () => {
  await receiver?.close();
  await t.close();
});

interface StoredEvent {
  id: string;
  type: string;
  object: Record<string, any>;
}

async function callEvents(tenantId: string, callId?: string): Promise<StoredEvent[]> {
  const rows = await t.services.database.db
    .selectFrom('events')
    .select(['id', 'type', 'data'])
    .where('tenant_id', '=', tenantId)
    .where('type', 'like', 'call.%')
    .select('created_at')
    .orderBy('created_at')
    .execute();
  // A call answered and ended in one step (0-second calls) records both events at the same
  // instant: the list's order between equal times is arbitrary, so ties follow the call's life.
  const stage = (type: string) =>
    ['call.queued', 'call.started'].indexOf(type) + 1 || (type === 'call.analyzed' ? 4 : 3);
  rows.sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || stage(a.type) - stage(b.type));
  return rows
    .map((row) => ({ id: row.id, type: row.type, object: row.data.object }))
    .filter((event) => callId === undefined || event.object.id === callId);
}

async function place(webhookId: string, phone: string): Promise<string> {
  const response = await trigger(t, webhookId, { phone, name: 'Ada', product: 'solar panels' });
  expect(response.status, response.raw).toBe(202);
  return response.body.data.id;
}

const shown = async (tenant: TestTenant, callId: string) => {
  const response = await tenant.request('GET', `/api/v1/calls/${callId}`);
  expect(response.status, response.raw).toBe(200);
  return response.body.data;
};

describe('call events', () => {
  it('records queued, started and completed with the call as GET showed it, delivered signed', async () => {
    const { tenant, agent } = await agentFixture(t, { credits: 10 });
    receiver = await startReceiver();
    const endpoint = await tenant.request('POST', '/api/v1/webhook-endpoints', {
      url: receiver.url,
      events: ['call.queued', 'call.started', 'call.completed'],
    });
    expect(endpoint.status, endpoint.raw).toBe(201);
    receiver.secret = endpoint.body.data.secret;

    const id = await place(agent.webhook_id, '+14155550123');
    const [queued] = await callEvents(tenant.id, id);
    // Recorded with the call, before any dispatch: the call exactly as GET shows it now.
    expect(queued.type).toBe('call.queued');
    expect(queued.object).toEqual(await shown(tenant, id));

    await t.services.jobRunner.drain();
    const events = await callEvents(tenant.id, id);
    expect(events.map((e) => e.type)).toEqual([
      'call.queued',
      'call.started',
      'call.completed',
      'call.analyzed',
    ]);
    const final = await shown(tenant, id);
    const notAnalyzed = { summary: null, successful: null, data: null };
    // The simulator's analysis arrives after the end, with its own event.
    expect(events[2].object).toEqual({ ...final, analysis: notAnalyzed });
    expect(events[3].object).toEqual(final);
    expect(final).toMatchObject({ status: 'completed', billed_minutes: 2, duration_seconds: 61 });
    // The started call: as GET showed it then, its timeline up to its answer.
    expect(events[1].object).toEqual({
      ...final,
      status: 'in_progress',
      ended_at: null,
      duration_seconds: null,
      billed_minutes: null,
      ended_reason: null,
      answered_by: 'unknown',
      transcript: null,
      recording_url: null,
      analysis: notAnalyzed,
      events: final.events.slice(0, 3),
    });
    expect(final.events.map((e: { status: string }) => e.status)).toEqual([
      'queued',
      'dialing',
      'in_progress',
      'completed',
    ]);

    const delivered = await receiver.waitFor(3);
    const byId = new Map(delivered.map((d) => [d.headers['webhook-id'], d]));
    for (const event of events.slice(0, 3)) {
      const delivery = byId.get(event.id);
      expect(delivery?.error).toBeUndefined();
      expect(delivery?.verified).toMatchObject({
        id: event.id,
        type: event.type,
        data: { object: event.object },
      });
    }
  });

  it('records queued then no_answer for a number ending 0000, queued then failed for 9999', async () => {
    const { tenant, agent } = await agentFixture(t, { credits: 10 });
    const noAnswer = await place(agent.webhook_id, '+14155550000');
    const failed = await place(agent.webhook_id, '+14155559999');
    await t.services.jobRunner.drain();
    const noAnswerEvents = await callEvents(tenant.id, noAnswer);
    expect(noAnswerEvents.map((e) => e.type)).toEqual(['call.queued', 'call.no_answer']);
    expect(noAnswerEvents[1].object).toEqual(await shown(tenant, noAnswer));
    const failedEvents = await callEvents(tenant.id, failed);
    expect(failedEvents.map((e) => e.type)).toEqual(['call.queued', 'call.failed']);
    const failedCall = await shown(tenant, failed);
    expect(failedEvents[1].object).toEqual(failedCall);
    expect(failedCall.failure_reason).toMatch(/could not be reached/);
  });

  it('records nothing for a refused trigger', async () => {
    const broke = await agentFixture(t, { credits: 0 });
    const refused = await trigger(t, broke.agent.webhook_id, { phone: '+14155550123', name: 'Ada' });
    expect(refused.status, refused.raw).toBe(402);
    expect(await callEvents(broke.tenant.id)).toEqual([]);

    // Refused by the guarded insert itself (the target is cached, the number listed since).
    const { tenant, agent } = await agentFixture(t);
    await place(agent.webhook_id, '+14155550123');
    await sql`INSERT INTO do_not_call (tenant_id, phone_number, reason, created_at)
              VALUES (${tenant.id}, '+14155550777', 'asked', now())`.execute(t.services.database.db);
    const listed = await trigger(t, agent.webhook_id, { phone: '+14155550777', name: 'Ada' });
    expect(listed.status, listed.raw).toBe(409);
    expect((await callEvents(tenant.id)).map((e) => e.object.to)).toEqual(['+14155550123']);
  });
});
