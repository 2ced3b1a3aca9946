/**
 * Calls placed by a voice engine that reports by callback (docs/engines.md), through the real
 * pipeline with a scripted engine behind the telephony port: the engine is asked at most once per
 * attempt, its reports move the call (billing, reason, transcript, recording, retries), late or
 * repeated reports change nothing, and the backstop ends calls whose reports never come.
 * The Vapi and Retell adapters' own tests (test/telephony/) play whole calls over HTTP.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { Job } from '../../src/core/jobs/runner.js';
import {
  type DialRequest,
  type DialResult,
  type EngineReport,
  type PublishedAgentVersion,
  type TelephonyAdapter,
  TelephonyError,
} from '../../src/telephony/port.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { agentFixture, balanceOf, publish } from './helpers.js';

/** A dial the engine takes (it creates the call) but whose answer is lost on the way back. */
const LOST_ANSWER = 'lost answer';

/** A voice engine whose answers the test scripts; it records every request. */
class ScriptedEngine implements TelephonyAdapter {
  readonly name = 'scripted';
  readonly dialSettleMs = 30_000;
  dials: DialRequest[] = [];
  synced: PublishedAgentVersion[] = [];
  /** Answers to the next dials, in order; then every dial is placed. */
  nextDials: (DialResult | Error | typeof LOST_ANSWER)[] = [];
  /** The engine's record of each call, by its id (what lookup answers). */
  records = new Map<string, EngineReport | undefined>();
  /** The calls it created, by our call id and attempt (what findDial answers from). */
  created = new Map<string, string>();
  /** The engine's own ids, never reused. */
  private placed = 0;
  lastEngineCallId = '';
  finds: DialRequest[] = [];

  /** Runs while the engine answers a dial (a report that overtakes the answer). */
  duringDial: ((request: DialRequest, engineCallId: string) => Promise<void>) | undefined;

  async dial(request: DialRequest): Promise<DialResult> {
    this.dials.push(request);
    const next = this.nextDials.shift();
    if (next instanceof Error) throw next;
    if (next && next !== LOST_ANSWER) return next;
    const engineCallId = `eng_${++this.placed}`;
    this.lastEngineCallId = engineCallId;
    this.records.set(engineCallId, undefined);
    this.created.set(`${request.callId}/${request.attempt}`, engineCallId);
    if (next === LOST_ANSWER) throw new TelephonyError('no answer within 10 s', true, true);
    await this.duringDial?.(request, engineCallId);
    return { outcome: 'placed', engineCallId };
  }

  /** What findDial throws instead of answering. */
  findError: Error | undefined;

  async findDial(request: DialRequest): Promise<DialResult | undefined> {
    this.finds.push(request);
    if (this.findError) throw this.findError;
    const engineCallId = this.created.get(`${request.callId}/${request.attempt}`);
    return engineCallId ? { outcome: 'placed', engineCallId } : undefined;
  }

  async progress(): Promise<never> {
    throw new Error('progress is never asked for a placed call');
  }

  /** What lookup throws instead of answering. */
  lookupError: Error | undefined;

  async lookup(engineCallId: string) {
    if (this.lookupError) throw this.lookupError;
    return this.records.get(engineCallId);
  }

  async syncAgentVersion(version: PublishedAgentVersion) {
    this.synced.push(version);
  }
}

const clock = new ManualClock('2026-11-24T10:00:00.000Z');
const engine = new ScriptedEngine();
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock, adapters: () => ({ telephony: engine }) });
});
afterAll(() => t.close());
beforeEach(() => {
  engine.dials = [];
  engine.nextDials = [];
});

const at = (offsetSeconds: number) => new Date(clock.now().getTime() + offsetSeconds * 1000);

async function placeCall(fixture: Awaited<ReturnType<typeof agentFixture>>, phone = '+14155550123') {
  const response = await fixture.tenant.request('POST', '/api/v1/calls', {
    agent_id: fixture.agent.id,
    phone,
    name: 'Ada',
  });
  expect(response.status).toBe(202);
  await t.services.jobRunner.drain();
  return response.body.data.id as string;
}

async function read(fixture: Awaited<ReturnType<typeof agentFixture>>, callId: string) {
  return (await fixture.tenant.request('GET', `/api/v1/calls/${callId}`)).body.data;
}

