/**
 * A local server speaking Vapi's documented API for the operations the vapi adapter uses, so the
 * adapter's real client runs in tests (point VAPI_API_BASE at `url`):
 * - `GET /phone-number` (the `limit` parameter checked as documented: 0..1000),
 * - `POST /call`: the body is validated against CreateCallDTO from Vapi's published OpenAPI
 *   document (./engines/vapi-openapi.json, an excerpt; see its `x-vendored` note) and refused 400
 *   like Vapi (`{ message: [...], error: 'Bad Request', statusCode: 400 }`) when it fails, or when
 *   its phoneNumberId is not one of the fake's numbers; otherwise 201 with a Call (`status: queued`),
 * - `GET /call/{id}`: the Call as it stands (404 when unknown),
 * - `GET /call`: the list, newest first, with the query parameters of the published operation
 *   (CallController_findAll: `id`, `assistantId`, `phoneNumberId`, `limit` 0..1000 (default 100),
 *   `createdAt`/`updatedAt` with `Gt`, `Lt`, `Ge`, `Le`); a parameter the operation does not have,
 *   or a value outside its schema, is refused 400 like Vapi's validation.
 * Every request needs `Authorization: Bearer <apiKey>` (401 otherwise) and is recorded.
 *
 * `answerDelayMs` makes `POST /call` create the call at once and answer later (a client that dies
 * meanwhile never learns the id). `autoPlay` plays each created call by itself after a while,
 * posting each message until the service takes it (2xx), so a call survives the service being down.
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
import { type VapiToolCallOutcome, vapiCallsTool } from './fake-engine-tools.js';

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
  /** POST /call creates the call, then waits this long before answering. */
  answerDelayMs?: number;
  /** Plays every created call `afterMs` after its creation, retrying each message until it is taken. */
  autoPlay?: { afterMs: number; script?: (call: FakeVapiCall) => PlayCallScript; retryForMs?: number };
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
  /** The end-of-call-report's outcome fields, as Vapi documents them (default: an empty analysis). */
  analysis?: { summary?: string; successEvaluation?: string; structuredData?: Record<string, unknown> };
  cost?: number;
  durationSeconds?: number;
  /** Where the assistant transferred the call (Call.destination). */
  destination?: { type: 'number'; number: string };
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
  /** During the call, the model calls one of the assistant's function tools (./fake-engine-tools.ts). */
  callTool(
    engineCallId: string,
    name: string,
    args: Record<string, unknown>,
    options?: { argumentsAs?: 'string' | 'object' },
  ): Promise<VapiToolCallOutcome>;
  /** Auto-played calls not played to their end yet. */
  readonly playing: number;
  /** POST /call answers that never reached the client (its connection closed first). */
  readonly lostAnswers: number;
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

/**
 * The query parameters of `GET /call` as the published operation declares them, each checked
 * against its schema (a number from its text, a date-time's format), as Vapi's validation does.
 */
function callListQueryValidator() {
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  const parameters = VAPI_OPENAPI_EXCERPT.paths['/call'].get.parameters ?? [];
  const byName = new Map(parameters.map((parameter) => [parameter.name, ajv.compile(parameter.schema)]));
  return (query: URLSearchParams): string[] => {
    const problems: string[] = [];
    for (const [name, text] of query) {
      const validate = byName.get(name);
      if (!validate) {
        problems.push(`property ${name} should not exist`);
        continue;
      }
      const value =
        validate.schema && (validate.schema as { type?: string }).type === 'number' ? Number(text) : text;
      if (!validate(value)) problems.push(`${name} ${validate.errors?.[0]?.message ?? 'is invalid'}`);
    }
    return problems;
  };
}

/** The filters of `GET /call`: a Call passes when every parameter given holds for it. */
function passesCallFilters(call: Record<string, any>, query: URLSearchParams): boolean {
  for (const [name, text] of query) {
    if (name === 'limit') continue;
    const bound = /^(createdAt|updatedAt)(Gt|Lt|Ge|Le)$/.exec(name);
    if (bound) {
      const value = new Date(call[bound[1]]).getTime();
      const limit = new Date(text).getTime();
      const holds = { Gt: value > limit, Lt: value < limit, Ge: value >= limit, Le: value <= limit }[
        bound[2]
      ];
      if (!holds) return false;
    } else if (call[name] !== text) {
      return false;
    }
  }
  return true;
}

