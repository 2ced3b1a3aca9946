/**
 * A local server speaking Vapi's documented API for the operations the vapi adapter uses, so the
 * adapter's real client runs in tests (point VAPI_API_BASE at `url`):
 * - `GET /phone-number` (the `limit` parameter checked as documented: 0..1000),
 * - `POST /call`: the body is validated against CreateCallDTO from Vapi's published OpenAPI
 *   document (./engines/vapi-openapi.json, an excerpt; see its `x-vendored` note) and refused 400
 *   like Vapi (`{ message: [...], error: 'Bad Request', statusCode: 400 }`) when it fails, or when
 *   its phoneNumberId is not one of the fake's numbers; otherwise 201 with a Call (`status: queued`),
 * - `GET /call/{id}`: the Call as it stands (404 when unknown).
 * Every request needs `Authorization: Bearer <apiKey>` (401 otherwise) and is recorded.
 *
 * `fail` makes the next matching requests answer an error status, cut the connection, or hang.
 * `playCall` plays a created call the way Vapi reports it: status-updates (ringing, in-progress
 * when answered, ended) then the end-of-call-report, each POSTed to the call's
 * `assistant.server.url` with `Authorization: Bearer <serverSecret>`; the Call seen by
 * `GET /call/{id}` follows along.
 *
 *   const vapi = await startFakeVapi({ phoneNumbers: ['+14155550100'], serverSecret });
 *   … dial through createVapiTelephony({ config: { apiBase: vapi.url, apiKey: vapi.apiKey, … } })
 *   await vapi.playCall(engineCallId, { endedReason: 'customer-ended-call', transcript: '…' });
 */
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';

interface OpenApiExcerpt {
  paths: Record<string, Record<string, { parameters?: { name: string; schema: Record<string, number> }[] }>>;
}

/** Vapi's published OpenAPI document, the part the adapter uses (see its `x-vendored` note). */
export const VAPI_OPENAPI_EXCERPT = JSON.parse(
  readFileSync(new URL('./engines/vapi-openapi.json', import.meta.url), 'utf8'),
) as OpenApiExcerpt & Record<string, unknown>;

export const FAKE_VAPI_API_KEY = 'vapi-test-private-key';

export interface FakeVapiOptions {
  apiKey?: string;
  /** The numbers imported into the fake Vapi organization (E.164, or Vonage-style digits). */
  phoneNumbers?: string[];
  /** The token of the Custom Credential: what playCall sends as `Authorization: Bearer …`. */
  serverSecret?: string;
}

export interface RecordedVapiRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
  body: unknown;
  status: number;
  /** Why the body failed CreateCallDTO (Ajv's messages), when it did. */
  schemaErrors: string[];
}

export interface VapiFault {
  method: string;
  path: RegExp;
  /** status: answer `status` with Vapi's error shape; drop: cut the connection; hang: never answer. */
  mode?: 'status' | 'drop' | 'hang';
  status?: number;
  message?: string;
  /** How many matching requests it affects (default 1). */
  times?: number;
}

export interface PlayCallScript {
  /** Whether the callee picks up (status-update in-progress); default true. */
  answered?: boolean;
  /** Default customer-ended-call when answered, customer-did-not-answer otherwise. */
  endedReason?: string;
  startedAt?: Date;
  endedAt?: Date;
  transcript?: string;
  recordingUrl?: string;
  /** Overrides the bearer token the messages carry (default: the fake's serverSecret). */
  secret?: string;
}

export interface FakeVapiCall {
  /** The CreateCallDTO the call was created with. */
  request: Record<string, any>;
  /** The Call object GET /call/{id} answers. */
  call: Record<string, any>;
}

export interface FakeVapi {
  url: string;
  apiKey: string;
  requests: RecordedVapiRequest[];
  calls: Map<string, FakeVapiCall>;
  /** Replaces the imported numbers (an operator importing or removing one). */
  setPhoneNumbers(numbers: string[]): void;
  fail(fault: VapiFault): void;
  /** POSTs one server message about the call to its server.url; answers the HTTP status. */
  sendServerMessage(engineCallId: string, message: Record<string, unknown>, secret?: string): Promise<number>;
  /** Plays the call to its end; answers the status of each message posted, in order. */
  playCall(engineCallId: string, script?: PlayCallScript): Promise<number[]>;
  close(): Promise<void>;
}

const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

function createCallValidator() {
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addSchema(VAPI_OPENAPI_EXCERPT, 'vapi');
  const validate = ajv.getSchema('vapi#/components/schemas/CreateCallDTO');
  if (!validate) throw new Error('CreateCallDTO missing from the vendored Vapi OpenAPI excerpt');
  const describe = (error: ErrorObject) =>
    `${error.instancePath || '(body)'} ${error.message ?? 'is invalid'}${
      error.keyword === 'additionalProperties' ? `: ${String(error.params.additionalProperty)}` : ''
    }`;
  return (body: unknown): string[] => (validate(body) ? [] : (validate.errors ?? []).map(describe));
}

const PHONE_NUMBER_LIMIT = VAPI_OPENAPI_EXCERPT.paths['/phone-number'].get.parameters!.find(
  (parameter) => parameter.name === 'limit',
)!.schema;

