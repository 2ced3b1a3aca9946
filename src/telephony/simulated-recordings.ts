/**
 * GET /simulator/recordings/{token}.wav: the recordings of the simulator's answered calls
 * (TELEPHONY=simulated only). The token is 32 random base62 characters written with the dial
 * (about 190 bits): the URL is the credential, like a voice engine's signed recording URL, so a
 * browser's audio player plays it without a header. The WAV is generated from the record's
 * conversation on each request (simulated-conversation.ts); nothing is stored but the script.
 * Not part of the partner API: hidden from the OpenAPI documents.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Db } from '../core/db/database.js';
import { ApiError } from '../core/errors.js';
import { recordingOf } from './simulated-conversation.js';

export const SIMULATED_RECORDINGS_PATH = '/simulator/recordings';

const TOKEN = /^[0-9A-Za-z]{32}$/;

const notFound = () => new ApiError('not_found', 'No recording at this address.');

export const simulatedRecordingRoutes: FastifyPluginAsync<{ db: Db }> = async (app, { db }) => {
  app.get(
    `${SIMULATED_RECORDINGS_PATH}/:file`,
    { schema: { hide: true, params: Type.Object({ file: Type.String({ maxLength: 64 }) }) } },
    async (request, reply) => {
      const { file } = request.params as { file: string };
      const token = file.endsWith('.wav') ? file.slice(0, -4) : '';
      if (!TOKEN.test(token)) throw notFound();
      const row = await db
        .selectFrom('telephony_simulated_dials')
        .select('conversation')
        .where('recording_token', '=', token)
        .executeTakeFirst();
      if (!row?.conversation) throw notFound();
      return reply
        .header('content-type', 'audio/wav')
        .header('cache-control', 'private, max-age=3600')
        .send(recordingOf(row.conversation.turns));
    },
  );
};
