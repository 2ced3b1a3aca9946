/**
 * The fake Vapi's phone numbers: `GET /phone-number`, `PATCH /phone-number/{id}` (the body checked
 * against the published UpdateTwilioPhoneNumberDTO, a null among `assistantId`, `squadId`,
 * `workflowId` taken as not set, as Vapi's validation does), and inbound calls: `ring` posts the
 * `assistant-request` server message Vapi sends to the number's server URL when the number has no
 * assistant of its own, checks the answer against ServerMessageResponseAssistantRequest and, when
 * it names an assistant, creates the inbound Call that `playCall` then plays.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import { PHONE_NUMBER_LIMIT, schemaValidator } from './openapi.js';
import type { FakeVapiCall } from './types.js';

export interface InboundRing {
  /** The HTTP status of our route's answer. */
  status: number;
  /** Our route's answer (`{ assistant }` or `{ error }`). */
  answer: Record<string, any>;
  /** Why the answer failed ServerMessageResponseAssistantRequest, when it did. */
  schemaErrors: string[];
  /** The inbound Call Vapi created (also when the answer was an error: it ends at once). */
  engineCallId: string;
}

type Reply = { status: number; body: unknown };

const vapiError = (status: number, message: string | string[]): Reply => ({
  status,
  body: { message, error: http.STATUS_CODES[status] ?? 'Error', statusCode: status },
});

export function createFakeVapiNumbers(deps: {
  orgId: string;
  serverSecret?: string;
  createdAtNow: () => string;
  calls: Map<string, FakeVapiCall>;
}) {
  const validateUpdate = schemaValidator('UpdateTwilioPhoneNumberDTO');
  const validateAnswer = schemaValidator('ServerMessageResponseAssistantRequest');
  let numbers: Record<string, any>[] = [];

  function set(list: string[]) {
    const now = new Date().toISOString();
    numbers = list.map((number) => ({
      id: crypto.randomUUID(),
      orgId: deps.orgId,
      provider: 'twilio',
      number,
      twilioAccountSid: 'AC00000000000000000000000000000000',
      createdAt: now,
      updatedAt: now,
    }));
  }

  function list(url: URL): Reply {
    const limit = url.searchParams.get('limit');
    if (limit !== null) {
      const value = Number(limit);
      if (
        !Number.isFinite(value) ||
        value < PHONE_NUMBER_LIMIT.minimum ||
        value > PHONE_NUMBER_LIMIT.maximum
      ) {
        return vapiError(400, [`limit must not be greater than ${PHONE_NUMBER_LIMIT.maximum}`]);
      }
    }
    return { status: 200, body: numbers.slice(0, limit === null ? 100 : Number(limit)) };
  }

  /** PATCH /phone-number/{id}; `schemaErrors` receives the body's problems. */
  function update(id: string, body: unknown, schemaErrors: string[]): Reply {
    const input = (body ?? {}) as Record<string, unknown>;
    const cleared = ['assistantId', 'squadId', 'workflowId'].filter((field) => input[field] === null);
    const checked = Object.fromEntries(Object.entries(input).filter(([field]) => !cleared.includes(field)));
    schemaErrors.push(...validateUpdate(checked));
    if (schemaErrors.length > 0) return vapiError(400, schemaErrors);
    const number = numbers.find((candidate) => candidate.id === id);
    if (!number) return vapiError(404, 'Not Found');
    for (const field of cleared) delete number[field];
    Object.assign(number, checked, { updatedAt: new Date().toISOString() });
    return { status: 200, body: number };
  }

  /** A caller rings one of the numbers: Vapi asks the number's server URL for an assistant. */
  async function ring(to: string, from: string): Promise<InboundRing> {
    const number = numbers.find((candidate) => candidate.number === to);
    if (!number) throw new Error(`fake Vapi: no number ${to}`);
    if (number.assistantId || typeof number.server?.url !== 'string') {
      throw new Error(`fake Vapi: ${to} answers with its own assistant; no assistant-request is sent`);
    }
    const now = deps.createdAtNow();
    const call: Record<string, any> = {
      id: crypto.randomUUID(),
      orgId: deps.orgId,
      type: 'inboundPhoneCall',
      status: 'ringing',
      createdAt: now,
      updatedAt: now,
      phoneNumberId: number.id,
      customer: { number: from },
    };
    // The message's phoneNumber is the number as created (Create…PhoneNumberDTO): it has no id.
    const { id: _id, orgId: _org, createdAt: _c, updatedAt: _u, ...phoneNumber } = number;
    const token = deps.serverSecret;
    const response = await fetch(number.server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({
        message: {
          type: 'assistant-request',
          timestamp: Date.now(),
          call,
          phoneNumber,
          customer: call.customer,
        },
      }),
    });
    const text = await response.text();
    const answer = (text ? JSON.parse(text) : {}) as Record<string, any>;
    const schemaErrors = response.ok ? validateAnswer(answer) : [];
    if (response.ok && answer.assistant && !answer.error && schemaErrors.length === 0) {
      call.assistant = answer.assistant;
    } else {
      Object.assign(call, { status: 'ended', endedReason: 'assistant-request-returned-error', endedAt: now });
    }
    deps.calls.set(call.id, { request: {}, call });
    return { status: response.status, answer, schemaErrors, engineCallId: call.id };
  }

  return {
    set,
    list,
    update,
    ring,
    has: (id: unknown) => numbers.some((candidate) => candidate.id === id),
    byNumber: (to: string) => numbers.find((candidate) => candidate.number === to),
  };
}