export async function startFakeVapi(options: FakeVapiOptions = {}): Promise<FakeVapi> {
  const apiKey = options.apiKey ?? FAKE_VAPI_API_KEY;
  const orgId = crypto.randomUUID();
  const validateCreateCall = createCallValidator();
  const requests: RecordedVapiRequest[] = [];
  const calls = new Map<string, FakeVapiCall>();
  const faults: (VapiFault & { left: number })[] = [];
  let phoneNumbers: Record<string, unknown>[] = [];

  const setPhoneNumbers = (numbers: string[]) => {
    const now = new Date().toISOString();
    phoneNumbers = numbers.map((number) => ({
      id: crypto.randomUUID(),
      orgId,
      provider: 'twilio',
      number,
      twilioAccountSid: 'AC00000000000000000000000000000000',
      createdAt: now,
      updatedAt: now,
    }));
  };
  setPhoneNumbers(options.phoneNumbers ?? []);

  const vapiError = (status: number, message: string | string[]) => ({
    status,
    body: { message, error: http.STATUS_CODES[status] ?? 'Error', statusCode: status },
  });

  function answer(method: string, url: URL, body: unknown, record: RecordedVapiRequest) {
    if (method === 'GET' && url.pathname === '/phone-number') {
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
      return { status: 200, body: phoneNumbers.slice(0, limit === null ? 100 : Number(limit)) };
    }
    if (method === 'POST' && url.pathname === '/call') {
      record.schemaErrors = validateCreateCall(body);
      if (record.schemaErrors.length > 0) return vapiError(400, record.schemaErrors);
      const dto = body as Record<string, any>;
      if (!phoneNumbers.some((n) => n.id === dto.phoneNumberId))
        return vapiError(400, "Couldn't Get Phone Number.");
      const now = new Date().toISOString();
      const call = {
        id: crypto.randomUUID(),
        orgId,
        type: 'outboundPhoneCall',
        status: 'queued',
        createdAt: now,
        updatedAt: now,
        name: dto.name,
        phoneNumberId: dto.phoneNumberId,
        customer: dto.customer,
        assistant: dto.assistant,
      };
      calls.set(call.id, { request: dto, call });
      return { status: 201, body: call };
    }
    const match = /^\/call\/([^/]+)$/.exec(url.pathname);
    if (method === 'GET' && match) {
      const found = calls.get(decodeURIComponent(match[1]));
      return found ? { status: 200, body: found.call } : vapiError(404, 'Not Found');
    }
    return vapiError(404, `Cannot ${method} ${url.pathname}`);
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const method = req.method ?? 'GET';
      const url = new URL(req.url ?? '/', 'http://fake-vapi');
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      const record: RecordedVapiRequest = {
        method,
        path: url.pathname,
        query: url.searchParams,
        authorization: req.headers.authorization,
        body,
        status: 0,
        schemaErrors: [],
      };
      requests.push(record);

      const fault = faults.find((f) => f.left > 0 && f.method === method && f.path.test(url.pathname));
      if (fault) {
        fault.left--;
        if (fault.mode === 'drop') return req.socket.destroy();
        if (fault.mode === 'hang') return;
      }
      const result =
        req.headers.authorization !== `Bearer ${apiKey}`
          ? vapiError(401, 'Unauthorized')
          : fault
            ? vapiError(fault.status ?? 503, fault.message ?? 'Service Unavailable')
            : answer(method, url, body, record);
      record.status = result.status;
      res.writeHead(result.status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(result.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const found = (engineCallId: string) => {
    const entry = calls.get(engineCallId);
    if (!entry) throw new Error(`fake Vapi: no call ${engineCallId}`);
    return entry;
  };

  async function sendServerMessage(engineCallId: string, message: Record<string, unknown>, secret?: string) {
    const { call } = found(engineCallId);
    const token = secret ?? options.serverSecret;
    const response = await fetch(call.assistant.server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({
        message: {
          timestamp: Date.now(),
          call,
          assistant: call.assistant,
          customer: call.customer,
          ...message,
        },
      }),
    });
    await response.arrayBuffer();
    return response.status;
  }

  async function playCall(engineCallId: string, script: PlayCallScript = {}): Promise<number[]> {
    const { call } = found(engineCallId);
    const answered = script.answered ?? true;
    const endedAt = script.endedAt ?? new Date();
    const startedAt = script.startedAt ?? new Date(endedAt.getTime() - 42_000);
    const endedReason = script.endedReason ?? (answered ? 'customer-ended-call' : 'customer-did-not-answer');
    const statuses: number[] = [];
    const post = async (message: Record<string, unknown>) => {
      call.updatedAt = new Date().toISOString();
      statuses.push(await sendServerMessage(engineCallId, message, script.secret));
    };

    call.status = 'ringing';
    await post({ type: 'status-update', status: 'ringing' });
    if (answered) {
      Object.assign(call, { status: 'in-progress', startedAt: startedAt.toISOString() });
      await post({ type: 'status-update', status: 'in-progress' });
    }
    const artifact = {
      messages: [],
      ...(script.transcript ? { transcript: script.transcript } : {}),
      ...(script.recordingUrl ? { recordingUrl: script.recordingUrl } : {}),
    };
    Object.assign(call, { status: 'ended', endedReason, endedAt: endedAt.toISOString(), artifact });
    await post({ type: 'status-update', status: 'ended', endedReason });
    await post({
      type: 'end-of-call-report',
      endedReason,
      ...(answered ? { startedAt: startedAt.toISOString() } : {}),
      endedAt: endedAt.toISOString(),
      artifact,
      analysis: {},
    });
    return statuses;
  }

  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    requests,
    calls,
    setPhoneNumbers,
    fail: (fault) => faults.push({ ...fault, left: fault.times ?? 1 }),
    sendServerMessage,
    playCall,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
