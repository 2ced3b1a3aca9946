/** The fake Vapi's server (../fake-vapi.ts describes what it speaks). */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { vapiCallsTool } from '../fake-engine-tools.js';
import { callListQueryValidator, passesCallFilters, schemaValidator } from './openapi.js';
import { createFakeVapiNumbers } from './phone-numbers.js';
import {
  FAKE_VAPI_API_KEY,
  type FakeVapi,
  type FakeVapiCall,
  type FakeVapiOptions,
  type PlayCallScript,
  type RecordedVapiRequest,
  type VapiFault,
} from './types.js';

export async function startFakeVapi(options: FakeVapiOptions = {}): Promise<FakeVapi> {
  const apiKey = options.apiKey ?? FAKE_VAPI_API_KEY;
  const orgId = crypto.randomUUID();
  const validateCreateCall = schemaValidator('CreateCallDTO');
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
  const numbers = createFakeVapiNumbers({ orgId, serverSecret: options.serverSecret, createdAtNow, calls });
  numbers.set(options.phoneNumbers ?? []);

  const vapiError = (status: number, message: string | string[]) => ({
    status,
    body: { message, error: http.STATUS_CODES[status] ?? 'Error', statusCode: status },
  });

  function answer(method: string, url: URL, body: unknown, record: RecordedVapiRequest) {
    if (method === 'GET' && url.pathname === '/phone-number') return numbers.list(url);
    const phoneNumber = /^\/phone-number\/([^/]+)$/.exec(url.pathname);
    if (method === 'PATCH' && phoneNumber) {
      return numbers.update(decodeURIComponent(phoneNumber[1]), body, record.schemaErrors);
    }
    if (method === 'POST' && url.pathname === '/call') {
      record.schemaErrors = validateCreateCall(body);
      if (record.schemaErrors.length > 0) return vapiError(400, record.schemaErrors);
      const dto = body as Record<string, any>;
      if (!numbers.has(dto.phoneNumberId)) return vapiError(400, "Couldn't Get Phone Number.");
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
    setPhoneNumbers: numbers.set,
    phoneNumber: numbers.byNumber,
    ringInbound: numbers.ring,
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
