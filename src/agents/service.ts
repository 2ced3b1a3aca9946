/**
 * Voice agents: an owner user, a name, a draft (prompt, welcome message, caller-ID number) and
 * immutable published versions. Calls only ever use the published version. The webhook id is
 * the credential of the agent's trigger URL; rotating it retires the old one at once.
 */
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db.js';
import { notFound } from '../core/errors.js';
import { newId, newWebhookId } from '../core/ids.js';
import { listPage } from '../core/pagination.js';
import { findUser } from '../users/repository.js';
import {
  type AgentRow,
  countAgents,
  findAgent,
  findAgentTenant,
  insertAgent,
  insertAgentVersion,
  listAgents,
  updateAgent,
} from './repository.js';
import type { Agent, CreateAgentBody, ListAgentsQuery, UpdateAgentBody } from './schemas.js';

export function webhookUrl(publicBaseUrl: string, webhookId: string): string {
  return `${publicBaseUrl}/webhooks/agents/${webhookId}/trigger`;
}

export function createAgentService(deps: { db: Db; clock: Clock; publicBaseUrl: string }) {
  const { db, clock } = deps;

  const toAgent = (row: AgentRow): Agent => ({
    id: row.id,
    user_id: row.user_id,
    name: row.name,
    phone_number: row.draft_phone_number,
    webhook_id: row.webhook_id,
    webhook_url: webhookUrl(deps.publicBaseUrl, row.webhook_id),
    draft: { prompt: row.draft_prompt, welcome_message: row.draft_welcome_message },
    published_version: row.published_version,
    created_at: row.created_at.toISOString(),
  });

  async function tenantOfAgent(agentId: string): Promise<string> {
    const tenantId = await findAgentTenant(db, agentId);
    if (!tenantId) throw notFound('Agent');
    return tenantId;
  }

  return {
    toAgent,

    /** Creates an unpublished agent owned by a (not deleted) user of the tenant. */
    async create(tenantId: string, input: CreateAgentBody): Promise<Agent> {
      const owner = await findUser(db, tenantId, input.user_id);
      if (!owner || owner.deleted_at) throw notFound('User');
      const now = clock.now();
      const row = await insertAgent(db, {
        id: newId('agt'),
        tenant_id: tenantId,
        user_id: owner.id,
        name: input.name,
        webhook_id: newWebhookId(),
        draft_prompt: input.prompt,
        draft_welcome_message: input.welcome_message,
        draft_phone_number: input.phone_number,
        published_version: null,
        created_at: now,
        updated_at: now,
      });
      return toAgent(row);
    },

    /** One page of the tenant's agents (operator API). */
    async list(tenantId: string, query: ListAgentsQuery) {
      return listPage(
        query,
        (limit, offset) =>
          listAgents(db, tenantId, { sortBy: query.sort_by, sortOrder: query.sort_order, limit, offset }),
        () => countAgents(db, tenantId),
        toAgent,
      );
    },

    async get(agentId: string): Promise<Agent> {
      const row = await findAgent(db, await tenantOfAgent(agentId), agentId);
      if (!row) throw notFound('Agent');
      return toAgent(row);
    },

    /** Changes the name (at once) and the draft (used only after the next publish). */
    async update(agentId: string, input: UpdateAgentBody): Promise<Agent> {
      const tenantId = await tenantOfAgent(agentId);
      const row = await updateAgent(db, tenantId, agentId, {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.prompt !== undefined ? { draft_prompt: input.prompt } : {}),
        ...(input.welcome_message !== undefined ? { draft_welcome_message: input.welcome_message } : {}),
        ...(input.phone_number !== undefined ? { draft_phone_number: input.phone_number } : {}),
        updated_at: clock.now(),
      });
      if (!row) throw notFound('Agent');
      return toAgent(row);
    },

    /** Freezes the draft as the next version and makes it the one calls use. */
    async publish(agentId: string): Promise<Agent> {
      const tenantId = await tenantOfAgent(agentId);
      const row = await db.transaction().execute(async (tx) => {
        const agent = await findAgent(tx, tenantId, agentId, { forUpdate: true });
        if (!agent) throw notFound('Agent');
        const version = (agent.published_version ?? 0) + 1;
        const now = clock.now();
        await insertAgentVersion(tx, {
          tenant_id: tenantId,
          agent_id: agentId,
          version,
          prompt: agent.draft_prompt,
          welcome_message: agent.draft_welcome_message,
          phone_number: agent.draft_phone_number,
          published_at: now,
        });
        return updateAgent(tx, tenantId, agentId, { published_version: version, updated_at: now });
      });
      if (!row) throw notFound('Agent');
      return toAgent(row);
    },

    /** Replaces the webhook id; the old URL answers 404 from the moment this commits. */
    async rotateWebhook(agentId: string): Promise<Agent> {
      const tenantId = await tenantOfAgent(agentId);
      const row = await updateAgent(db, tenantId, agentId, {
        webhook_id: newWebhookId(),
        updated_at: clock.now(),
      });
      if (!row) throw notFound('Agent');
      return toAgent(row);
    },
  };
}

export type AgentService = ReturnType<typeof createAgentService>;
