/**
 * Vapi's server messages: their translation into EngineReports (every documented endedReason has
 * an outcome) and the route Vapi posts them to (its credential, its answers), end to end with the
 * fake Vapi playing a call the adapter placed.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VapiConfig } from '../../src/core/config/config.js';
import { registerErrorHandling } from '../../src/core/http/error-handler.js';
import type { EngineReport, EngineReports } from '../../src/telephony/port.js';
import { createVapiTelephony } from '../../src/telephony/vapi/adapter.js';
import {
  outcomeOfEndedReason,
  reportFromServerMessage,
  serverMessageOf,
  type VapiServerMessage,
} from '../../src/telephony/vapi/messages.js';
import { vapiRoutes } from '../../src/telephony/vapi/routes.js';
import { startFakeVapi, VAPI_OPENAPI_EXCERPT } from '../support/fake-vapi.js';

const SECRET = 'vapi-server-secret-0123456789';
const RECEIVED_AT = new Date('2026-11-21T10:05:00Z');
const CALL_ID = 'call_4bX9kQ2mZr7TtY1pW3sVn8Ld';
const ENGINE_CALL_ID = '9a3c1f5e-1d2b-4c8e-9f00-7b6a5c4d3e2f';

const assistant = { metadata: { voiceplane_call_id: CALL_ID, voiceplane_tenant_id: 'ten_9Qm2' } };
const message = (fields: Record<string, unknown>): VapiServerMessage => ({
  type: 'end-of-call-report',
  call: { id: ENGINE_CALL_ID, assistant },
  assistant,
  ...fields,
});
const ended = (fields: Record<string, unknown>) =>
  reportFromServerMessage(message(fields), RECEIVED_AT) as Extract<EngineReport, { kind: 'ended' }>;

const documentedEndedReasons = (
  VAPI_OPENAPI_EXCERPT as unknown as {
    components: { schemas: { Call: { properties: { endedReason: { enum: string[] } } } } };
  }
).components.schemas.Call.properties.endedReason.enum;

describe('endedReason → outcome', () => {
  it.each([
    ['customer-ended-call', 'completed'],
    ['assistant-ended-call-after-message-spoken', 'completed'],
    ['assistant-said-end-call-phrase', 'completed'],
    ['assistant-forwarded-call', 'completed'],
    ['exceeded-max-duration', 'completed'],
    ['silence-timed-out', 'completed'],
    ['call.in-progress.twilio-completed-call', 'completed'],
    ['call.forwarding.operator-busy', 'completed'],
    ['customer-did-not-answer', 'no_answer'],
    ['customer-busy', 'no_answer'],
    ['voicemail', 'no_answer'],
    ['call.in-progress.error-providerfault-outbound-sip-480-temporarily-unavailable', 'no_answer'],
    ['call.in-progress.error-providerfault-outbound-sip-408-request-timeout', 'no_answer'],
    ['twilio-failed-to-connect-call', 'failed'],
    ['twilio-reported-customer-misdialed', 'failed'],
    ['call.start.error-subscription-insufficient-credits', 'failed'],
    ['call.in-progress.error-providerfault-outbound-sip-403-forbidden', 'failed'],
    ['pipeline-error-openai-llm-failed', 'failed'],
    ['call.in-progress.error-vapifault-worker-died', 'failed'],
    ['phone-call-provider-closed-websocket', 'failed'],
    ['assistant-not-found', 'failed'],
    ['worker-shutdown', 'failed'],
    ['manually-canceled', 'failed'],
  ])('%s (answered) → %s', (reason, outcome) => {
    expect(outcomeOfEndedReason(reason, true).outcome).toBe(outcome);
  });

  it('gives every documented reason an outcome, errors failed with words', () => {
    expect(documentedEndedReasons.length).toBeGreaterThan(500);
    for (const reason of documentedEndedReasons) {
      const { outcome, failureReason } = outcomeOfEndedReason(reason, true);
      if (/error|fault/.test(reason) && !/sip-4(08|80)/.test(reason))
        expect([reason, outcome]).toEqual([reason, 'failed']);
      if (outcome === 'failed')
        expect(failureReason).toMatch(new RegExp(`^[A-Z].* \\(Vapi: ${reason.replace(/\./g, '\\.')}\\)\\.$`));
      else expect(failureReason).toBeUndefined();
    }
  });

  it('a reason Vapi adds later is completed when answered, failed when not', () => {
    expect(outcomeOfEndedReason('hangup', true)).toEqual({ outcome: 'completed' });
    expect(outcomeOfEndedReason('hangup', false)).toEqual({
      outcome: 'failed',
      failureReason: 'Vapi ended the call before it was answered (Vapi: hangup).',
    });
    expect(outcomeOfEndedReason('call.in-progress.error-something-new', true).outcome).toBe('failed');
  });
});

describe('server messages → reports', () => {
  it('status-update in-progress is started; other statuses are nothing', () => {
    const started = reportFromServerMessage(
      message({
        type: 'status-update',
        status: 'in-progress',
        call: { id: ENGINE_CALL_ID, startedAt: '2026-11-21T10:00:05Z' },
      }),
      RECEIVED_AT,
    );
    // Our id read from the message's assistant when the call's own copy lacks it.
    expect(started).toEqual({
      kind: 'started',
      callId: CALL_ID,
      engineCallId: ENGINE_CALL_ID,
      startedAt: new Date('2026-11-21T10:00:05Z'),
    });
    for (const status of ['queued', 'ringing', 'forwarding', 'ended', 42]) {
      expect(
        reportFromServerMessage(message({ type: 'status-update', status }), RECEIVED_AT),
      ).toBeUndefined();
    }
    const noTime = reportFromServerMessage(
      message({ type: 'status-update', status: 'in-progress' }),
      RECEIVED_AT,
    );
    expect(noTime).toMatchObject({ kind: 'started', startedAt: RECEIVED_AT });
  });

  it('end-of-call-report is ended with the documented fields', () => {
    expect(
      ended({
        endedReason: 'customer-ended-call',
        startedAt: '2026-11-21T10:00:05.000Z',
        endedAt: '2026-11-21T10:02:06.600Z',
        artifact: { transcript: 'AI: Hello Ada.\nUser: Hi.', recordingUrl: 'https://storage.vapi.ai/a.wav' },
      }),
    ).toEqual({
      kind: 'ended',
      callId: CALL_ID,
      engineCallId: ENGINE_CALL_ID,
      outcome: 'completed',
      endedReason: 'customer-ended-call',
      startedAt: new Date('2026-11-21T10:00:05.000Z'),
      endedAt: new Date('2026-11-21T10:02:06.600Z'),
      durationSeconds: 122,
      transcript: 'AI: Hello Ada.\nUser: Hi.',
      recordingUrl: 'https://storage.vapi.ai/a.wav',
      answeredBy: 'human',
    });
  });

  it('end-of-call-report: voicemail keeps its answer time; analysis, cost and the transfer are read', () => {
    const voicemail = ended({
      endedReason: 'voicemail',
      startedAt: '2026-11-21T10:00:05.000Z',
      endedAt: '2026-11-21T10:00:35.000Z',
    });
    expect(voicemail).toMatchObject({
      outcome: 'no_answer',
      endedReason: 'voicemail',
      answeredBy: 'voicemail',
      startedAt: new Date('2026-11-21T10:00:05.000Z'),
      durationSeconds: 30,
    });
    expect(
      ended({
        endedReason: 'assistant-forwarded-call',
        startedAt: '2026-11-21T10:00:05.000Z',
        endedAt: '2026-11-21T10:01:05.000Z',
        destination: { type: 'number', number: '+14155550199' },
        analysis: {
          summary: 'Asked for a human.',
          successEvaluation: 'true',
          structuredData: { budget: '1200' },
        },
        cost: 0.1234,
        durationSeconds: 60.4,
      }),
    ).toMatchObject({
      outcome: 'completed',
      answeredBy: 'human',
      transferredTo: '+14155550199',
      analysis: { summary: 'Asked for a human.', successful: 'true', data: { budget: '1200' } },
      usage: { costUsd: 0.1234, durationSeconds: 60.4 },
    });
  });

  it('not answered: no start, no duration; failed: the reason in words', () => {
    const noAnswer = ended({
      endedReason: 'customer-busy',
      startedAt: '2026-11-21T10:00:05Z',
      endedAt: '2026-11-21T10:00:35Z',
    });
    expect(noAnswer).toMatchObject({ outcome: 'no_answer', endedReason: 'customer-busy' });
    expect(noAnswer).not.toHaveProperty('startedAt');
    expect(noAnswer).not.toHaveProperty('durationSeconds');
    expect(
      ended({ endedReason: 'twilio-failed-to-connect-call', endedAt: '2026-11-21T10:00:35Z' }),
    ).toMatchObject({
      outcome: 'failed',
      failureReason: 'The call could not be connected (Vapi: twilio-failed-to-connect-call).',
    });
  });

  it('falls back to the Call and the newer recording field; ignores what is malformed', () => {
    const report = ended({
      call: {
        id: ENGINE_CALL_ID,
        assistant,
        endedReason: 'assistant-ended-call',
        startedAt: '2026-11-21T10:00:00Z',
        endedAt: '2026-11-21T10:00:30Z',
      },
      assistant: undefined,
      artifact: {
        transcript: 42,
        recordingUrl: 'javascript:alert(1)',
        recording: { mono: { combinedUrl: 'https://r.example/m.wav' } },
      },
    });
    expect(report).toMatchObject({ callId: CALL_ID, outcome: 'completed', durationSeconds: 30 });
    expect(report.recordingUrl).toBe('https://r.example/m.wav');
    expect(report).not.toHaveProperty('transcript');

    const bare = ended({
      assistant: undefined,
      call: { id: ENGINE_CALL_ID },
      endedAt: 'yesterday',
      artifact: 'x',
      timestamp: 'x',
    });
    expect(bare).toEqual({
      kind: 'ended',
      callId: undefined,
      engineCallId: ENGINE_CALL_ID,
      outcome: 'failed',
      endedReason: 'unknown',
      failureReason: 'Vapi ended the call before it was answered (Vapi: unknown).',
      endedAt: RECEIVED_AT,
    });
  });

  it('is nothing without the call id, or for another type', () => {
    expect(reportFromServerMessage(message({ call: undefined }), RECEIVED_AT)).toBeUndefined();
    expect(reportFromServerMessage(message({ call: { id: 7 } }), RECEIVED_AT)).toBeUndefined();
    expect(reportFromServerMessage(message({ call: 'x' }), RECEIVED_AT)).toBeUndefined();
    expect(reportFromServerMessage(message({ type: 'conversation-update' }), RECEIVED_AT)).toBeUndefined();
  });

  it('recognises a Vapi message body', () => {
    expect(serverMessageOf({ message: { type: 'hang', call: {} } })).toEqual({ type: 'hang', call: {} });
    for (const body of [
      undefined,
      null,
      [],
      'x',
      {},
      { message: 'x' },
      { message: { type: 3 } },
      { message: { type: '' } },
    ]) {
      expect(serverMessageOf(body)).toBeUndefined();
    }
  });
});

/** EngineReports that records what it was given. */
function recordingReports(answer: 'applied' | 'ignored' = 'applied') {
  const applied: { engine: string; report: EngineReport }[] = [];
  const reports: EngineReports = {
    async apply(engine, report) {
      applied.push({ engine, report });
      return answer;
    },
  };
  return { reports, applied };
}

