/** The fake Retell's server (../fake-retell.ts describes what it speaks). */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sign } from 'retell-sdk';
import { retellCallsTool } from '../fake-engine-tools.js';
import { LIST_LIMIT_MAX, NOT_CONNECTED, passesListFilters, randomId, signAt } from './calls.js';
import { bodyProblems } from './openapi.js';
import { createFakeRetellNumbers } from './phone-numbers.js';
import type {
  FakeRetell,
  FakeRetellFault,
  FakeRetellOptions,
  PlayCallScript,
  RecordedRetellRequest,
  WebhookDelivery,
} from './types.js';

export async function startFakeRetell(options: FakeRetellOptions = {}): Promise<FakeRetell> {
  const apiKey = options.apiKey ?? `key_${randomId()}`;
  const requests: RecordedRetellRequest[] = [];
  const faults: FakeRetellFault[] = [];
  const llms: Record<string, unknown>[] = [];
  const agents: Record<string, unknown>[] = [];
  const calls: Record<string, unknown>[] = [];
  const versionsOf = new Map<string, Record<string, unknown>[]>();
  const latest = (id: string) => versionsOf.get(id)?.at(-1);
  const numbers = createFakeRetellNumbers({
    initial: options.phoneNumbers ?? [],
    calls,
    versionsOf: (agentId) => versionsOf.get(agentId),
    signed: (body) => signatureHeader(body, 'valid'),
    deliver: () => deliver,
  });
  /** Keeps `list` (llms or agents) showing each object's latest version. */
  const showLatest = (list: Record<string, unknown>[], key: string, version: Record<string, unknown>) => {
    const index = list.findIndex((candidate) => candidate[key] === version[key]);
    if (index === -1) list.push(version);
    else list[index] = version;
  };
  /** A new version of an LLM or agent: the next number, not published, copied from the one before. */
  const nextVersion = (before: Record<string, unknown>, changes: Record<string, unknown>, now: number) => ({
    ...structuredClone(before),
    ...changes,
    version: (before.version as number) + 1,
    is_published: false,
    last_modification_timestamp: now,
  });

  const answer = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const errorBody = (message: string) => ({ status: 'error', message });

  function handle(
    method: string,
    urlPath: string,
    body: unknown,
    query: URLSearchParams = new URLSearchParams(),
  ): { status: number; body: unknown; delayMs?: number } {
    const now = Date.now();
    const input = body as Record<string, any>;
    const numberReply = numbers.handle(method, urlPath, body);
    if (numberReply) return numberReply;
    if (method === 'POST' && urlPath === '/create-retell-llm') {
      const llm = {
        ...input,
        llm_id: `llm_${randomId()}`,
        version: 0,
        is_published: false,
        last_modification_timestamp: now,
      };
      llms.push(llm);
      versionsOf.set(llm.llm_id, [llm]);
      return { status: 201, body: llm };
    }
    const updateLlm = /^\/update-retell-llm\/([^/]+)$/.exec(urlPath);
    if (method === 'PATCH' && updateLlm) {
      const id = decodeURIComponent(updateLlm[1]);
      const current = latest(id);
      if (!current) return { status: 404, body: errorBody('The requested resource was not found.') };
      let version = current;
      if (current.is_published) {
        version = nextVersion(current, input, now);
        versionsOf.get(id)?.push(version);
      } else Object.assign(current, input, { last_modification_timestamp: now });
      showLatest(llms, 'llm_id', version);
      return { status: 200, body: version };
    }
    if (method === 'POST' && urlPath === '/create-agent') {
      const agent = {
        ...input,
        agent_id: `agent_${randomId()}`,
        version: 0,
        is_published: false,
        last_modification_timestamp: now,
      };
      agents.push(agent);
      versionsOf.set(agent.agent_id, [agent]);
      return { status: 201, body: agent };
    }
    const updateAgent = /^\/update-agent\/([^/]+)$/.exec(urlPath);
    if (method === 'PATCH' && updateAgent) {
      const draft = latest(decodeURIComponent(updateAgent[1]));
      if (!draft) return { status: 404, body: errorBody('The requested resource was not found.') };
      if (draft.is_published)
        return { status: 400, body: errorBody('A published version cannot be updated.') };
      Object.assign(draft, input, { last_modification_timestamp: now });
      return { status: 200, body: draft };
    }
    const publishAgent = /^\/publish-agent\/([^/]+)$/.exec(urlPath);
    if (method === 'POST' && publishAgent) {
      const id = decodeURIComponent(publishAgent[1]);
      const draft = latest(id);
      if (!draft) return { status: 404, body: errorBody('The requested resource was not found.') };
      draft.is_published = true;
      const engine = draft.response_engine as { llm_id?: string; version?: number } | undefined;
      const llm = versionsOf
        .get(engine?.llm_id ?? '')
        ?.find((candidate) => engine?.version === undefined || candidate.version === engine.version);
      if (llm) llm.is_published = true;
      const next = nextVersion(draft, {}, now);
      versionsOf.get(id)?.push(next);
      showLatest(agents, 'agent_id', next);
      return { status: 200, body: undefined };
    }
    if (method === 'POST' && urlPath === '/v2/create-phone-call') {
      const agent = (versionsOf.get(input.override_agent_id) ?? []).findLast(
        (candidate) =>
          input.override_agent_version === undefined || candidate.version === input.override_agent_version,
      );
      if (!agent) return { status: 422, body: errorBody('Cannot find requested asset under given api key.') };
      const call = {
        call_type: 'phone_call',
        from_number: input.from_number,
        to_number: input.to_number,
        direction: 'outbound',
        call_id: `call_${randomId()}`,
        agent_id: agent.agent_id,
        agent_version: agent.version,
        agent_name: agent.agent_name,
        call_status: 'registered',
        metadata: input.metadata ?? {},
        retell_llm_dynamic_variables: input.retell_llm_dynamic_variables ?? {},
      };
      calls.push(call);
      if (options.autoPlay) autoPlay(call, options.autoPlay);
      return { status: 201, body: call, delayMs: options.answerDelayMs };
    }
    if (method === 'POST' && urlPath === '/v2/list-calls') {
      const limit = input.limit ?? 50;
      if (limit > LIST_LIMIT_MAX) return { status: 400, body: errorBody('limit must be at most 1000.') };
      const started = (call: Record<string, unknown>) =>
        typeof call.start_timestamp === 'number' ? call.start_timestamp : Number.POSITIVE_INFINITY;
      const ordered = calls
        .map((call, index) => ({ call, index }))
        .filter(({ call }) => passesListFilters(call, input.filter_criteria ?? {}))
        .sort((a, b) => started(a.call) - started(b.call) || a.index - b.index)
        .map(({ call }) => call);
      if (input.sort_order !== 'ascending') ordered.reverse();
      const after = input.pagination_key
        ? ordered.findIndex((call) => call.call_id === input.pagination_key) + 1
        : 0;
      return { status: 200, body: ordered.slice(after, after + limit) };
    }
    const getAgent = /^\/get-agent\/([^/]+)$/.exec(urlPath);
    if (method === 'GET' && getAgent) {
      const versions = versionsOf.get(decodeURIComponent(getAgent[1])) ?? [];
      const wanted = query.get('version');
      const agent = wanted === null ? versions.at(-1) : versions.find((v) => v.version === Number(wanted));
      return agent
        ? { status: 200, body: agent }
        : { status: 404, body: errorBody('The requested resource was not found.') };
    }
    const getCall = /^\/v2\/get-call\/([^/]+)$/.exec(urlPath);
    if (method === 'GET' && getCall) {
      const call = calls.find((candidate) => candidate.call_id === decodeURIComponent(getCall[1]));
      return call
        ? { status: 200, body: call }
        : { status: 404, body: errorBody('The requested resource was not found.') };
    }
    return { status: 404, body: errorBody('The requested resource was not found.') };
  }

  function takeFault(method: string, urlPath: string): FakeRetellFault | undefined {
    const fault = faults.find(
      (candidate) =>
        (candidate.method === undefined || candidate.method === method) &&
        (typeof candidate.path === 'string'
          ? urlPath.startsWith(candidate.path)
          : candidate.path.test(urlPath)),
    );
    if (fault && --(fault as { times: number }).times <= 0) faults.splice(faults.indexOf(fault), 1);
    return fault;
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const method = req.method ?? 'GET';
      const url = new URL(req.url ?? '/', 'http://fake');
      const urlPath = url.pathname;
      const text = Buffer.concat(chunks).toString('utf8');
      const record: RecordedRetellRequest = {
        method,
        path: urlPath,
        authorization: req.headers.authorization,
        body: undefined,
        status: 0,
      };
      requests.push(record);
      const reply = (status: number, body: unknown) => {
        record.status = status;
        answer(res, status, body);
      };
      if (req.headers.authorization !== `Bearer ${apiKey}`)
        return reply(401, errorBody('API key is missing or invalid.'));
      if (text !== '') {
        try {
          record.body = JSON.parse(text);
        } catch {
          return reply(400, errorBody('Invalid request format, please check API reference.'));
        }
      }
      const problems = bodyProblems(method, urlPath, record.body);
      if (problems) {
        record.schemaErrors = problems;
        return reply(400, errorBody('Invalid request format, please check API reference.'));
      }
      const fault = takeFault(method, urlPath);
      if (fault) return reply(fault.status, errorBody(fault.message ?? `Injected ${fault.status}.`));
      const result = handle(method, urlPath, record.body, url.searchParams);
      if (method === 'POST' && urlPath === '/v2/create-phone-call') {
        res.on('close', () => {
          if (!res.writableFinished) lostAnswers++;
        });
      }
      if (result.delayMs) {
        record.status = result.status;
        setTimeout(() => {
          if (!res.destroyed) answer(res, result.status, result.body);
        }, result.delayMs);
      } else reply(result.status, result.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const deliver =
    options.deliver ??
    (async (target: string, body: string, headers: Record<string, string>) => {
      const response = await fetch(target, { method: 'POST', headers, body });
      return { status: response.status, body: await response.text() };
    });

  async function signatureHeader(
    body: string,
    kind: PlayCallScript['signature'],
  ): Promise<Record<string, string>> {
    if (kind === 'none') return {};
    if (kind === 'bad') return { 'x-retell-signature': await sign(body, `${apiKey}-wrong`) };
    if (kind === 'stale') return { 'x-retell-signature': signAt(body, apiKey, Date.now() - 10 * 60_000) };
    return { 'x-retell-signature': await sign(body, apiKey) };
  }

  let closed = false;
  let playing = 0;
  let lostAnswers = 0;

  /** Plays a created call by itself, each webhook delivered until the service takes it. */
  function autoPlay(call: Record<string, unknown>, plan: NonNullable<FakeRetellOptions['autoPlay']>) {
    playing++;
    const retryForMs = plan.retryForMs ?? 120_000;
    setTimeout(() => {
      playCall(call.call_id as string, plan.script?.(call) ?? {}, async (post) => {
        const deadline = Date.now() + retryForMs;
        for (;;) {
          const result = await post().catch(() => ({ status: 0, body: '' }));
          if ((result.status >= 200 && result.status < 300) || closed || Date.now() > deadline) return result;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      })
        .catch(() => undefined)
        .finally(() => {
          playing--;
        });
    }, plan.afterMs);
  }

  async function playCall(
    callId: string,
    script: PlayCallScript = {},
    retry: (
      post: () => Promise<{ status: number; body: string }>,
    ) => Promise<{ status: number; body: string }> = (post) => post(),
  ): Promise<WebhookDelivery[]> {
    const call = calls.find((candidate) => candidate.call_id === callId);
    if (!call) throw new Error(`fake Retell: no call ${callId}`);
    const agent = versionsOf
      .get(call.agent_id as string)
      ?.find((candidate) => candidate.version === call.agent_version);
    const webhookUrl = agent?.webhook_url;
    if (typeof webhookUrl !== 'string')
      throw new Error(`fake Retell: the agent of ${callId} has no webhook_url`);
    const reason = script.disconnectionReason ?? 'user_hangup';
    const connected = script.connected ?? !NOT_CONNECTED.has(reason);
    const start = script.startTimestamp ?? Date.now();
    const durationMs = script.durationMs ?? (connected ? 42_000 : 0);
    const events = script.events ?? [
      ...(connected ? (['call_started'] as const) : []),
      'call_ended' as const,
      'call_analyzed' as const,
    ];
    const deliveries: WebhookDelivery[] = [];
    for (const event of events) {
      if (event === 'call_started') Object.assign(call, { call_status: 'ongoing', start_timestamp: start });
      else {
        Object.assign(call, {
          call_status: connected ? 'ended' : 'not_connected',
          start_timestamp: start,
          end_timestamp: start + durationMs,
          duration_ms: durationMs,
          disconnection_reason: reason,
          ...(script.transcript === undefined ? {} : { transcript: script.transcript }),
          ...(script.recordingUrl === undefined ? {} : { recording_url: script.recordingUrl }),
          ...(script.transferDestination === undefined
            ? {}
            : { transfer_destination: script.transferDestination }),
          ...(script.callCost === undefined
            ? {}
            : { call_cost: { product_costs: [], total_duration_unit_price: 1, ...script.callCost } }),
        });
      }
      if (event === 'call_analyzed') {
        call.call_analysis = {
          call_summary: 'A test call.',
          in_voicemail: reason === 'voicemail_reached',
          call_successful: connected,
          ...(script.customAnalysisData === undefined
            ? {}
            : { custom_analysis_data: script.customAnalysisData }),
        };
      }
      const body = JSON.stringify({ event, call });
      // Signed again for each delivery, as Retell does: a retry carries a fresh signature.
      const result = await retry(async () =>
        deliver(webhookUrl, body, {
          'content-type': 'application/json',
          ...(await signatureHeader(body, script.signature)),
        }),
      );
      deliveries.push({ event, status: result.status, body: result.body });
    }
    return deliveries;
  }

  return {
    url,
    apiKey,
    requests,
    llms,
    agents,
    calls,
    agentVersions: (agentId) => versionsOf.get(agentId) ?? [],
    llmVersions: (llmId) => versionsOf.get(llmId) ?? [],
    requestsTo: (method, pathPattern) =>
      requests.filter(
        (request) =>
          request.method === method &&
          (typeof pathPattern === 'string'
            ? request.path.startsWith(pathPattern)
            : pathPattern.test(request.path)),
      ),
    fail(fault) {
      faults.push({ ...fault, times: fault.times ?? 1 });
    },
    playCall: (callId, script) => playCall(callId, script),
    phoneNumber: numbers.get,
    ringInbound: numbers.ring,
    callTool(callId, name, args) {
      const call = calls.find((candidate) => candidate.call_id === callId);
      if (!call) throw new Error(`fake Retell: no call ${callId}`);
      // The call's agent version, and the LLM version its response engine names.
      const agent = versionsOf.get(call.agent_id as string)?.find((v) => v.version === call.agent_version);
      const engine = (agent?.response_engine ?? {}) as { llm_id?: string; version?: number };
      const llm = (versionsOf.get(engine.llm_id ?? '') ?? []).findLast(
        (v) => engine.version === undefined || v.version === engine.version,
      );
      if (!llm) throw new Error(`fake Retell: the agent of ${callId} has no LLM`);
      return retellCallsTool(call, llm, apiKey, name, args);
    },
    get playing() {
      return playing;
    },
    get lostAnswers() {
      return lostAnswers;
    },
    close: () =>
      new Promise<void>((resolve) => {
        closed = true;
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
