/** Partner routes: /api/v1/agents (platform contract §1). */
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
import { answerRecorder, locatedAnswer, sendAnswer } from '../core/idempotency/answer.js';
import { refuseWithEveryIssue } from './body-issues.js';
import {
  Agent,
  AgentDefaults,
  AgentDefaultsBody,
  AgentVersion,
  agentIdExample,
  CreateAgentBody,
  DeletedAgent,
  ListAgentsQuery,
  ListVersionsQuery,
  UpdateAgentBody,
} from './schemas.js';
import type { AgentService } from './service.js';

const AgentIdParam = resourceIdParam('The agent’s id.', agentIdExample);

/** The 201 of POST /agents: the created agent, where it lives, and whether this is a replay. */
const AgentCreatedResponse = {
  ...DataEnvelope(
    Agent,
    'The agent was created (or, with Idempotent-Replayed, the original answer is replayed).',
  ),
  headers: {
    Location: Type.String({
      format: 'uri',
      description: 'URL of the new agent (GET /api/v1/agents/{id}).',
      examples: [`https://api.example.com/api/v1/agents/${agentIdExample}`],
    }),
    'Idempotent-Replayed': Type.Literal('true', {
      description:
        'Present when this answer is the stored answer of an earlier request with the same Idempotency-Key.',
    }),
  },
};

const theAgent = (description: string) => ({
  200: DataEnvelope(Agent, description),
  ...errorResponses(...PARTNER_ERRORS, 404),
});

