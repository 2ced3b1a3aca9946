/**
 * Retell's callbacks, each signed in `x-retell-signature` (`v=<ms>,d=<hex HMAC-SHA256 of body +
 * ms>`, keyed with the API key); the retell-sdk verifier checks it over the exact bytes received,
 * and refuses signatures older than five minutes. A missing or bad signature is 401 and changes
 * nothing.
 *
 * - POST /engines/retell/webhooks: the call webhooks (`call_started`, `call_ended`,
 *   `call_analyzed`) of the agents the adapter created (their webhook_url). An event for an
 *   unknown or finished call is acknowledged like any other (EngineReports decides), so Retell
 *   stops retrying. An inbound call's first event stores it (inbound.ts).
 * - POST /engines/retell/inbound: `call_inbound`, for the imported numbers (inbound.ts).
 *
 * Not part of the partner API: hidden from the OpenAPI documents.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { verify } from 'retell-sdk';
import { type Clock, systemClock } from '../../core/clock.js';
import type { RetellConfig } from '../../core/config/config.js';
import { ApiError } from '../../core/errors.js';
import {
  type EngineReport,
  type EngineReports,
  type InboundCalls,
  type PublishedAgentVersion,
  TelephonyError,
} from '../port.js';
import { RETELL_INBOUND_PATH, RETELL_WEBHOOK_PATH } from './adapter.js';
import { readRetellWebhook } from './events.js';
import { callInboundAnswer, inboundCallOf, readCallInbound } from './inbound.js';

/**
 * A call_ended carries the whole call: the transcript, its word-level timings and tool calls. A
 * long call is well over the app's 1 MiB default (as Vapi's end-of-call-report, vapi/routes.ts).
 */
const WEBHOOK_BODY_LIMIT = 8 * 1024 * 1024;

const badSignature = () =>
  new ApiError(
    'authentication_failed',
    'The x-retell-signature header is missing or does not match the body.',
  );

export const retellRoutes: FastifyPluginAsync<{
  reports: EngineReports;
  config: RetellConfig;
  /** Stands in for times a webhook leaves out; the system clock by default. */
  clock?: Clock;
  /** Who answers the imported numbers' inbound calls; without it they are declined. */
  inbound?: InboundCalls;
  /** The Retell agent and version of a published version (the adapter's `inboundAgentOf`). */
  agentOf?: (version: PublishedAgentVersion) => Promise<{ agentId: string; version: number }>;
}> = async (fastify, { reports, config, clock = systemClock, inbound, agentOf }) => {
  // The signature covers the bytes as sent, so this plugin's routes keep the body as a string
  // (whatever the content type) and parse it only once it is verified. Encapsulated: other
  // routes keep the app's parsers.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  /** The body, once its signature is verified. */
  async function verifiedBody(request: FastifyRequest): Promise<unknown> {
    const raw = typeof request.body === 'string' ? request.body : '';
    const signature = request.headers['x-retell-signature'];
    if (typeof signature !== 'string' || !(await verify(raw, config.apiKey, signature))) throw badSignature();
    try {
      return JSON.parse(raw);
    } catch {
      throw new ApiError('invalid_request', 'The body is not JSON.');
    }
  }

  /**
   * An inbound call's report that found no call: the call is stored now (once per Retell call id,
   * answered by the number's agent as it stands), then the report applied to it.
   */
  async function storeInbound(call: unknown, report: EngineReport): Promise<'applied' | 'ignored'> {
    const caller = inboundCallOf(call);
    if (!caller || !inbound?.started || report.kind === 'analyzed') return 'ignored';
    const startedAt = report.kind === 'started' ? report.startedAt : (report.startedAt ?? report.endedAt);
    const callId = await inbound.started('retell', {
      engineNumberId: caller.to,
      from: caller.from,
      engineCallId: report.engineCallId,
      startedAt,
      mode: 'decide',
    });
    if (!callId) return 'ignored';
    return reports.apply('retell', { ...report, callId });
  }

  fastify.post(
    RETELL_WEBHOOK_PATH,
    { bodyLimit: WEBHOOK_BODY_LIMIT, schema: { hide: true } },
    async (request, reply) => {
      const body = await verifiedBody(request);
      const reading = readRetellWebhook(body, clock.now());
      if (!reading.ok) throw new ApiError('invalid_request', reading.problem);
      if (reading.report) {
        let outcome = await reports.apply('retell', reading.report);
        if (outcome === 'ignored' && reading.report.callId === undefined) {
          outcome = await storeInbound((body as { call?: unknown }).call, reading.report);
        }
        request.log.info(
          { event: reading.event, engineCallId: reading.report.engineCallId, outcome },
          'retell webhook',
        );
      }
      return reply.code(204).send();
    },
  );

  fastify.post(RETELL_INBOUND_PATH, { schema: { hide: true } }, async (request) => {
    const reading = readCallInbound(await verifiedBody(request));
    if (!reading.ok) throw new ApiError('invalid_request', reading.problem);
    if (!inbound || !agentOf) return { call_inbound: {} };
    const answer = await inbound.answer('retell', {
      engineNumberId: reading.to,
      from: reading.from,
      mode: 'decide',
    });
    request.log.info(
      { answer: answer.kind, ...(answer.kind === 'decline' ? { reason: answer.reason } : {}) },
      'retell inbound call',
    );
    // The version could not be synced to Retell: a 503 makes Retell ask again (up to three times).
    return callInboundAnswer(answer, reading.from, agentOf).catch((error: unknown) => {
      if (!(error instanceof TelephonyError)) throw error;
      throw new ApiError('service_unavailable', `Retell could not be asked: ${error.message}`);
    });
  });
};