function ended(
  callId: string | undefined,
  engineCallId: string,
  overrides: Partial<EngineReport> = {},
): EngineReport {
  return {
    kind: 'ended',
    callId,
    engineCallId,
    outcome: 'completed',
    endedReason: 'customer-ended-call',
    startedAt: at(-125),
    endedAt: at(0),
    transcript: 'AI: Hello Ada.\nUser: Hi!',
    recordingUrl: 'https://recordings.example/eng.wav',
    ...overrides,
  } as EngineReport;
}

describe('a call placed by a voice engine', () => {
  it('waits dialing for the engine, then its reports start, end and bill it with the engine’s own reason, transcript and recording', async () => {
    const fixture = await agentFixture(t, { credits: 10 });
    const callId = await placeCall(fixture);
    expect(engine.dials).toHaveLength(1);
    expect(engine.dials[0]).toMatchObject({
      callId,
      attempt: 1,
      agentId: fixture.agent.id,
      agentVersion: 1,
      to: '+14155550123',
      prompt: 'Call Ada about {product}.',
    });
    const engineCallId = engine.lastEngineCallId;
    expect(await read(fixture, callId)).toMatchObject({
      status: 'dialing',
      engine: 'scripted',
      engine_call_id: engineCallId,
    });

    const started = { kind: 'started' as const, callId, engineCallId, startedAt: at(-125) };
    expect(await t.services.engineReports.apply('scripted', started)).toBe('applied');
    expect(await t.services.engineReports.apply('scripted', started)).toBe('ignored');
    expect((await read(fixture, callId)).status).toBe('in_progress');

    expect(await t.services.engineReports.apply('scripted', ended(callId, engineCallId))).toBe('applied');
    expect(await t.services.engineReports.apply('scripted', ended(callId, engineCallId))).toBe('ignored');
    const call = await read(fixture, callId);
    expect(call).toMatchObject({
      status: 'completed',
      ended_reason: 'customer-ended-call',
      duration_seconds: 125,
      billed_minutes: 3,
      transcript: 'AI: Hello Ada.\nUser: Hi!',
      recording_url: 'https://recordings.example/eng.wav',
      engine_call_id: engineCallId,
    });
    expect(call.events.map((e: { status: string }) => e.status)).toEqual([
      'queued',
      'dialing',
      'in_progress',
      'completed',
    ]);
    expect(await balanceOf(t, fixture.userId)).toBe(7);

    const events = await fixture.tenant.request('GET', '/api/v1/events?type=call.completed');
    const event = events.body.data.find((e: any) => e.data.object.id === callId);
    expect(event.data.object).toMatchObject({
      transcript: call.transcript,
      ended_reason: 'customer-ended-call',
      engine: 'scripted',
    });
  });

  it('answers an ending that comes without a start (the engine’s only report) in one step, and finds a call by the engine’s id alone', async () => {
    const fixture = await agentFixture(t, { credits: 10 });
    const callId = await placeCall(fixture);
    const engineCallId = engine.lastEngineCallId;
    expect(
      await t.services.engineReports.apply(
        'scripted',
        ended(undefined, engineCallId, { durationSeconds: 30 }),
      ),
    ).toBe('applied');
    expect(await read(fixture, callId)).toMatchObject({
      status: 'completed',
      duration_seconds: 30,
      billed_minutes: 1,
    });
    expect(await t.services.engineReports.apply('scripted', ended(undefined, 'eng_unknown'))).toBe('ignored');
    expect(await t.services.engineReports.apply('scripted', ended('call_unknown', 'eng_unknown'))).toBe(
      'ignored',
    );
    expect(await t.services.engineReports.apply('other-engine', ended(callId, engineCallId))).toBe('ignored');
  });

  it('never asks the engine twice for one attempt when dispatch runs again', async () => {
    const fixture = await agentFixture(t);
    const callId = await placeCall(fixture);
    const job = {
      id: -1,
      queue: 'calls.dispatch',
      attempt: 2,
      maxAttempts: 8,
      payload: { callId, tenantId: fixture.tenant.id },
    };
    await t.services.jobHandlers['calls.dispatch'](job as unknown as Job);
    await t.services.jobHandlers['calls.dispatch'](job as unknown as Job);
    expect(engine.dials.filter((d) => d.callId === callId)).toHaveLength(1);
  });

  it('asks again after a refusal that created nothing', async () => {
    const fixture = await agentFixture(t);
    engine.nextDials = [new TelephonyError('engine answered 503', true)];
    const refused = await placeCall(fixture);
    clock.advance(60_000);
    await t.services.jobRunner.drain();
    expect(engine.dials.filter((d) => d.callId === refused)).toHaveLength(2);
    expect((await read(fixture, refused)).engine_call_id).toBe(engine.lastEngineCallId);
  });

  it('adopts the engine’s call when the answer to the dial was lost, once the request has settled', async () => {
    const fixture = await agentFixture(t);
    engine.nextDials = [LOST_ANSWER];
    const callId = await placeCall(fixture);
    const created = engine.created.get(`${callId}/1`);
    expect(await read(fixture, callId)).toMatchObject({ status: 'dialing', engine_call_id: null });
    // Not asked before the request has settled: the job waits, without spending an attempt.
    clock.advance(29_000);
    await t.services.jobRunner.drain();
    expect(engine.finds.filter((f) => f.callId === callId)).toHaveLength(0);
    clock.advance(1_000);
    engine.records.set(created as string, ended(callId, created as string));
    await t.services.jobRunner.drain();
    expect(engine.finds.filter((f) => f.callId === callId)).toMatchObject([{ attempt: 1 }]);
    expect(engine.dials.filter((d) => d.callId === callId)).toHaveLength(1);
    // Adopted, and the engine's record (the call ended meanwhile) applied at once by the backstop.
    expect(await read(fixture, callId)).toMatchObject({ status: 'completed', engine_call_id: created });
  });

  it('dials again when the engine holds no call for an attempt whose answer was lost', async () => {
    const fixture = await agentFixture(t);
    engine.nextDials = [new TelephonyError('Vapi POST /call answered 500.', true, true)];
    const callId = await placeCall(fixture);
    expect(engine.created.get(`${callId}/1`)).toBeUndefined();
    clock.advance(30_000);
    await t.services.jobRunner.drain();
    expect(engine.dials.filter((d) => d.callId === callId).map((d) => d.attempt)).toEqual([1, 1]);
    const placed = engine.created.get(`${callId}/1`);
    expect(await read(fixture, callId)).toMatchObject({ status: 'dialing', engine_call_id: placed });
    const claim = await t.services.database.db
      .selectFrom('engine_dials')
      .select(['requests', 'engine_call_id'])
      .where('call_id', '=', callId)
      .executeTakeFirstOrThrow();
    expect(claim).toEqual({ requests: 2, engine_call_id: placed });
  });

  it('ends the call as failed with the engine’s reason when the engine refuses it for good', async () => {
    const fixture = await agentFixture(t);
    engine.nextDials = [
      {
        outcome: 'failed',
        reason: 'the number is not imported into the engine',
        endedReason: 'number-not-imported',
      },
    ];
    const callId = await placeCall(fixture);
    expect(await read(fixture, callId)).toMatchObject({
      status: 'failed',
      ended_reason: 'number-not-imported',
      failure_reason: 'the number is not imported into the engine',
    });
  });

  it('retries an unanswered call per settings.retry as a new engine call, and ignores a late report of the first attempt', async () => {
    const fixture = await agentFixture(t, { credits: 10 });
    await t.admin('PATCH', `/admin/v1/agents/${fixture.agent.id}`, {
      settings: { retry: { max_attempts: 2, delay_minutes: 5 } },
    });
    const callId = await placeCall(fixture);
    const first = (await read(fixture, callId)).engine_call_id;
    const noAnswer = ended(callId, first, {
      outcome: 'no_answer',
      endedReason: 'customer-did-not-answer',
      startedAt: undefined,
    });
    expect(await t.services.engineReports.apply('scripted', noAnswer)).toBe('applied');
    expect(await read(fixture, callId)).toMatchObject({ status: 'queued', attempts: 1 });

    clock.advance(5 * 60_000);
    await t.services.jobRunner.drain();
    const second = (await read(fixture, callId)).engine_call_id;
    expect(second).not.toBe(first);
    expect(engine.dials.filter((d) => d.callId === callId).map((d) => d.attempt)).toEqual([1, 2]);

    expect(await t.services.engineReports.apply('scripted', ended(callId, first))).toBe('ignored');
    expect((await read(fixture, callId)).status).toBe('dialing');
    expect(await t.services.engineReports.apply('scripted', { ...noAnswer, engineCallId: second })).toBe(
      'applied',
    );
    expect(await read(fixture, callId)).toMatchObject({
      status: 'no_answer',
      ended_reason: 'customer-did-not-answer',
      attempts: 2,
    });
    expect(await balanceOf(t, fixture.userId)).toBe(10);
  });
});

