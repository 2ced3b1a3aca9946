/**
 * User sessions of the white-label dashboard (/auth/v1): sign in, read the own record, sign out,
 * and reset a forgotten password by email. The rules are in ./service.ts.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { bearerToken } from '../core/auth.js';
import { DataEnvelope, errorResponses } from '../core/schemas.js';
import { UserListItem } from '../users/schemas.js';
import type { UserService } from '../users/service.js';
import {
  PasswordResetConfirmBody,
  PasswordResetDone,
  PasswordResetRequestBody,
  PasswordResetRequested,
  SessionCreated,
  SignInBody,
} from './schemas.js';
import type { SessionService } from './service.js';

const RESET_REQUESTED = 'If this email belongs to an account, a reset link valid for one hour is on its way.';

export async function sessionRoutes(
  fastify: FastifyInstance,
  deps: { sessions: SessionService; users: UserService },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { sessions } = deps;

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
      return reply.code(201).send({ data: await sessions.signIn(tenantId, email, password) });
    },
  );

  // Sign-out: the presented token stops working; the user's other sessions go on.
  app.delete(
    '/sessions',
    {
      schema: {
        response: {
          204: Type.Null({ description: 'Signed out: the presented session token no longer works.' }),
          ...errorResponses(401),
        },
      },
    },
    async (request, reply) => {
      await sessions.signOut(bearerToken(request));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/me',
    { schema: { response: { 200: DataEnvelope(UserListItem), ...errorResponses(401) } } },
    async (request) => {
      const session = await sessions.authenticate(bearerToken(request));
      return { data: await deps.users.get(session.tenant_id, session.user_id) };
    },
  );

  app.post(
    '/password-resets',
    {
      // Every request counts, per tenant + email and per client IP (src/rate-limits): 429.
      config: { rateLimit: 'password_reset' },
      schema: {
        body: PasswordResetRequestBody,
        response: { 202: DataEnvelope(PasswordResetRequested), ...errorResponses(422, 429) },
      },
    },
    async (request, reply) => {
      await sessions.requestPasswordReset(request.body.tenant_id, request.body.email);
      return reply.code(202).send({ data: { message: RESET_REQUESTED } });
    },
  );

  app.post(
    '/password-resets/confirm',
    {
      schema: {
        body: PasswordResetConfirmBody,
        response: { 200: DataEnvelope(PasswordResetDone), ...errorResponses(422) },
      },
    },
    async (request) => {
      return { data: await sessions.resetPassword(request.body.token, request.body.password) };
    },
  );
}