export async function agentRoutes(
  fastify: FastifyInstance,
  { agents, publicBaseUrl }: { agents: AgentService; publicBaseUrl: string },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  const created = locatedAnswer<Agent>(201, publicBaseUrl, 'agents');
  const everyIssue = refuseWithEveryIssue(agents);

  app.get(
    '/agents',
    {
      config: { scope: 'agents:read' },
      schema: {
        operationId: 'listAgents',
        summary: 'List agents',
        description:
          'Agents of the caller’s tenant (deleted ones excluded), newest first by default. An unknown `user_id` gives an empty page.',
        tags: ['Agents'],
        querystring: ListAgentsQuery,
        response: { 200: ListEnvelope(Agent, 'A page of agents.'), ...errorResponses(...PARTNER_ERRORS) },
      },
    },
    async (request) => agents.list(tenantOf(request), request.query),
  );

  app.post(
    '/agents',
    {
      config: { scope: 'agents:write', idempotent: true },
      attachValidation: true,
      preHandler: everyIssue,
      schema: {
        operationId: 'createAgent',
        summary: 'Create an agent',
        description:
          'Creates an unpublished agent owned by a user of the caller’s tenant (404 when no such live user). Publish it before triggering calls.',
        tags: ['Agents'],
        headers: IdempotencyKeyHeader,
        body: CreateAgentBody,
        response: { 201: AgentCreatedResponse, ...errorResponses(...PARTNER_ERRORS, 404, 409) },
      },
    },
    async (request, reply) => {
      const recorder = answerRecorder(request.idempotency, created);
      const agent = await agents.create(tenantOf(request), request.body, recorder);
      return sendAnswer(reply, created(agent));
    },
  );

  app.get(
    '/agents/:id',
    {
      config: { scope: 'agents:read' },
      schema: {
        operationId: 'getAgent',
        summary: 'Get an agent',
        description: 'The agent: its draft, published version, webhook URL and settings.',
        tags: ['Agents'],
        params: AgentIdParam,
        response: theAgent('The agent.'),
      },
    },
    async (request) => ({ data: await agents.get(tenantOf(request), request.params.id) }),
  );

  app.patch(
    '/agents/:id',
    {
      config: { scope: 'agents:write' },
      attachValidation: true,
      preHandler: everyIssue,
      schema: {
        operationId: 'updateAgent',
        summary: 'Update an agent',
        description:
          'Changes the name at once, the draft (used from the next publish; published versions never change) and the settings. ' +
          '`settings` replaces the whole settings object and applies to calls placed from now on; `{}` clears it. ' +
          '`config` merges into the draft’s configuration field by field (`model` and `analysis` key by key); `null` sends `voice` or `model` back to the default.',
        tags: ['Agents'],
        params: AgentIdParam,
        body: UpdateAgentBody,
        response: theAgent('The agent after the change.'),
      },
    },
    async (request) => ({
      data: await agents.update(tenantOf(request), request.params.id, request.body),
    }),
  );

  app.post(
    '/agents/:id/publish',
    {
      config: { scope: 'agents:write' },
      schema: {
        operationId: 'publishAgent',
        summary: 'Publish an agent',
        description:
          'Freezes the draft (prompt, welcome message, phone number and configuration, its defaults filled) as the next version (n+1); calls placed from now on use it. ' +
          '422 `validation_failed` names every configuration field the voice engine cannot run (nothing is saved); ' +
          '409 `conflict` when the draft is identical to the published version.',
        tags: ['Agents'],
        params: AgentIdParam,
        response: {
          200: DataEnvelope(Agent, 'The agent with its new published_version.'),
          ...errorResponses(...PARTNER_ERRORS, 404, 409),
        },
      },
    },
    async (request) => ({ data: await agents.publish(tenantOf(request), request.params.id) }),
  );

  app.get(
    '/agents/:id/versions',
    {
      config: { scope: 'agents:read' },
      schema: {
        operationId: 'listAgentVersions',
        summary: 'List an agent’s versions',
        description: 'The immutable published versions of the agent, newest first.',
        tags: ['Agents'],
        params: AgentIdParam,
        querystring: ListVersionsQuery,
        response: {
          200: ListEnvelope(AgentVersion, 'A page of versions.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => agents.versions(tenantOf(request), request.params.id, request.query),
  );

  app.post(
    '/agents/:id/rotate-webhook',
    {
      config: { scope: 'agents:write' },
      schema: {
        operationId: 'rotateAgentWebhook',
        summary: 'Rotate an agent’s webhook URL',
        description: 'Gives the agent a new webhook_url; the old one answers 404 from now on.',
        tags: ['Agents'],
        params: AgentIdParam,
        response: theAgent('The agent with its new webhook_url.'),
      },
    },
    async (request) => ({ data: await agents.rotateWebhook(tenantOf(request), request.params.id) }),
  );

  app.delete(
    '/agents/:id',
    {
      config: { scope: 'agents:write' },
      schema: {
        operationId: 'deleteAgent',
        summary: 'Delete an agent',
        description:
          'Soft-deletes the agent: every agent route answers 404 for it and its webhook answers 404 at once; its calls stay readable. Repeating it answers the same tombstone.',
        tags: ['Agents'],
        params: AgentIdParam,
        response: {
          200: DataEnvelope(DeletedAgent, 'The tombstone, on the first call and on every repeat.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => ({ data: await agents.remove(tenantOf(request), request.params.id) }),
  );

  app.get(
    '/agent-defaults',
    {
      config: { scope: 'agents:read' },
      schema: {
        operationId: 'getAgentDefaults',
        summary: 'Get the default voice and model',
        description:
          'The tenant’s default voice and model for agents that set none (null: the operator’s), what they come to, and the voices, models, temperatures, durations and languages the voice engine allows.',
        tags: ['Agents'],
        response: { 200: DataEnvelope(AgentDefaults, 'The defaults.'), ...errorResponses(...PARTNER_ERRORS) },
      },
    },
    async (request) => ({ data: await agents.defaults.get(tenantOf(request)) }),
  );

  app.put(
    '/agent-defaults',
    {
      config: { scope: 'agents:write' },
      schema: {
        operationId: 'setAgentDefaults',
        summary: 'Set the default voice and model',
        description:
          'Replaces the tenant’s default voice and model (null: the operator’s). Agents that set no voice or model follow them in their draft and freeze them at their next publish; published versions never change. A voice provider or model the voice engine does not allow is 422.',
        tags: ['Agents'],
        body: AgentDefaultsBody,
        response: {
          200: DataEnvelope(AgentDefaults, 'The defaults after the change.'),
          ...errorResponses(...PARTNER_ERRORS),
        },
      },
    },
    async (request) => ({ data: await agents.defaults.set(tenantOf(request), request.body) }),
  );
}
