/**
 * User sessions of the white-label dashboard (/auth/v1): sign in, read the own record, sign out,
 * and reset a forgotten password by email. The rules are in ./service.ts.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { bearerToken } from '../core/http/auth.js';
import { DataEnvelope, errorResponses } from '../core/http/schemas.js';
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

/** In the partner document under one tag: the calls a partner's own dashboard makes for its users. */
const TAGS = ['User sessions'];
/** The user's session token (POST /sessions), not an API key. */
const SIGNED_IN = [{ userSession: [] }];
/** Before signing in there is no credential to present. */
const PUBLIC: [] = [];
/** What every body-carrying route can answer besides its own refusals. */
const BODY_ERRORS = [400, 413, 415, 422, 500, 503] as const;

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
        operationId: 'signIn',
        summary: 'Sign a user in',
        description:
          'Opens a 7-day session for a user of the tenant with their email and password. A wrong email and a wrong password get the same 401; blocked and deleted users cannot sign in. Failed attempts are limited per tenant and email and per client address (429).',
        tags: TAGS,
        security: PUBLIC,
        body: SignInBody,
        response: {
          201: DataEnvelope(SessionCreated, 'Signed in: the session token and when it expires.'),
          ...errorResponses(...BODY_ERRORS, [401, ['authentication_failed']], 429),
        },
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
        operationId: 'signOut',
        summary: 'Sign out',
        description: 'Ends the presented session; the user’s other sessions go on.',
        tags: TAGS,
        security: SIGNED_IN,
        response: {
          204: Type.Null({ description: 'Signed out: the presented session token no longer works.' }),
          // A DELETE may carry a body, and is parsed like any other (400, 413, 415).
          ...errorResponses(400, [401, ['authentication_failed']], 413, 415, 500, 503),
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
    {
      schema: {
        operationId: 'getSignedInUser',
        summary: 'Get the signed-in user',
        description: 'The user of the presented session, as GET /api/v1/users/{id} shows it.',
        tags: TAGS,
        security: SIGNED_IN,
        response: {
          200: DataEnvelope(UserListItem, 'The signed-in user.'),
          ...errorResponses([401, ['authentication_failed']], 500, 503),
        },
      },
    },
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
        operationId: 'requestPasswordReset',
        summary: 'Request a password reset email',
        description:
          'Emails the user a single-use reset link valid for one hour, through the tenant’s own SMTP settings and in its brand. The link opens the tenant’s client portal, `<portal_url>/reset-password#token=vpr_…` (its verified custom domain, else `/portal/{slug}` on this host), where the user chooses the new password; the token is in the fragment, so no server log or Referer sees it. The answer is the same whether or not the email belongs to an account. Every request counts toward a limit per tenant and email and per client address (429).',
        tags: TAGS,
        security: PUBLIC,
        body: PasswordResetRequestBody,
        response: {
          202: DataEnvelope(PasswordResetRequested, 'Accepted: an email goes out if the account exists.'),
          ...errorResponses(...BODY_ERRORS, 429),
        },
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
        operationId: 'confirmPasswordReset',
        summary: 'Set a new password with a reset token',
        description:
          'Sets the new password and signs the user out everywhere. The client portal’s reset page does this with the emailed link’s token; a dashboard of your own can too, reading the token from the link’s fragment (`#token=`) or from `{{reset_token}}` in its own copy of the email template. A token that is used, expired, unknown, or whose user was blocked or deleted since is 422.',
        tags: TAGS,
        security: PUBLIC,
        body: PasswordResetConfirmBody,
        response: {
          200: DataEnvelope(PasswordResetDone, 'The new password is set.'),
          ...errorResponses(...BODY_ERRORS),
        },
      },
    },
    async (request) => {
      return { data: await sessions.resetPassword(request.body.token, request.body.password) };
    },
  );
}