describe('reports that race the dispatch', () => {
  const retry = { retry: { max_attempts: 2, delay_minutes: 5 } };

  it('retries a call whose no-answer report came while the dispatch that placed it was still running', async () => {
    const fixture = await agentFixture(t, { credits: 10 });
    await t.admin('PATCH', `/admin/v1/agents/${fixture.agent.id}`, { settings: retry });
    engine.duringDial = async (request, engineCallId) => {
      engine.duringDial = undefined;
      const busy = ended(request.callId, engineCallId, {
        outcome: 'no_answer',
        endedReason: 'customer-busy',
        startedAt: undefined,
      });
      expect(await t.services.engineReports.apply('scripted', busy)).toBe('applied');
    };
    const callId = await placeCall(fixture);
    expect(await read(fixture, callId)).toMatchObject({
      status: 'queued',
      attempts: 1,
      engine_call_id: null,
    });
    clock.advance(5 * 60_000);
    await t.services.jobRunner.drain();
    expect(engine.dials.filter((d) => d.callId === callId).map((d) => d.attempt)).toEqual([1, 2]);
    expect(await read(fixture, callId)).toMatchObject({
      status: 'dialing',
      attempts: 2,
      engine_call_id: engine.lastEngineCallId,
    });
  });

  it('takes the reports of a later attempt whose answer was lost, and not those of the attempt before', async () => {
    const fixture = await agentFixture(t, { credits: 10 });
    await t.admin('PATCH', `/admin/v1/agents/${fixture.agent.id}`, { settings: retry });
    const callId = await placeCall(fixture);
    const first = engine.lastEngineCallId;
    const noAnswer = ended(callId, first, {
      outcome: 'no_answer',
      endedReason: 'customer-did-not-answer',
      startedAt: undefined,
    });
    await t.services.engineReports.apply('scripted', noAnswer);
    engine.nextDials = [new TelephonyError('no answer within 10 s', true, true)];
    clock.advance(5 * 60_000);
    await t.services.jobRunner.drain();
    expect(await read(fixture, callId)).toMatchObject({
      status: 'dialing',
      attempts: 2,
      engine_call_id: null,
    });
    expect(await t.services.engineReports.apply('scripted', ended(callId, first))).toBe('ignored');
    expect(await t.services.engineReports.apply('scripted', ended(callId, 'eng_second_lost'))).toBe(
      'applied',
    );
    expect(await read(fixture, callId)).toMatchObject({
      status: 'completed',
      engine_call_id: 'eng_second_lost',
      billed_minutes: 3,
    });
  });

  it('resolves a possibly lost answer even on the dispatch job’s last attempt, asking once', async () => {
    const fixture = await agentFixture(t);
    const placed = await fixture.tenant.request('POST', '/api/v1/calls', {
      agent_id: fixture.agent.id,
      phone: '+14155550125',
    });
    const callId = placed.body.data.id;
    engine.nextDials = [new TelephonyError('no answer within 10 s', true, true)];
    const lastAttempt = {
      id: -1,
      queue: 'calls.dispatch',
      attempt: 8,
      maxAttempts: 8,
      payload: { callId, tenantId: fixture.tenant.id },
    };
    await expect(
      t.services.jobHandlers['calls.dispatch'](lastAttempt as unknown as Job),
    ).rejects.toMatchObject({
      name: 'RetryJobError',
      countsAsAttempt: false,
      delayMs: 30_000,
    });
    expect(await read(fixture, callId)).toMatchObject({ status: 'dialing' });
    // The job's own run before the request has settled finds nothing yet, and waits.
    await t.services.jobRunner.drain();
    expect(engine.dials.filter((d) => d.callId === callId)).toHaveLength(1);
    // The engine did place it after all: its report carries our id and ends the call.
    expect(await t.services.engineReports.apply('scripted', ended(callId, 'eng_placed_after_all'))).toBe(
      'applied',
    );
    expect((await read(fixture, callId)).status).toBe('completed');
    clock.advance(30_000);
    await t.services.jobRunner.drain();
    expect(engine.dials.filter((d) => d.callId === callId)).toHaveLength(1);
  });
});

