/**
 * The fake Retell's phone numbers: GET /get-phone-number/{number} (a PhoneNumberResponse, 404 for a
 * number it does not hold) and PATCH /update-phone-number/{number} (the body checked against the
 * published operation by the server), and inbound calls as Retell documents its inbound webhook:
 * `ring` posts `{ event: 'call_inbound', call_inbound: { from_number, to_number, agent_id? } }`,
 * signed like the call webhooks, to the number's `inbound_webhook_url`, and reads the answer's
 * `call_inbound` (`override_agent_id`, `override_agent_version`, `dynamic_variables`, `metadata`).
 * An answer naming an agent, or else the agent bound to the number, takes the call: an inbound call
 * object is created (`playCall` plays it, its webhooks going to that agent's webhook_url). An answer
 * naming none on a number without an agent disconnects the caller: no call object exists.
 */
import { randomId } from './calls.js';

/** The fields Retell documents in an inbound webhook's answer. */
const ANSWER_FIELDS = new Set([
  'override_agent_id',
  'override_agent_version',
  'dynamic_variables',
  'metadata',
  'agent_override',
]);

export interface RetellInboundRing {
  /** The status of our route's answer. */
  status: number;
  /** Our route's answer, parsed. */
  answer: Record<string, any> | undefined;
  /** What in the answer Retell would not take (unknown fields, non-string dynamic variables). */
  problems: string[];
  /** The inbound call created; undefined when the caller was disconnected. */
  callId: string | undefined;
}

type Reply = { status: number; body: unknown };
type Delivery = (
  url: string,
  body: string,
  headers: Record<string, string>,
) => Promise<{ status: number; body: string }>;

export function createFakeRetellNumbers(deps: {
  initial: string[];
  calls: Record<string, unknown>[];
  /** The agent versions Retell holds, by agent id. */
  versionsOf: (agentId: string) => Record<string, unknown>[] | undefined;
  signed: (body: string) => Promise<Record<string, string>>;
  deliver: () => Delivery;
}) {
  const numbers = new Map<string, Record<string, unknown>>();
  const notFound: Reply = { status: 404, body: { status: 'error', message: 'Phone number not found.' } };
  const add = (number: string) =>
    numbers.set(number, {
      phone_number: number,
      phone_number_type: 'retell-twilio',
      phone_number_pretty: number,
      inbound_agent_id: null,
      outbound_agent_id: null,
      inbound_webhook_url: null,
      last_modification_timestamp: Date.now(),
    });
  for (const number of deps.initial) add(number);

  function handle(method: string, urlPath: string, body: unknown): Reply | undefined {
    const get = /^\/get-phone-number\/([^/]+)$/.exec(urlPath);
    if (method === 'GET' && get) {
      const number = numbers.get(decodeURIComponent(get[1]));
      return number ? { status: 200, body: number } : notFound;
    }
    const update = /^\/update-phone-number\/([^/]+)$/.exec(urlPath);
    if (method === 'PATCH' && update) {
      const number = numbers.get(decodeURIComponent(update[1]));
      if (!number) return notFound;
      Object.assign(number, body as object, { last_modification_timestamp: Date.now() });
      return { status: 200, body: number };
    }
    return undefined;
  }

  async function ring(to: string, from: string): Promise<RetellInboundRing> {
    const number = numbers.get(to);
    if (!number) throw new Error(`fake Retell: no number ${to}`);
    const url = number.inbound_webhook_url;
    if (typeof url !== 'string') throw new Error(`fake Retell: ${to} has no inbound_webhook_url`);
    const payload = JSON.stringify({
      event: 'call_inbound',
      call_inbound: {
        ...(typeof number.inbound_agent_id === 'string' ? { agent_id: number.inbound_agent_id } : {}),
        from_number: from,
        to_number: to,
      },
    });
    const result = await deps.deliver()(url, payload, {
      'content-type': 'application/json',
      ...(await deps.signed(payload)),
    });
    let parsed: Record<string, any> | undefined;
    try {
      parsed = JSON.parse(result.body) as Record<string, any>;
    } catch {
      parsed = undefined;
    }
    const answer = parsed?.call_inbound as Record<string, any> | undefined;
    const problems: string[] = [];
    for (const field of Object.keys(answer ?? {})) {
      if (!ANSWER_FIELDS.has(field)) problems.push(`call_inbound.${field} is not a documented field`);
    }
    for (const [key, value] of Object.entries(answer?.dynamic_variables ?? {})) {
      if (typeof value !== 'string') problems.push(`dynamic_variables.${key} must be a string`);
    }
    const ok = result.status >= 200 && result.status < 300 && problems.length === 0;
    const agentId = (ok ? answer?.override_agent_id : undefined) ?? number.inbound_agent_id;
    const wantedVersion = ok ? answer?.override_agent_version : undefined;
    const agent =
      typeof agentId === 'string'
        ? (deps.versionsOf(agentId) ?? []).findLast(
            (candidate) => wantedVersion === undefined || candidate.version === wantedVersion,
          )
        : undefined;
    if (!agent) return { status: result.status, answer: parsed, problems, callId: undefined };
    const call = {
      call_type: 'phone_call',
      from_number: from,
      to_number: to,
      direction: 'inbound',
      call_id: `call_${randomId()}`,
      agent_id: agent.agent_id,
      agent_version: agent.version,
      agent_name: agent.agent_name,
      call_status: 'registered',
      metadata: (ok ? answer?.metadata : undefined) ?? {},
      retell_llm_dynamic_variables: (ok ? answer?.dynamic_variables : undefined) ?? {},
    };
    deps.calls.push(call);
    return { status: result.status, answer: parsed, problems, callId: call.call_id };
  }

  return { handle, ring, get: (number: string) => numbers.get(number) };
}
