/**
 * Retell's inbound calls (docs/phone-numbers.md). Retell posts `call_inbound` to the number's
 * `inbound_webhook_url` (set at import) while the call rings: `{ event: 'call_inbound',
 * call_inbound: { from_number, to_number, agent_id?, agent_version? } }`. It carries no call id (no
 * call exists yet) and is retried when the answer is slow, so only who answers is decided here
 * (`mode: 'decide'`); the call is stored when Retell's `call_started` (or, if that was lost, its
 * `call_ended`) arrives. The answer is `{ call_inbound: { override_agent_id,
 * override_agent_version, dynamic_variables } }`; a declined call gets `{ call_inbound: {} }`:
 * naming no agent, on a number with no agent bound, is Retell's documented way to disconnect (it
 * lets us say nothing to the caller).
 */
import type { InboundAnswer, PublishedAgentVersion } from '../port.js';
import { CALL_ID_METADATA_KEY } from './events.js';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export type CallInboundReading = { ok: true; from: string; to: string } | { ok: false; problem: string };

/** The body of a `call_inbound` webhook (already parsed JSON). */
export function readCallInbound(body: unknown): CallInboundReading {
  if (!isRecord(body) || body.event !== 'call_inbound' || !isRecord(body.call_inbound)) {
    return { ok: false, problem: 'The body is not a call_inbound event.' };
  }
  const { from_number: from, to_number: to } = body.call_inbound;
  if (typeof to !== 'string' || to === '') return { ok: false, problem: 'call_inbound has no to_number.' };
  return { ok: true, from: typeof from === 'string' ? from : '', to };
}

/**
 * The dynamic variables of an inbound call: `{phone}` is the caller, every other placeholder of the
 * version's prompt, welcome message and voicemail message renders empty (an inbound call brings no
 * name or context), so Retell never speaks a `{{key}}` as written.
 */
export function inboundDynamicVariables(
  version: PublishedAgentVersion,
  caller: string,
): Record<string, string> {
  const texts = [version.prompt, version.welcomeMessage, version.config.voicemail?.message ?? ''];
  const variables: Record<string, string> = {};
  for (const text of texts) {
    for (const match of text.matchAll(/\{(\w+)\}/g)) variables[match[1]] = '';
  }
  variables.phone = caller;
  return variables;
}

/** What the inbound webhook answers Retell. */
export async function callInboundAnswer(
  answer: InboundAnswer,
  caller: string,
  agentOf: (version: PublishedAgentVersion) => Promise<{ agentId: string; version: number }>,
): Promise<{ call_inbound: Record<string, unknown> }> {
  if (answer.kind === 'decline') return { call_inbound: {} };
  const agent = await agentOf(answer.version);
  return {
    call_inbound: {
      override_agent_id: agent.agentId,
      override_agent_version: agent.version,
      dynamic_variables: inboundDynamicVariables(answer.version, caller),
    },
  };
}

/** Of a Retell call (a webhook's `call`), what makes it an inbound call of ours to store. */
export function inboundCallOf(call: unknown): { from: string; to: string } | undefined {
  if (!isRecord(call) || call.direction !== 'inbound') return undefined;
  if (isRecord(call.metadata) && typeof call.metadata[CALL_ID_METADATA_KEY] === 'string') return undefined;
  const to = call.to_number;
  if (typeof to !== 'string' || to === '') return undefined;
  return { from: typeof call.from_number === 'string' ? call.from_number : '', to };
}