const config: VapiConfig = {
  apiKey: 'unused',
  apiBase: 'http://unused',
  serverCredentialId: 'cred-unused',
  serverSecret: SECRET,
};

async function routeApp(reports: EngineReports): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  registerErrorHandling(app);
  await app.register(vapiRoutes, { reports, config });
  return app;
}

describe('POST /engines/vapi/server-messages', () => {
  const inProgress = { message: message({ type: 'status-update', status: 'in-progress' }) };
  const post = (
    app: FastifyInstance,
    headers: Record<string, string | undefined>,
    payload: unknown = inProgress,
  ) =>
    app.inject({ method: 'POST', url: '/engines/vapi/server-messages', headers, payload: payload as object });

  it('refuses a missing or wrong credential with 401 and applies nothing', async () => {
    const { reports, applied } = recordingReports();
    const app = await routeApp(reports);
    for (const headers of [
      {},
      { authorization: 'Bearer wrong-secret-0123456789' },
      { authorization: SECRET },
      { 'x-vapi-secret': 'wrong' },
      { authorization: `Basic ${SECRET}` },
    ]) {
      const response = await post(app, headers);
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({
        error: { code: 'authentication_failed', message: expect.stringContaining('VAPI_SERVER_SECRET') },
        request_id: expect.any(String),
      });
    }
    expect(applied).toEqual([]);
    await app.close();
  });

  it('accepts the bearer and the legacy X-Vapi-Secret, applying the report', async () => {
    const { reports, applied } = recordingReports();
    const app = await routeApp(reports);
    for (const headers of [{ authorization: `Bearer ${SECRET}` }, { 'x-vapi-secret': SECRET }]) {
      const response = await post(app, headers);
      expect([response.statusCode, response.json()]).toEqual([200, {}]);
    }
    expect(applied.map((a) => [a.engine, a.report.kind, a.report.callId])).toEqual([
      ['vapi', 'started', CALL_ID],
      ['vapi', 'started', CALL_ID],
    ]);
    await app.close();
  });

  it('acknowledges other types and ignored reports; refuses a body that is no Vapi message', async () => {
    const { reports, applied } = recordingReports('ignored');
    const app = await routeApp(reports);
    const auth = { authorization: `Bearer ${SECRET}` };
    expect((await post(app, auth, { message: { type: 'speech-update', call: { id: 'x' } } })).json()).toEqual(
      {},
    );
    expect(applied).toHaveLength(0);
    expect((await post(app, auth)).statusCode).toBe(200);
    expect(applied).toHaveLength(1);
    for (const payload of [{}, { message: 'x' }, { message: { status: 'ended' } }, [1]]) {
      const response = await post(app, auth, payload);
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('invalid_request');
    }
    const text = await app.inject({
      method: 'POST',
      url: '/engines/vapi/server-messages',
      headers: { ...auth, 'content-type': 'text/csv' },
      payload: 'a,b',
    });
    expect(text.statusCode).toBe(415);
    expect(applied).toHaveLength(1);
    await app.close();
  });
});

