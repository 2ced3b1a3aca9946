/**
 * How the local Vapi and Retell servers call a tool during a call, as each engine documents it
 * (fake-vapi.ts and fake-retell.ts expose these as `callTool`):
 *
 * - Vapi: the model asks for one of the assistant's `function` tools; Vapi POSTs the `tool-calls`
 *   server message (ServerMessageToolCalls: `toolCallList` of ToolCall, whose `function.arguments`
 *   is a JSON string in the API document — an object in Vapi's guides, `argumentsAs: 'object'` —
 *   and `toolWithToolCallList` pairing each with its tool) to the tool's `server.url`, with the
 *   Custom Credential's bearer token, and waits `server.timeoutSeconds`. The answer must be a
 *   ServerMessageResponseToolCalls; the ToolCallResult for the call's id is what the model reads.
 * - Retell: the LLM calls one of its `custom` general tools; Retell POSTs `{ call, name, args }`
 *   to the tool's url, signed in `x-retell-signature` (retell-sdk's `sign` with the API key), and
 *   waits `timeout_ms`. A 2xx answer (at most 15,000 characters are kept) is the result; a
 *   failure or timeout is retried twice, so a route that answered 5xx would be called three times.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import { sign } from 'retell-sdk';

export interface EngineToolAttempt {
  /** 0 when the engine gave up waiting (its timeout) or could not connect. */
  status: number;
  body: string;
  timedOut: boolean;
}

export interface VapiToolCallOutcome extends EngineToolAttempt {
  /** The ToolCallResult answered for this tool call (undefined when none was). */
  result: Record<string, unknown> | undefined;
  /** Why the answer failed ServerMessageResponseToolCalls, when it did. */
  schemaErrors: string[];
  /** The message that was sent. */
  message: Record<string, unknown>;
}

export interface RetellToolCallOutcome {
  /** Each request Retell made, in order (a failure is retried twice). */
  attempts: EngineToolAttempt[];
  /** What the LLM reads: the last answer's body, at most 15,000 characters. */
  result: string | undefined;
  /** The body of the first request, as sent. */
  body: string;
}

let vapiValidators: { answer: ValidateFunction; toolCall: ValidateFunction } | undefined;
function vapiSchemas() {
  if (vapiValidators) return vapiValidators;
  const ajv = new Ajv({ allErrors: true, strict: false });
  ajv.addSchema(
    JSON.parse(readFileSync(new URL('./engines/vapi-openapi.json', import.meta.url), 'utf8')),
    'vapi',
  );
  const get = (name: string) => {
    const validate = ajv.getSchema(`vapi#/components/schemas/${name}`);
    if (!validate) throw new Error(`${name} missing from the vendored Vapi OpenAPI excerpt`);
    return validate;
  };
  vapiValidators = { answer: get('ServerMessageResponseToolCalls'), toolCall: get('ToolCall') };
  return vapiValidators;
}

async function post(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<EngineToolAttempt> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: response.status, body: await response.text(), timedOut: false };
  } catch (error) {
    const timedOut = (error as Error).name === 'TimeoutError';
    return { status: 0, body: '', timedOut };
  }
}

/** Vapi's default `server.timeoutSeconds`. */
const VAPI_DEFAULT_TOOL_TIMEOUT_SECONDS = 20;

export async function vapiCallsTool(
  call: Record<string, any>,
  name: string,
  args: Record<string, unknown>,
  options: { serverSecret?: string; argumentsAs?: 'string' | 'object' },
): Promise<VapiToolCallOutcome> {
  const assistant = call.assistant as Record<string, any>;
  const tool = (assistant.model?.tools ?? []).find(
    (candidate: Record<string, any>) => candidate.type === 'function' && candidate.function?.name === name,
  );
  if (!tool) throw new Error(`fake Vapi: the assistant of call ${call.id} has no function ${name}`);
  const toolCall = {
    id: `call_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`,
    type: 'function',
    function: { name, arguments: options.argumentsAs === 'object' ? args : JSON.stringify(args) },
  };
  const schemas = vapiSchemas();
  if (options.argumentsAs !== 'object' && !schemas.toolCall(toolCall)) {
    throw new Error(
      `fake Vapi: its own ToolCall is not the document's: ${JSON.stringify(schemas.toolCall.errors)}`,
    );
  }
  const message = {
    type: 'tool-calls',
    timestamp: Date.now(),
    toolCallList: [toolCall],
    toolWithToolCallList: [
      { type: 'function', function: tool.function, server: tool.server, async: false, toolCall },
    ],
    call,
    assistant,
    customer: call.customer,
  };
  const url = tool.server?.url ?? assistant.server?.url;
  const timeoutSeconds = tool.server?.timeoutSeconds ?? VAPI_DEFAULT_TOOL_TIMEOUT_SECONDS;
  const headers: Record<string, string> = options.serverSecret
    ? { authorization: `Bearer ${options.serverSecret}` }
    : {};
  const attempt = await post(url, headers, JSON.stringify({ message }), timeoutSeconds * 1000);
  let answer: unknown;
  try {
    answer = attempt.body ? JSON.parse(attempt.body) : undefined;
  } catch {
    answer = undefined;
  }
  const valid = attempt.status >= 200 && attempt.status < 300 && schemas.answer(answer);
  const schemaErrors = valid
    ? []
    : (schemas.answer.errors ?? [{ instancePath: '', message: `HTTP ${attempt.status}` }]).map(
        (error) => `${error.instancePath || '(body)'} ${error.message}`,
      );
  const results = (answer as { results?: Record<string, unknown>[] } | undefined)?.results;
  const result = Array.isArray(results) ? results.find((r) => r.toolCallId === toolCall.id) : undefined;
  return { ...attempt, result, schemaErrors, message };
}

/** Retell keeps this much of a function's answer. */
const RETELL_RESULT_CHARACTERS = 15_000;
/** Retell retries a failing function call twice. */
const RETELL_TOOL_RETRIES = 2;

export async function retellCallsTool(
  call: Record<string, unknown>,
  llm: Record<string, any>,
  apiKey: string,
  name: string,
  args: Record<string, unknown>,
): Promise<RetellToolCallOutcome> {
  const tool = (llm.general_tools ?? []).find(
    (candidate: Record<string, any>) => candidate.type === 'custom' && candidate.name === name,
  );
  if (!tool)
    throw new Error(`fake Retell: the LLM of call ${String(call.call_id)} has no custom tool ${name}`);
  const body = JSON.stringify({ call, name, args });
  const attempts: EngineToolAttempt[] = [];
  for (let attempt = 0; attempt <= RETELL_TOOL_RETRIES; attempt++) {
    const headers = { 'x-retell-signature': await sign(body, apiKey) };
    const outcome = await post(tool.url, headers, body, tool.timeout_ms ?? 120_000);
    attempts.push(outcome);
    if (outcome.status >= 200 && outcome.status < 300) {
      return { attempts, result: outcome.body.slice(0, RETELL_RESULT_CHARACTERS), body };
    }
  }
  return { attempts, result: undefined, body };
}
