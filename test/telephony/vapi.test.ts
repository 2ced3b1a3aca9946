/**
 * The vapi adapter against a local fake of Vapi's API (test/support/fake-vapi.ts): what it sends
 * (checked against Vapi's published CreateCallDTO), how it finds the agent's Vapi number, how it
 * reports failures, and how Vapi's server messages become EngineReports through its route.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { VapiConfig } from '../../src/core/config/config.js';
import { type DialRequest, TelephonyError } from '../../src/telephony/port.js';
import { createVapiTelephony, PHONE_NUMBER_NOT_IMPORTED } from '../../src/telephony/vapi/adapter.js';
import { createVapiClient, type VapiCreateCallBody } from '../../src/telephony/vapi/client.js';
import { type FakeVapi, startFakeVapi } from '../support/fake-vapi.js';

const SECRET = 'vapi-server-secret-0123456789';
const AGENT_NUMBER = '+14155550100';
const VONAGE_NUMBER = '+442071838750';
const NOT_IMPORTED = '+14155550199';

let vapi: FakeVapi;
beforeAll(async () => {
  // Vonage keeps its numbers without the +.
  vapi = await startFakeVapi({ phoneNumbers: [AGENT_NUMBER, VONAGE_NUMBER.slice(1)], serverSecret: SECRET });
});
afterAll(() => vapi.close());
beforeEach(() => {
  vapi.requests.length = 0;
  vapi.setPhoneNumbers([AGENT_NUMBER, VONAGE_NUMBER.slice(1)]);
});

const configFor = (overrides: Partial<VapiConfig> = {}): VapiConfig => ({
  apiKey: vapi.apiKey,
  apiBase: vapi.url,
  serverCredentialId: 'cred-7a1f',
  serverSecret: SECRET,
  ...overrides,
});

const dialRequest = (overrides: Partial<DialRequest> = {}): DialRequest => ({
  callId: 'call_4bX9kQ2mZr7TtY1pW3sVn8Ld',
  attempt: 1,
  tenantId: 'ten_9Qm2',
  agentId: 'agt_Zx81',
  agentVersion: 3,
  from: AGENT_NUMBER,
  to: '+14155550123',
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  prompt: 'You are Ada, calling about solar panels.',
  welcomeMessage: 'Hello Ada, this is Sunny Solar.',
  context: { phone: '+14155550123', name: 'Ada Lovelace', product: 'solar' },
  ...overrides,
});

const requestsTo = (method: string, path: string | RegExp) =>
  vapi.requests.filter(
    (r) => r.method === method && (typeof path === 'string' ? r.path === path : path.test(r.path)),
  );

async function dialError(promise: Promise<unknown>): Promise<TelephonyError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TelephonyError);
  return error as TelephonyError;
}

describe('dial', () => {
  it('creates the call with a transient assistant, as CreateCallDTO documents it', async () => {
    const adapter = createVapiTelephony({ config: configFor(), publicBaseUrl: 'https://vp.example.com/' });
    const result = await adapter.dial(dialRequest());

    const [create] = requestsTo('POST', '/call');
    expect(create.status).toBe(201);
    expect(create.schemaErrors).toEqual([]);
    expect(create.authorization).toBe(`Bearer ${vapi.apiKey}`);
    const numberId = vapi.calls.get((result as { engineCallId: string }).engineCallId)?.request.phoneNumberId;
    expect(result).toEqual({ outcome: 'placed', engineCallId: expect.any(String) });
    expect(create.body).toEqual({
      name: 'call_4bX9kQ2mZr7TtY1pW3sVn8Ld',
      phoneNumberId: numberId,
      customer: { number: '+14155550123', name: 'Ada Lovelace' },
      assistant: {
        name: 'agt_Zx81 v3',
        firstMessage: 'Hello Ada, this is Sunny Solar.',
        model: {
          provider: 'openai',
          model: 'gpt-4o',
          messages: [{ role: 'system', content: 'You are Ada, calling about solar panels.' }],
        },
        serverMessages: ['status-update', 'end-of-call-report'],
        metadata: {
          voiceplane_call_id: 'call_4bX9kQ2mZr7TtY1pW3sVn8Ld',
          voiceplane_tenant_id: 'ten_9Qm2',
          voiceplane_attempt: '1',
        },
        server: { url: 'https://vp.example.com/engines/vapi/server-messages', credentialId: 'cred-7a1f' },
      },
    });
    expect(numberId).toBe(
      (await createVapiClient({ config: configFor() }).listPhoneNumbers()).find(
        (n) => n.number === AGENT_NUMBER,
      )?.id,
    );
  });

  it('sends no customer name or first message when the call has none', async () => {
    const adapter = createVapiTelephony({ config: configFor({}), publicBaseUrl: 'https://vp.example.com' });
    await adapter.dial(dialRequest({ name: '  ', welcomeMessage: '' }));
    const body = requestsTo('POST', '/call')[0].body as VapiCreateCallBody;
    expect(requestsTo('POST', '/call')[0].schemaErrors).toEqual([]);
    expect(body.assistant.server).toEqual({
      url: 'https://vp.example.com/engines/vapi/server-messages',
      credentialId: 'cred-7a1f',
    });
    expect(body.customer).toEqual({ number: '+14155550123' });
    expect(body.assistant).not.toHaveProperty('firstMessage');
  });

  it('shortens a long callee name to the 40 characters Vapi allows', async () => {
    const adapter = createVapiTelephony({ config: configFor(), publicBaseUrl: 'https://vp.example.com' });
    await adapter.dial(dialRequest({ name: `${'🙂'.repeat(30)}${'x'.repeat(30)}` }));
    const [create] = requestsTo('POST', '/call');
    expect(create.schemaErrors).toEqual([]);
    expect((create.body as VapiCreateCallBody).customer.name).toBe(`${'🙂'.repeat(30)}${'x'.repeat(10)}`);
  });

  it('refuses a body outside the published schema (the fake checks it)', async () => {
    const client = createVapiClient({ config: configFor() });
    const error = await dialError(
      client.createCall({ metadata: { voiceplane_call_id: 'x' }, customer: { number: 12 } } as never),
    );
    expect(error.transient).toBe(false);
    expect(error.message).toMatch(/400.*metadata/);
    expect(requestsTo('POST', '/call')[0].schemaErrors).toEqual(
      expect.arrayContaining([expect.stringMatching(/additional properties: metadata/)]),
    );
  });

  it('reads the phone numbers once, then again after five minutes', async () => {
    const clock = new ManualClock('2026-11-21T10:00:00Z');
    const adapter = createVapiTelephony({
      config: configFor(),
      publicBaseUrl: 'https://vp.example.com',
      clock,
    });
    await Promise.all([adapter.dial(dialRequest()), adapter.dial(dialRequest())]);
    await adapter.dial(dialRequest({ from: VONAGE_NUMBER }));
    const reads = requestsTo('GET', '/phone-number');
    expect(reads).toHaveLength(1);
    expect(reads[0].query.get('limit')).toBe('1000');
    expect(reads[0].status).toBe(200);

    clock.advance(5 * 60_000);
    await adapter.dial(dialRequest());
    expect(requestsTo('GET', '/phone-number')).toHaveLength(2);
    expect(requestsTo('POST', '/call').map((r) => r.status)).toEqual([201, 201, 201, 201]);
  });

  it('fails a number not imported into Vapi without creating a call', async () => {
    const clock = new ManualClock('2026-11-21T10:00:00Z');
    const adapter = createVapiTelephony({
      config: configFor(),
      publicBaseUrl: 'https://vp.example.com',
      clock,
    });
    expect(await adapter.dial(dialRequest({ from: NOT_IMPORTED }))).toEqual({
      outcome: 'failed',
      reason: `The agent's number ${NOT_IMPORTED} is not imported into Vapi.`,
      endedReason: PHONE_NUMBER_NOT_IMPORTED,
    });
    expect(requestsTo('POST', '/call')).toHaveLength(0);
  });

  it('reads the numbers again on a miss, so a number imported since is found', async () => {
    const clock = new ManualClock('2026-11-21T10:00:00Z');
    const adapter = createVapiTelephony({
      config: configFor(),
      publicBaseUrl: 'https://vp.example.com',
      clock,
    });
    await adapter.dial(dialRequest());
    vapi.setPhoneNumbers([AGENT_NUMBER, NOT_IMPORTED]);
    // A miss right after a read concludes at once…
    expect((await adapter.dial(dialRequest({ from: NOT_IMPORTED }))).outcome).toBe('failed');
    expect(requestsTo('GET', '/phone-number')).toHaveLength(1);
    // …a later one reads once more before concluding.
    clock.advance(30_000);
    expect((await adapter.dial(dialRequest({ from: NOT_IMPORTED }))).outcome).toBe('placed');
    expect(requestsTo('GET', '/phone-number')).toHaveLength(2);
  });

  it('reads the numbers again after Vapi refused a call for good', async () => {
    const clock = new ManualClock('2026-11-21T10:00:00Z');
    const adapter = createVapiTelephony({
      config: configFor(),
      publicBaseUrl: 'https://vp.example.com',
      clock,
    });
    await adapter.dial(dialRequest());
    vapi.setPhoneNumbers([AGENT_NUMBER]); // re-imported: a new id
    const error = await dialError(adapter.dial(dialRequest()));
    expect(error.transient).toBe(false);
    expect(error.message).toContain("Couldn't Get Phone Number");
    expect((await adapter.dial(dialRequest())).outcome).toBe('placed');
    expect(requestsTo('GET', '/phone-number')).toHaveLength(2);
  });
});

describe('errors', () => {
  const adapter = () => createVapiTelephony({ config: configFor(), publicBaseUrl: 'https://vp.example.com' });

  it.each([
    [503, true, false],
    [429, true, false],
    [408, true, false],
    [500, true, true],
    [502, true, true],
    [400, false, false],
    [404, false, false],
  ])('a %i from POST /call: transient %s, maybe placed %s', async (status, transient, maybePlaced) => {
    vapi.fail({
      method: 'POST',
      path: /^\/call$/,
      status,
      message: 'assistant.model.model must be one of …',
    });
    const error = await dialError(adapter().dial(dialRequest()));
    expect(error.transient).toBe(transient);
    expect(error.maybePlaced).toBe(maybePlaced);
    expect(error.message).toContain(`answered ${status}: assistant.model.model must be one of`);
    expect(error.message).not.toContain(vapi.apiKey);
  });

  it('a cut connection is transient and may have placed the call', async () => {
    vapi.fail({ method: 'POST', path: /^\/call$/, mode: 'drop' });
    const error = await dialError(adapter().dial(dialRequest()));
    expect([error.transient, error.maybePlaced]).toEqual([true, true]);
  });

  it('a refused connection is transient and placed nothing', async () => {
    const closed = await startFakeVapi();
    await closed.close();
    const client = createVapiClient({ config: { apiKey: 'k', apiBase: closed.url } });
    const error = await dialError(client.createCall({} as VapiCreateCallBody));
    expect([error.transient, error.maybePlaced]).toEqual([true, false]);
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('a timeout is transient and may have placed the call', async () => {
    vapi.fail({ method: 'POST', path: /^\/call$/, mode: 'hang' });
    const client = createVapiClient({ config: configFor(), timeoutMs: 200 });
    const error = await dialError(client.createCall({} as VapiCreateCallBody));
    expect([error.transient, error.maybePlaced]).toEqual([true, true]);
    expect(error.message).toContain('no answer within 0.2 s');
  });

  it('a failing phone-number list is transient; a wrong API key is permanent and never shown', async () => {
    vapi.fail({ method: 'GET', path: /^\/phone-number$/, status: 503 });
    expect((await dialError(adapter().dial(dialRequest()))).transient).toBe(true);
    expect(requestsTo('POST', '/call')).toHaveLength(0);

    const wrongKey = createVapiTelephony({
      config: configFor({ apiKey: 'not-the-key-5f2e' }),
      publicBaseUrl: 'https://vp.example.com',
    });
    const error = await dialError(wrongKey.dial(dialRequest()));
    expect(error.transient).toBe(false);
    expect(error.message).toBe('Vapi GET /phone-number answered 401: Unauthorized.');
  });

  it('progress is not used for Vapi calls', async () => {
    expect((await adapter().progress('call_x', 'ten_x')).state).toBe('failed');
  });
});

describe('lookup', () => {
  it('answers nothing while queued or ringing, started in progress, ended at the end', async () => {
    const adapter = createVapiTelephony({ config: configFor(), publicBaseUrl: 'https://vp.example.com' });
    const placed = await adapter.dial(dialRequest());
    const engineCallId = (placed as { engineCallId: string }).engineCallId;
    const call = vapi.calls.get(engineCallId)!.call;
    const callId = 'call_4bX9kQ2mZr7TtY1pW3sVn8Ld';

    expect(await adapter.lookup!(engineCallId, callId)).toBeUndefined();
    Object.assign(call, { status: 'ringing' });
    expect(await adapter.lookup!(engineCallId, callId)).toBeUndefined();
    Object.assign(call, { status: 'in-progress', startedAt: '2026-11-21T10:00:05.000Z' });
    expect(await adapter.lookup!(engineCallId, callId)).toEqual({
      kind: 'started',
      callId,
      engineCallId,
      startedAt: new Date('2026-11-21T10:00:05.000Z'),
    });
    Object.assign(call, {
      status: 'ended',
      endedReason: 'assistant-ended-call',
      endedAt: '2026-11-21T10:01:15.400Z',
      artifact: { transcript: 'AI: Hello Ada.', recordingUrl: 'https://storage.vapi.ai/rec.wav' },
    });
    // The outcome's details (who answered, the analysis) are messages.ts's own tests'.
    expect(await adapter.lookup!(engineCallId, callId)).toMatchObject({
      kind: 'ended',
      callId,
      engineCallId,
      outcome: 'completed',
      endedReason: 'assistant-ended-call',
      startedAt: new Date('2026-11-21T10:00:05.000Z'),
      endedAt: new Date('2026-11-21T10:01:15.400Z'),
      durationSeconds: 70,
      transcript: 'AI: Hello Ada.',
      recordingUrl: 'https://storage.vapi.ai/rec.wav',
    });
    expect(requestsTo('GET', `/call/${engineCallId}`).every((r) => r.status === 200)).toBe(true);
  });

  it('an unknown call is a permanent error', async () => {
    const adapter = createVapiTelephony({ config: configFor(), publicBaseUrl: 'https://vp.example.com' });
    expect((await dialError(adapter.lookup!('no-such-call', 'call_x'))).transient).toBe(false);
  });
});

describe('findDial: the call of an attempt whose answer was lost', () => {
  const adapter = () => createVapiTelephony({ config: configFor(), publicBaseUrl: 'https://vp.example.com' });

  it('finds the call Vapi created for the attempt in its list of the number’s calls', async () => {
    const telephony = adapter();
    const sentAt = new Date();
    vapi.fail({ method: 'POST', path: /^\/call$/, mode: 'drop' });
    await dialError(telephony.dial(dialRequest({ callId: 'call_other_first' })));
    const first = await telephony.dial(dialRequest({ callId: 'call_lost_1' }));
    const second = await telephony.dial(dialRequest({ callId: 'call_lost_1', attempt: 2 }));
    await telephony.dial(dialRequest({ callId: 'call_lost_1', from: VONAGE_NUMBER }));

    expect(await telephony.findDial(dialRequest({ callId: 'call_lost_1' }), sentAt)).toEqual(first);
    expect(await telephony.findDial(dialRequest({ callId: 'call_lost_1', attempt: 2 }), sentAt)).toEqual(
      second,
    );
    expect(
      await telephony.findDial(dialRequest({ callId: 'call_lost_1', attempt: 3 }), sentAt),
    ).toBeUndefined();
    expect(await telephony.findDial(dialRequest({ callId: 'call_never_made' }), sentAt)).toBeUndefined();

    const lists = requestsTo('GET', '/call');
    expect(lists.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const numberId = vapi.calls.get((first as { engineCallId: string }).engineCallId)?.request.phoneNumberId;
    expect(Object.fromEntries(lists[0].query)).toEqual({
      phoneNumberId: numberId,
      createdAtGe: new Date(sentAt.getTime() - 5 * 60_000).toISOString(),
      limit: '1000',
    });
  });

  it('finds a call created before its answer was cut, and nothing for a request refused 500', async () => {
    const telephony = adapter();
    const sentAt = new Date();
    vapi.fail({ method: 'POST', path: /^\/call$/, status: 500, message: 'Internal server error' });
    const refused = await dialError(telephony.dial(dialRequest({ callId: 'call_refused_500' })));
    expect(refused.maybePlaced).toBe(true);
    expect(await telephony.findDial(dialRequest({ callId: 'call_refused_500' }), sentAt)).toBeUndefined();
  });

  it('reads past a full page of the number’s calls', async () => {
    const telephony = adapter();
    const sentAt = new Date();
    const ours = await telephony.dial(dialRequest({ callId: 'call_behind_a_page' }));
    // In batches: a thousand requests at once can outlast the client's 10 s on a busy machine.
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          telephony.dial(dialRequest({ callId: `call_busy_${batch * 100 + i}` })),
        ),
      );
    }
    expect(await telephony.findDial(dialRequest({ callId: 'call_behind_a_page' }), sentAt)).toEqual(ours);
    const lists = requestsTo('GET', '/call');
    expect(lists).toHaveLength(2);
    expect(lists[1].query.get('createdAtLe')).toBeTruthy();
  });

  it('refuses a list parameter Vapi does not have, as Vapi’s validation does', async () => {
    const response = await fetch(`${vapi.url}/call?metadata=x&limit=1001`, {
      headers: { authorization: `Bearer ${vapi.apiKey}` },
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string[] }).message).toEqual([
      'property metadata should not exist',
      'limit must be <= 1000',
    ]);
  });
});