describe('a call played by Vapi', () => {
  let app: FastifyInstance;
  let baseUrl: string;
  const recorded = recordingReports();
  beforeAll(async () => {
    app = await routeApp(recorded.reports);
    baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app.close());

  it('reports start and end, with our call id, to the route', async () => {
    const vapi = await startFakeVapi({ phoneNumbers: ['+14155550100'], serverSecret: SECRET });
    const adapter = createVapiTelephony({
      config: { ...config, apiKey: vapi.apiKey, apiBase: vapi.url },
      publicBaseUrl: baseUrl,
    });
    const placed = await adapter.dial({
      callId: CALL_ID,
      attempt: 1,
      tenantId: 'ten_9Qm2',
      agentId: 'agt_Zx81',
      agentVersion: 1,
      from: '+14155550100',
      to: '+14155550123',
      name: '',
      email: null,
      prompt: 'Be brief.',
      welcomeMessage: 'Hello!',
      context: {},
    });
    const engineCallId = (placed as { engineCallId: string }).engineCallId;

    // A wrong credential first: refused, nothing applied.
    expect(await vapi.playCall(engineCallId, { secret: 'not-the-secret-0000' })).toEqual([
      401, 401, 401, 401,
    ]);
    expect(recorded.applied).toHaveLength(0);

    const statuses = await vapi.playCall(engineCallId, {
      startedAt: new Date('2026-11-21T10:00:00Z'),
      endedAt: new Date('2026-11-21T10:01:01Z'),
      transcript: 'AI: Hello!',
      recordingUrl: 'https://storage.vapi.ai/x.wav',
    });
    expect(statuses).toEqual([200, 200, 200, 200]);
    expect(recorded.applied.map((a) => a.report)).toEqual([
      { kind: 'started', callId: CALL_ID, engineCallId, startedAt: new Date('2026-11-21T10:00:00Z') },
      {
        kind: 'ended',
        callId: CALL_ID,
        engineCallId,
        outcome: 'completed',
        endedReason: 'customer-ended-call',
        startedAt: new Date('2026-11-21T10:00:00Z'),
        endedAt: new Date('2026-11-21T10:01:01Z'),
        durationSeconds: 61,
        transcript: 'AI: Hello!',
        recordingUrl: 'https://storage.vapi.ai/x.wav',
        answeredBy: 'human',
      },
    ]);
    await vapi.close();
  });
});
