/**
 * POST /engines/vapi/tool-calls: where Vapi sends the `tool-calls` server message of our calls
 * (the function tools' `server.url`, toolRouteUrl). Authenticated as every Vapi callback: the
 * operator's server credential, `Authorization: Bearer <VAPI_SERVER_SECRET>` (or the legacy
 * `X-Vapi-Secret`); anything else is 401 before the body is read.
 *
 * The message names the call by our ids in the assistant's metadata and lists the calls to make
 * (`toolCallList`, or `toolWithToolCallList[].toolCall`), each `{ id, function: { name,
 * arguments } }`, the arguments an object or a JSON string. Each is run (ToolService.call) and
 * answered in one `{ results: [{ toolCallId, name, result | error }] }`, always 200: a failing
 * tool is an `error` the assistant speaks about. Hidden from the OpenAPI documents.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { VapiConfig } from '../core/config/config.js';
import { invalidRequest } from '../core/errors.js';
import { bearerRefused, bearerToken, constantTimeEquals } from '../core/http/auth.js';
import { TOOL_ROUTE_PATHS } from '../telephony/tool-paths.js';
import { CALL_ID_METADATA_KEY, TENANT_ID_METADATA_KEY } from '../telephony/vapi/messages.js';
import type { ToolService } from './service.js';

/** A tool-calls message carries the whole Call (its assistant and prompt). */
const BODY_LIMIT = 2 * 1024 * 1024;
/** More tool calls than any model makes in one turn: the rest are answered with an error. */
const MAX_TOOL_CALLS = 10;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const recordOf = (value: unknown): Record<string, unknown> => (isRecord(value) ? value : {});
const textOf = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' && value.length <= 200 ? value : undefined;

interface VapiToolCall {
  id: string;
  name: string;
  arguments: unknown;
}

/** Our tenant and call ids, from the transient assistant's metadata (the message's or its call's). */
function callOf(message: Record<string, unknown>): { tenantId: string; callId: string } | undefined {
  for (const assistant of [message.assistant, recordOf(message.call).assistant]) {
    const metadata = recordOf(recordOf(assistant).metadata);
    const callId = textOf(metadata[CALL_ID_METADATA_KEY]);
    const tenantId = textOf(metadata[TENANT_ID_METADATA_KEY]);
    if (callId && tenantId) return { tenantId, callId };
  }
  return undefined;
}

/** The tool calls of the message: `toolCallList`, else `toolWithToolCallList[].toolCall`. */
export function vapiToolCalls(message: Record<string, unknown>): VapiToolCall[] {
  const list = Array.isArray(message.toolCallList)
    ? message.toolCallList
    : Array.isArray(message.toolWithToolCallList)
      ? message.toolWithToolCallList.map((item) => recordOf(item).toolCall)
      : [];
  const calls: VapiToolCall[] = [];
  for (const item of list) {
    const call = recordOf(item);
    const fn = recordOf(call.function);
    const id = textOf(call.id);
    const name = textOf(fn.name) ?? textOf(call.name);
    if (id && name) calls.push({ id, name, arguments: fn.arguments ?? call.arguments });
  }
  return calls;
}

export const vapiToolRoutes: FastifyPluginAsync<{
  tools: ToolService;
  config: Pick<VapiConfig, 'serverSecret'>;
}> = async (app, { tools, config }) => {
  const secret = config.serverSecret;
  app.post(
    TOOL_ROUTE_PATHS.vapi,
    {
      bodyLimit: BODY_LIMIT,
      schema: { hide: true },
      onRequest: async (request) => {
        const bearer = bearerToken(request);
        const legacy = request.headers['x-vapi-secret'];
        const accepted =
          (bearer !== undefined && constantTimeEquals(bearer, secret)) ||
          (typeof legacy === 'string' && constantTimeEquals(legacy, secret));
        if (!accepted) {
          throw bearerRefused(
            'A valid Vapi server credential is required: Authorization: Bearer <VAPI_SERVER_SECRET>.',
            bearer ?? (typeof legacy === 'string' ? legacy : undefined),
          );
        }
      },
    },
    async (request) => {
      const body = recordOf(request.body);
      if (!isRecord(body.message) || typeof body.message.type !== 'string') {
        throw invalidRequest('The body is not a Vapi server message: expected {"message": {"type": …}}.');
      }
      const message = body.message;
      const calls = message.type === 'tool-calls' ? vapiToolCalls(message) : [];
      const ours = callOf(message);
      const results = await Promise.all(
        calls.map(async (toolCall, index) => {
          const head = { toolCallId: toolCall.id, name: toolCall.name };
          if (!ours) return { ...head, error: 'This call cannot use tools.' };
          if (index >= MAX_TOOL_CALLS) return { ...head, error: 'Too many tool calls at once.' };
          const answer = await tools.call({
            caller: 'vapi',
            ...ours,
            name: toolCall.name,
            arguments: toolCall.arguments,
          });
          request.log.info({ callId: ours.callId, tool: toolCall.name, ok: answer.ok }, 'vapi tool call');
          // Vapi's `result` is a string: the tool's JSON, as text.
          return answer.ok
            ? { ...head, result: JSON.stringify(answer.result) }
            : { ...head, error: answer.error };
        }),
      );
      return { results };
    },
  );
};
