/**
 * POST /engines/retell/tool-calls: where Retell calls the custom functions of our agents
 * (their url, toolRouteUrl), with `{ call, name, args }`. Signed like Retell's webhooks, in
 * `x-retell-signature` over the exact bytes with the API key (the retell-sdk verifier); a
 * missing or bad signature is 401. The call is found by our ids in `call.metadata`.
 *
 * Always 200 once verified: the tool's JSON answer, or `{ "error": "…" }` the agent can speak
 * about. Retell retries a function that fails twice, so a 5xx would call the partner three times.
 * Hidden from the OpenAPI documents.
 */
import type { FastifyPluginAsync } from 'fastify';
import { verify } from 'retell-sdk';
import type { RetellConfig } from '../core/config/config.js';
import { ApiError } from '../core/errors.js';
import { CALL_ID_METADATA_KEY, TENANT_ID_METADATA_KEY } from '../telephony/retell/events.js';
import { TOOL_ROUTE_PATHS } from '../telephony/tool-paths.js';
import type { ToolService } from './service.js';

/** The request carries the call with its transcript so far. */
const BODY_LIMIT = 2 * 1024 * 1024;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const textOf = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' && value.length <= 200 ? value : undefined;

export const retellToolRoutes: FastifyPluginAsync<{
  tools: ToolService;
  config: Pick<RetellConfig, 'apiKey'>;
}> = async (fastify, { tools, config }) => {
  // The signature covers the bytes as sent: the body stays a string until it is verified.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  fastify.post(
    TOOL_ROUTE_PATHS.retell,
    { bodyLimit: BODY_LIMIT, schema: { hide: true } },
    async (request, reply) => {
      const raw = typeof request.body === 'string' ? request.body : '';
      const signature = request.headers['x-retell-signature'];
      if (typeof signature !== 'string' || !(await verify(raw, config.apiKey, signature))) {
        throw new ApiError(
          'authentication_failed',
          'The x-retell-signature header is missing or does not match the body.',
        );
      }
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        throw new ApiError('invalid_request', 'The body is not JSON.');
      }
      if (!isRecord(body) || !textOf(body.name)) {
        throw new ApiError(
          'invalid_request',
          'The body is not a Retell function call: expected {"call", "name", "args"}.',
        );
      }
      const name = String(body.name);
      const metadata = isRecord(body.call) && isRecord(body.call.metadata) ? body.call.metadata : {};
      const callId = textOf(metadata[CALL_ID_METADATA_KEY]);
      const tenantId = textOf(metadata[TENANT_ID_METADATA_KEY]);
      const answer =
        callId && tenantId
          ? await tools.call({ caller: 'retell', tenantId, callId, name, arguments: body.args })
          : ({ ok: false, error: 'This call cannot use tools.' } as const);
      request.log.info({ callId, tool: name, ok: answer.ok }, 'retell tool call');
      reply.code(200).header('content-type', 'application/json');
      return JSON.stringify(answer.ok ? answer.result : { error: answer.error });
    },
  );
};
