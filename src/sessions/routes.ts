/**
 * User sessions of the white-label dashboard (decisions.md §5): sign in with tenant, email and
 * password; the token then reads the user's own record. Wrong email and wrong password answer the
 * same 401 after the same work.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bearerToken } from '../core/auth.js';
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db.js';
import { ApiError } from '../core/errors.js';
import { newId, randomBase62, sha256Hex } from '../core/ids.js';
import { decoyPasswordHash, hashPassword, needsRehash, verifyPassword } from '../core/passwords.js';
import { DataEnvelope, Email, errorResponses, Timestamp } from '../core/schemas.js';
import { findLiveUserByEmail, replacePasswordHash } from '../users/repository.js';
import { UserListItem } from '../users/schemas.js';
import type { UserService } from '../users/service.js';
import { findActiveSession, insertSession } from './repository.js';

export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

const SignInBody = Type.Object(
  {
    tenant_id: Type.String({ minLength: 1, maxLength: 255 }),
    email: Email,
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

const SessionCreated = Type.Object(
  { token: Type.String(), user_id: Type.String(), expires_at: Timestamp },
  { additionalProperties: false },
);

const signInFailed = () => new ApiError('authentication_failed', 'The email or password is incorrect.');
const sessionInvalid = () => new ApiError('authentication_failed', 'A valid session token is required.');

export async function sessionRoutes(
  fastify: FastifyInstance,
  deps: { db: Db; clock: Clock; users: UserService; passwordHashMemoryKib: number },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { db, clock } = deps;

  app.post(
    '/sessions',
    {
      // Failed sign-ins are limited per tenant + email and per client IP (src/rate-limits): 429.
      config: { rateLimit: 'sign_in' },
      schema: {
        body: SignInBody,
        response: { 201: DataEnvelope(SessionCreated), ...errorResponses(401, 422, 429) },
      },
    },
    async (request, reply) => {
      const { tenant_id: tenantId, email, password } = request.body;
      const user = await findLiveUserByEmail(db, tenantId, email);
      const stored = user?.password_hash;
      const matches = await verifyPassword(
        password,
        stored ?? (await decoyPasswordHash(deps.passwordHashMemoryKib)),
      );
      if (!user || !stored || !matches || user.status === 'blocked') throw signInFailed();
      // The only moment the password is known: a legacy (scrypt) or weaker hash is replaced now.
      if (needsRehash(stored, deps.passwordHashMemoryKib)) {
        const stronger = await hashPassword(password, deps.passwordHashMemoryKib);
        await replacePasswordHash(db, tenantId, user.id, stored, stronger);
      }
      const now = clock.now();
      const token = `vps_${randomBase62(40)}`;
      const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
      await insertSession(db, {
        id: newId('ses'),
        tenant_id: tenantId,
        user_id: user.id,
        token_hash: sha256Hex(token),
        expires_at: expiresAt,
        revoked_at: null,
        created_at: now,
      });
      return reply.code(201).send({ data: { token, user_id: user.id, expires_at: expiresAt.toISOString() } });
    },
  );

  async function sessionOf(request: FastifyRequest) {
    const token = bearerToken(request);
    if (!token?.startsWith('vps_')) throw sessionInvalid();
    const session = await findActiveSession(db, sha256Hex(token), clock.now());
    if (!session || session.deleted_at || session.status === 'blocked') throw sessionInvalid();
    return session;
  }

  app.get(
    '/me',
    { schema: { response: { 200: DataEnvelope(UserListItem), ...errorResponses(401) } } },
    async (request) => {
      const session = await sessionOf(request);
      return { data: await deps.users.get(session.tenant_id, session.user_id) };
    },
  );
}
