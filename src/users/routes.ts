/** Partner routes: /api/v1/users. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { tenantOf } from '../core/http/auth.js';
import {
  DataEnvelope,
  errorResponses,
  IdempotencyKeyHeader,
  ListEnvelope,
  PARTNER_ERRORS,
  resourceIdParam,
} from '../core/http/schemas.js';
import {
  CreatedUser,
  CreateUserBody,
  DeletedUser,
  ListUsersQuery,
  UpdateUserBody,
  UserListItem,
} from './schemas.js';
import type { UserService } from './service.js';

/** The 201 of POST /users: the created user, where it lives, and whether this is a replay. */
const UserCreatedResponse = {
  ...DataEnvelope(
    CreatedUser,
    'The user was created (or, with Idempotent-Replayed, the original answer is replayed).',
  ),
  headers: {
    Location: Type.String({
      format: 'uri',
      description: 'URL of the new user (GET /api/v1/users/{id}).',
      examples: ['https://api.example.com/api/v1/users/usr_3kTmd8Qw1ZbXcV5nR7pL2yHs'],
    }),
    'Idempotent-Replayed': Type.Literal('true', {
      description:
        'Present when this answer is the stored answer of an earlier request with the same Idempotency-Key.',
    }),
  },
};

const UserIdParam = resourceIdParam('The user’s id.', 'usr_3kTmd8Qw1ZbXcV5nR7pL2yHs');

export async function userRoutes(fastify: FastifyInstance, { users }: { users: UserService }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/users',
    {
      config: { scope: 'users:read' },
      schema: {
        operationId: 'listUsers',
        summary: 'List users',
        description:
          'Users of the caller’s tenant, newest first by default. Page-based: rows inserted between fetches may shift items by one position.',
        tags: ['Users'],
        querystring: ListUsersQuery,
        response: {
          200: ListEnvelope(UserListItem, 'A page of users.'),
          ...errorResponses(...PARTNER_ERRORS),
        },
      },
    },
    async (request) => users.list(tenantOf(request), request.query),
  );

  app.get(
    '/users/:id',
    {
      config: { scope: 'users:read' },
      schema: {
        operationId: 'getUser',
        summary: 'Get a user',
        description: 'One user of the caller’s tenant (the target of the Location header of POST /users).',
        tags: ['Users'],
        params: UserIdParam,
        response: { 200: DataEnvelope(UserListItem, 'The user.'), ...errorResponses(...PARTNER_ERRORS, 404) },
      },
    },
    async (request) => ({ data: await users.get(tenantOf(request), request.params.id) }),
  );

  app.post(
    '/users',
    {
      config: { scope: 'users:write', idempotent: true },
      schema: {
        operationId: 'createUser',
        summary: 'Create a user',
        description:
          'Provisions an active user in the caller’s tenant. Sends a welcome email when the tenant has an email provider configured.',
        tags: ['Users'],
        headers: IdempotencyKeyHeader,
        body: CreateUserBody,
        response: { 201: UserCreatedResponse, ...errorResponses(...PARTNER_ERRORS, 409) },
      },
    },
    async (request, reply) => {
      const { user, location } = await users.create(tenantOf(request), request.body, request.idempotency);
      return reply.code(201).header('location', location).send({ data: user });
    },
  );

  app.patch(
    '/users/:id',
    {
      config: { scope: 'users:write' },
      schema: {
        operationId: 'updateUser',
        summary: 'Update a user',
        description:
          'Changes the name, email or phone of a user of the caller’s tenant; fields left out keep their value, `phone: null` removes the number. An email another live user of the tenant has is 409. Repeating the same request changes nothing more.',
        tags: ['Users'],
        params: UserIdParam,
        body: UpdateUserBody,
        response: {
          200: DataEnvelope(UserListItem, 'The user after the change.'),
          ...errorResponses(...PARTNER_ERRORS, 404, 409),
        },
      },
    },
    async (request) => ({ data: await users.update(tenantOf(request), request.params.id, request.body) }),
  );

  app.delete(
    '/users/:id',
    {
      config: { scope: 'users:write' },
      schema: {
        operationId: 'deleteUser',
        summary: 'Delete a user',
        description:
          'Soft-deletes the user: revokes its sessions, removes its memberships, cancels its subscriptions and frees its email. Repeating it answers the same tombstone.',
        tags: ['Users'],
        params: UserIdParam,
        response: {
          200: DataEnvelope(DeletedUser, 'The tombstone, on the first call and on every repeat.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => ({ data: await users.remove(tenantOf(request), request.params.id) }),
  );
}