export async function startFakeVapi(options: FakeVapiOptions = {}): Promise<FakeVapi> {
  const apiKey = options.apiKey ?? FAKE_VAPI_API_KEY;
  const orgId = crypto.randomUUID();
  const validateCreateCall = createCallValidator();
  const validateCallListQuery = callListQueryValidator();
  /** Creation times are distinct and increasing, so the list's order and filters are exact. */
  let lastCreatedAt = 0;
  const createdAtNow = () => {
    lastCreatedAt = Math.max(Date.now(), lastCreatedAt + 1);
    return new Date(lastCreatedAt).toISOString();
  };
  let playing = 0;
  let lostAnswers = 0;
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
      const now = createdAtNow();
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
      const entry = { request: dto, call };
      calls.set(call.id, entry);
      if (options.autoPlay) autoPlay(entry, options.autoPlay);
      return { status: 201, body: call, delayMs: options.answerDelayMs };
    }
    if (method === 'GET' && url.pathname === '/call') {
      const problems = validateCallListQuery(url.searchParams);
      if (problems.length > 0) return vapiError(400, problems);
      const limit = Number(url.searchParams.get('limit') ?? 100);
      const listed = [...calls.values()]
        .map((entry) => entry.call)
        .filter((call) => passesCallFilters(call, url.searchParams))
        .sort((a, b) => String(b.createdAt).localeCompare(String(a.createdAt)))
        .slice(0, limit);
      return { status: 200, body: listed };
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
      const result: { status: number; body: unknown; delayMs?: number } =
        req.headers.authorization !== `Bearer ${apiKey}`
          ? vapiError(401, 'Unauthorized')
          : fault
            ? vapiError(fault.status ?? 503, fault.message ?? 'Service Unavailable')
            : answer(method, url, body, record);
      record.status = result.status;
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(result.status, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(result.body));
      };
      if (method === 'POST' && url.pathname === '/call') {
        res.on('close', () => {
          if (!res.writableFinished) lostAnswers++;
        });
      }
      if (result.delayMs) setTimeout(send, result.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const found = (engineCallId: string) => {
    const entry = calls.get(engineCallId);
    if (!entry) throw new Error(`fake Vapi: no call ${engineCallId}`);
    return entry;
  };

  let closed = false;

  /** Plays a created call by itself, each message posted until the service takes it. */
  function autoPlay(entry: FakeVapiCall, plan: NonNullable<FakeVapiOptions['autoPlay']>) {
    playing++;
    const retryForMs = plan.retryForMs ?? 120_000;
    setTimeout(() => {
      playCall(entry.call.id, plan.script?.(entry) ?? {}, async (post) => {
        const deadline = Date.now() + retryForMs;
        for (;;) {
          const status = await post().catch(() => 0);
          if ((status >= 200 && status < 300) || closed || Date.now() > deadline) return status;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      })
        .catch(() => undefined)
        .finally(() => {
          playing--;
        });
    }, plan.afterMs);
  }

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

  async function playCall(
    engineCallId: string,
    script: PlayCallScript = {},
    deliver: (post: () => Promise<number>) => Promise<number> = (post) => post(),
  ): Promise<number[]> {
    const { call } = found(engineCallId);
    const answered = script.answered ?? true;
    const endedAt = script.endedAt ?? new Date();
    const startedAt = script.startedAt ?? new Date(endedAt.getTime() - 42_000);
    const endedReason = script.endedReason ?? (answered ? 'customer-ended-call' : 'customer-did-not-answer');
    const statuses: number[] = [];
    const post = async (message: Record<string, unknown>) => {
      call.updatedAt = new Date().toISOString();
      statuses.push(await deliver(() => sendServerMessage(engineCallId, message, script.secret)));
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
    if (script.destination) call.destination = script.destination;
    await post({ type: 'status-update', status: 'ended', endedReason });
    await post({
      type: 'end-of-call-report',
      endedReason,
      ...(answered ? { startedAt: startedAt.toISOString() } : {}),
      endedAt: endedAt.toISOString(),
      artifact,
      analysis: script.analysis ?? {},
      ...(script.cost === undefined ? {} : { cost: script.cost }),
      ...(script.durationSeconds === undefined ? {} : { durationSeconds: script.durationSeconds }),
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
    playCall: (engineCallId, script) => playCall(engineCallId, script),
    callTool: (engineCallId, name, args, toolOptions) =>
      vapiCallsTool(found(engineCallId).call, name, args, {
        serverSecret: options.serverSecret,
        argumentsAs: toolOptions?.argumentsAs,
      }),
    get playing() {
      return playing;
    },
    get lostAnswers() {
      return lostAnswers;
    },
    close: () =>
      new Promise<void>((resolve) => {
        closed = true;
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
