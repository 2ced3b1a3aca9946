/**
 * POST /engines/vapi/server-messages: where Vapi posts the server messages of the calls the vapi
 * adapter placed (the assistant's `server.url`). Vapi authenticates with the operator's Custom
 * Credential, a Bearer token equal to VAPI_SERVER_SECRET (`Authorization: Bearer …`, or the legacy
 * `X-Vapi-Secret: …` header); anything else is 401 before the body is read, and changes nothing.
 *
 * Every authenticated Vapi message is answered 200 `{}`: one that reports a call is applied
 * (EngineReports), any other (another type, an unknown or already-ended call) is acknowledged and
 * ignored. The exception is `assistant-request`, which Vapi sends for an inbound call to a number
 * with no assistant of its own (the numbers we import): it is answered `{ assistant }`, the
 * number's inbound agent as a transient assistant, or `{ error }`, the words Vapi speaks to the
 * caller before it hangs up (docs/phone-numbers.md). Vapi waits 7.5 s at most for that answer. A body that is not a Vapi message is 400. Not part of the partner or operator API, so
 * hidden from the OpenAPI documents.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import { type Clock, systemClock } from '../../core/clock.js';
import type { VapiConfig } from '../../core/config/config.js';
import { invalidRequest } from '../../core/errors.js';
import { bearerRefused, bearerToken, constantTimeEquals } from '../../core/http/auth.js';
import type { EngineReports, InboundCalls } from '../port.js';
import { VAPI_SERVER_MESSAGES_PATH, vapiTransientAssistant } from './adapter.js';
import { reportFromServerMessage, serverMessageOf } from './messages.js';

/**
 * An end-of-call-report carries the whole Call (its assistant and prompt), the transcript and
 * every message of the conversation: a long call is well over the app's 1 MiB default.
 */
export const VAPI_MESSAGE_BODY_LIMIT = 8 * 1024 * 1024;

export interface VapiRoutesOptions {
  reports: EngineReports;
  config: Pick<VapiConfig, 'serverSecret'> & Partial<Pick<VapiConfig, 'serverCredentialId'>>;
  clock?: Clock;
  /** Who answers inbound calls (`assistant-request`); without it they are declined. */
  inbound?: InboundCalls;
  /** Where Vapi reaches this service (the inbound assistant's server URL). */
  publicBaseUrl?: string;
}

/** `{}`, or the answer to an assistant-request (`{ assistant }` or `{ error }`). */
const Acknowledged = Type.Object({}, { additionalProperties: true });

const recordOf = (value: unknown): Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
const textOf = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

/** The default words of a declined call when no inbound path is wired (a test of the callbacks alone). */
const UNANSWERED = 'Sorry, this number cannot take calls right now.';

export const vapiRoutes: FastifyPluginAsync<VapiRoutesOptions> = async (app, options) => {
  const { reports } = options;
  const secret = options.config.serverSecret;
  const clock = options.clock ?? systemClock;

  /**
   * Routed by `call.phoneNumberId` (the message's `phoneNumber` carries no id); the caller is the
   * call's customer.
   */
  async function answerAssistantRequest(
    message: Record<string, unknown>,
    log: { info(details: object, text: string): void },
  ): Promise<Record<string, unknown>> {
    const call = recordOf(message.call);
    const phoneNumberId = textOf(call.phoneNumberId);
    const from = textOf(recordOf(call.customer).number) ?? textOf(recordOf(message.customer).number) ?? '';
    if (!options.inbound || !phoneNumberId) return { error: UNANSWERED };
    const answer = await options.inbound.answer('vapi', {
      engineNumberId: phoneNumberId,
      from,
      engineCallId: textOf(call.id),
      mode: 'answer',
    });
    log.info(
      {
        vapiMessageType: 'assistant-request',
        engineCallId: call.id,
        answer: answer.kind,
        ...(answer.kind === 'decline' ? { reason: answer.reason } : { callId: answer.callId }),
      },
      'vapi inbound call',
    );
    if (answer.kind === 'decline') return { error: answer.message };
    const assistant = vapiTransientAssistant(
      { publicBaseUrl: options.publicBaseUrl ?? '', serverCredentialId: options.config.serverCredentialId },
      answer.request,
      answer.version,
    );
    return { assistant };
  }

  app.post(
    VAPI_SERVER_MESSAGES_PATH,
    {
      bodyLimit: VAPI_MESSAGE_BODY_LIMIT,
      schema: { hide: true, response: { 200: Acknowledged } },
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
      const message = serverMessageOf(request.body);
      if (!message) {
        throw invalidRequest('The body is not a Vapi server message: expected {"message": {"type": …}}.');
      }
      if (message.type === 'assistant-request') return answerAssistantRequest(message, request.log);
      const report = reportFromServerMessage(message, clock.now());
      if (!report) {
        request.log.debug({ vapiMessageType: message.type }, 'vapi server message ignored');
        return {};
      }
      const result = await reports.apply('vapi', report);
      request.log.info(
        { vapiMessageType: message.type, engineCallId: report.engineCallId, callId: report.callId, result },
        'vapi server message',
      );
      return {};
    },
  );
};