describe('the backstop of a placed call', () => {
  it('adopts the engine’s call of an attempt its dispatch could not resolve, and never dials', async () => {
    const fixture = await agentFixture(t, { credits: 10 });
    engine.nextDials = [LOST_ANSWER];
    engine.findError = new TelephonyError('the engine answered 503', true);
    try {
      const callId = await placeCall(fixture);
      const created = engine.created.get(`${callId}/1`) as string;
      // The engine's list stays unreachable through the dispatch job's last attempt: the call is
      // left to the backstop, dialing, without the engine's id.
      const checks = () =>
        t.services.database.db
          .selectFrom('jobs')
          .select('status')
          .where('queue', '=', 'calls.engine_check')
          .where(({ ref }) => ref('payload', '->>').key('callId' as never), '=', callId)
          .execute();
      for (let i = 0; i < 12 && (await checks()).length === 0; i++) {
        clock.advance(60_000);
        await t.services.jobRunner.drain();
      }
      expect(await checks()).toEqual([{ status: 'queued' }]);
      expect(await read(fixture, callId)).toMatchObject({ status: 'dialing', engine_call_id: null });
      engine.findError = undefined;
      engine.records.set(created, ended(callId, created));
      clock.advance(10 * 60_000);
      await t.services.jobRunner.drain();
      expect(await read(fixture, callId)).toMatchObject({ status: 'completed', engine_call_id: created });
      expect(engine.dials.filter((d) => d.callId === callId)).toHaveLength(1);
    } finally {
      engine.findError = undefined;
    }
  });

  it('asks the engine when no report came, and applies its record', async () => {
    const fixture = await agentFixture(t, { credits: 10 });
    const callId = await placeCall(fixture);
    const engineCallId = (await read(fixture, callId)).engine_call_id;
    clock.advance(10 * 60_000);
    await t.services.jobRunner.drain();
    expect((await read(fixture, callId)).status).toBe('dialing');

    engine.records.set(engineCallId, ended(callId, engineCallId, { endedReason: 'assistant-ended-call' }));
    clock.advance(10 * 60_000);
    await t.services.jobRunner.drain();
    expect(await read(fixture, callId)).toMatchObject({
      status: 'completed',
      ended_reason: 'assistant-ended-call',
    });
  });

  it.each([
    ['has no record of it', undefined],
    ['does not know it', new TelephonyError('the engine answered 404', false)],
    ['cannot be reached', new TelephonyError('the engine answered 503', true)],
  ])('ends a call as failed when for an hour the engine %s', async (_, lookupError) => {
    const fixture = await agentFixture(t);
    const callId = await placeCall(fixture);
    engine.lookupError = lookupError;
    try {
      for (let i = 0; i < 7; i++) {
        clock.advance(10 * 60_000);
        await t.services.jobRunner.drain();
        if (i < 5) expect((await read(fixture, callId)).status).toBe('dialing');
      }
    } finally {
      engine.lookupError = undefined;
    }
    const call = await read(fixture, callId);
    expect(call).toMatchObject({ status: 'failed', ended_reason: 'engine-silent' });
    expect(call.failure_reason).toContain('reported nothing');
  });
});

describe('publishing for an engine that keeps agents of its own', () => {
  it('queues the sync of each published version, placeholders as written', async () => {
    const fixture = await agentFixture(t);
    await t.services.jobRunner.drain();
    const changed = await t.admin('PATCH', `/admin/v1/agents/${fixture.agent.id}`, {
      welcome_message: 'Hello {name}, once more.',
    });
    expect(changed.status).toBe(200);
    await publish(t, fixture.agent.id);
    await t.services.jobRunner.drain();
    const synced = engine.synced.filter((v) => v.agentId === fixture.agent.id);
    expect(synced.map((v) => v.version)).toEqual([1, 2]);
    expect(synced[1]).toMatchObject({ prompt: 'Call {name} about {product}.', phoneNumber: '+14155550199' });
  });
});
