/** Answers with JSON text made elsewhere (by the database), sent as it is. */
import type { FastifyReply } from 'fastify';

/**
 * Sends `text`, already JSON, with the JSON content type: Fastify then skips the route's response
 * serialiser, so whoever builds the text names every field the response schema allows, no more.
 */
export function sendJsonText(reply: FastifyReply, text: string) {
  return reply.type('application/json; charset=utf-8').send(text);
}
