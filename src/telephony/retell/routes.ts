/**
 * POST /engines/retell/webhooks: Retell's call webhooks (`call_started`, `call_ended`,
 * `call_analyzed`) for the agents the adapter created (their webhook_url). Each is signed in
 * `x-retell-signature` (`v=<ms>,d=<hex HMAC-SHA256 of body + ms>`, keyed with the API key); the
 * retell-sdk verifier checks it over the exact bytes received, and refuses signatures older than
 * five minutes. A missing or bad signature is 401 and changes nothing. An event for an unknown or
 * finished call is acknowledged like any other (EngineReports decides), so Retell stops retrying.
 *
 * Not part of the partner API: hidden from the OpenAPI documents.
 */
import type { FastifyPluginAsync } from 'fastify';
import { verify } from 'retell-sdk';
import { type Clock, systemClock } from '../../core/clock.js';
import type { RetellConfig } from '../../core/config/config.js';
import { ApiError } from '../../core/errors.js';
import type { EngineReports } from '../port.js';
import { RETELL_WEBHOOK_PATH } from './adapter.js';
import { readRetellWebhook } from './events.js';

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
}> = async (fastify, { reports, config, clock = systemClock }) => {
  // The signature covers the bytes as sent, so this plugin's routes keep the body as a string
  // (whatever the content type) and parse it only once it is verified. Encapsulated: other
  // routes keep the app's parsers.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  fastify.post(
    RETELL_WEBHOOK_PATH,
    { bodyLimit: WEBHOOK_BODY_LIMIT, schema: { hide: true } },
    async (request, reply) => {
      const raw = typeof request.body === 'string' ? request.body : '';
      const signature = request.headers['x-retell-signature'];
      if (typeof signature !== 'string' || !(await verify(raw, config.apiKey, signature)))
        throw badSignature();

      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        throw new ApiError('invalid_request', 'The body is not JSON.');
      }
      const reading = readRetellWebhook(body, clock.now());
      if (!reading.ok) throw new ApiError('invalid_request', reading.problem);
      if (reading.report) {
        const outcome = await reports.apply('retell', reading.report);
        request.log.info(
          { event: reading.event, engineCallId: reading.report.engineCallId, outcome },
          'retell webhook',
        );
      }
      return reply.code(204).send();
    },
  );
};
