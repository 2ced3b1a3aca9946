/**
 * Voice agents: an owner user, a name, a draft (prompt, welcome message, caller-ID number),
 * immutable published versions and call controls (settings). Calls only ever use the published
 * version; settings apply to calls placed after a change. The webhook id is the credential of
 * the agent's trigger URL; rotating it retires the old one at once. A deleted agent is gone from
 * every route and its webhook (its calls stay readable). The partner API and the operator API
 * both call this service, always naming the tenant.
 */
import { auditNothingChanged } from '../core/audit/context.js';
import { recordAudit, writeAudited } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import type { AgentCatalog } from '../core/config/agents.js';
import type { Db, Executor } from '../core/db/database.js';
import { listPage } from '../core/db/pagination.js';
import { ApiError, type FieldIssue, notFound, validationFailed } from '../core/errors.js';
import { type AnswerRecorder, recordAnswer } from '../core/idempotency/answer.js';
import type { IdempotencyStore } from '../core/idempotency/store.js';
import { newId, newWebhookId } from '../core/ids.js';
import { enqueueJob } from '../core/jobs/runner.js';
import type { PublishedAgentVersion } from '../telephony/port.js';
import { findUser } from '../users/repository.js';
import { agentChange } from './audit.js';
import { type AgentConfig, type AgentConfigInput, type ConfigDefaults, completeConfig } from './config.js';
import {
  canonicalJson,
  checkConfigInput,
  engineIssues,
  mergeConfig,
  type OutboundGuard,
} from './config-rules.js';
import { createAgentDefaults } from './defaults.js';
import {
  type AgentRow,
  countAgents,
  countAgentVersions,
  findAgent,
  findAgentTenant,
  findAgentVersion,
  insertAgent,
  insertAgentVersion,
  listAgents,
  listAgentVersions,
  markAgentDeleted,
  updateAgent,
} from './repository.js';
import type {
  Agent,
  AgentVersion,
  CreateAgentBody,
  DeletedAgent,
  EngineSyncPayload,
  ListAgentsQuery,
  ListVersionsQuery,
  UpdateAgentBody,
} from './schemas.js';
import { type AgentSettings, isKnownTimeZone } from './settings.js';

export function webhookUrl(publicBaseUrl: string, webhookId: string): string {
  return `${publicBaseUrl}/webhooks/agents/${webhookId}/trigger`;
}

/**
 * What the schema cannot say about settings. Equal `start` and `end` are refused: read as an
 * empty window no call would ever start, read as 24 hours it is ambiguous; a whole day is
 * `00:00`–`23:59`.
 */
export function checkSettings(settings: AgentSettings): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const hours = settings.calling_hours;
  if (hours && !isKnownTimeZone(hours.timezone)) {
    issues.push({ field: 'settings.calling_hours.timezone', issue: 'must be an IANA time zone name.' });
  }
  if (hours && hours.start === hours.end) {
    issues.push({ field: 'settings.calling_hours.end', issue: 'must differ from start.' });
  }
  return issues;
}

/** Whether publishing the draft would freeze a version equal to the published one. */
function sameVersion(
  current: { prompt: string; welcome_message: string; phone_number: string; config: Partial<AgentConfig> },
  draft: AgentRow,
  config: AgentConfig,
  operator: ConfigDefaults,
): boolean {
  return (
    current.prompt === draft.draft_prompt &&
    current.welcome_message === draft.draft_welcome_message &&
    current.phone_number === draft.draft_phone_number &&
    canonicalJson(completeConfig(current.config, operator)) === canonicalJson(config)
  );
}

/** Syncs a published version to the voice engine (TelephonyAdapter.syncAgentVersion). */
export const ENGINE_SYNC_QUEUE = 'agents.engine_sync';
/** About a day of back-off: a dial before the sync succeeds syncs the version itself. */
const ENGINE_SYNC_MAX_ATTEMPTS = 20;

/**
 * A published version as the voice engines receive it (TelephonyAdapter.syncAgentVersion), with
 * its frozen configuration; a version from before configurations existed gets `operatorDefaults`
 * (the operator's voice and model, what its calls used).
 */
export async function findPublishedVersion(
  db: Executor,
  tenantId: string,
  agentId: string,
  version: number,
  operatorDefaults: ConfigDefaults,
): Promise<PublishedAgentVersion | undefined> {
  const row = await findAgentVersion(db, tenantId, agentId, version);
  if (!row) return undefined;
  return {
    tenantId: row.tenant_id,
    agentId: row.agent_id,
    version: row.version,
    prompt: row.prompt,
    welcomeMessage: row.welcome_message,
    phoneNumber: row.phone_number,
    config: completeConfig(row.config, operatorDefaults),
  };
}

export function createAgentService(deps: {
  db: Db;
  clock: Clock;
  idempotency: IdempotencyStore;
  publicBaseUrl: string;
  /** What agents may use on the configured engine, and the operator's defaults. */
  catalog: AgentCatalog;
  /**
   * The voice engine keeps agents of its own (Retell): each publish queues the sync of the new
   * version (ENGINE_SYNC_QUEUE) in its transaction, so a publish is never lost to an engine outage.
   */
  syncPublishedVersions?: boolean;
  onQueued?: () => void;
  /** Where tool URLs may point (the event webhooks' guard, WEBHOOK_ALLOW_PRIVATE). */
  outbound: OutboundGuard;
  /**
   * The caller-ID rule (the phone numbers service): the issue with `phone_number` as an agent's
   * caller ID for the tenant, if any (a tenant holding numbers calls from one of them).
   */
  callerIdIssue?: (tenantId: string, phoneNumber: string) => Promise<FieldIssue | undefined>;
}) {
  const { db, clock, catalog } = deps;
  const defaults = createAgentDefaults({ db, clock, catalog });

  /** The configuration's issues beyond its schema; with `skip`, those of fields the schema let through. */
  const checkConfig = async (input: AgentConfigInput | undefined, skip?: (field: string) => boolean) =>
    input === undefined ? [] : checkConfigInput(input, deps.outbound, skip);

  async function validInput(
    settings: AgentSettings | undefined,
    config: AgentConfigInput | undefined,
    callerId?: { tenantId: string; phoneNumber: string | undefined },
  ) {
    const issues = [...(settings ? checkSettings(settings) : []), ...(await checkConfig(config))];
    if (callerId?.phoneNumber !== undefined) {
      const issue = await deps.callerIdIssue?.(callerId.tenantId, callerId.phoneNumber);
      if (issue) issues.push(issue);
    }
    if (issues.length > 0) throw validationFailed(issues);
  }

  const toAgent = (row: AgentRow, tenantDefaults: ConfigDefaults): Agent => ({
    id: row.id,
    user_id: row.user_id,
    name: row.name,
    phone_number: row.draft_phone_number,
    webhook_id: row.webhook_id,
    webhook_url: webhookUrl(deps.publicBaseUrl, row.webhook_id),
    draft: {
      prompt: row.draft_prompt,
      welcome_message: row.draft_welcome_message,
      config: completeConfig(row.config ?? {}, tenantDefaults),
    },
    published_version: row.published_version,
    settings: row.settings ?? {},
    created_at: row.created_at.toISOString(),
  });

  /** The agent as answered: its draft's configuration with the tenant's current defaults. */
  const answer = async (row: AgentRow, executor: Executor = db) =>
    toAgent(row, await defaults.resolve(row.tenant_id, executor));

  return {
    /** The tenant's default voice and model (GET/PUT agent-defaults, the console's form). */
    defaults,

    /** The configuration's issues beyond its schema, for a route that gathers every issue of a body. */
    checkConfig,

    /** A published version as the voice engines receive it, with its frozen configuration. */
    publishedVersion: (tenantId: string, agentId: string, version: number) =>
      findPublishedVersion(db, tenantId, agentId, version, defaults.operator),

    /** Operator paths name an agent but no tenant: the tenant of a live agent, or 404. */
    async tenantOf(agentId: string): Promise<string> {
      const tenantId = await findAgentTenant(db, agentId);
      if (!tenantId) throw notFound('Agent');
      return tenantId;
    },

    async list(tenantId: string, query: ListAgentsQuery) {
      const filter = { userId: query.user_id, sortBy: query.sort_by, sortOrder: query.sort_order };
      const tenantDefaults = await defaults.resolve(tenantId);
      return listPage(
        query,
        (limit, offset) => listAgents(db, tenantId, filter, limit, offset),
        () => countAgents(db, tenantId, filter),
        (row) => toAgent(row, tenantDefaults),
      );
    },

    /**
     * Creates an unpublished agent owned by a live user of the tenant; with a recorder, its
     * answer is stored in the same transaction.
     */
    async create(tenantId: string, input: CreateAgentBody, recorder?: AnswerRecorder<Agent>): Promise<Agent> {
      await validInput(input.settings, input.config, { tenantId, phoneNumber: input.phone_number });
      return db.transaction().execute(async (tx) => {
        const owner = await findUser(tx, tenantId, input.user_id);
        if (!owner || owner.deleted_at) throw notFound('User');
        const tenantDefaults = await defaults.resolve(tenantId, tx);
        const now = clock.now();
        const row = await insertAgent(tx, {
          id: newId('agt'),
          tenant_id: tenantId,
          user_id: owner.id,
          name: input.name,
          webhook_id: newWebhookId(),
          draft_prompt: input.prompt,
          draft_welcome_message: input.welcome_message,
          draft_phone_number: input.phone_number,
          published_version: null,
          settings: JSON.stringify(input.settings ?? {}),
          config: JSON.stringify(input.config ? mergeConfig({}, input.config, tenantDefaults) : {}),
          created_at: now,
          updated_at: now,
        });
        const agent = toAgent(row, tenantDefaults);
        await recordAudit(tx, agentChange('agent.created', tenantId, row.id, Object.keys(input), now));
        await recordAnswer(deps.idempotency, tx, recorder, agent);
        return agent;
      });
    },

    async get(tenantId: string, agentId: string): Promise<Agent> {
      const row = await findAgent(db, tenantId, agentId);
      if (!row) throw notFound('Agent');
      return answer(row);
    },

    /**
     * Changes the name (at once), the draft (used only after the next publish) and the settings
     * (for calls placed from now on; the given object replaces the whole settings).
     */
    async update(tenantId: string, agentId: string, input: UpdateAgentBody): Promise<Agent> {
      await validInput(input.settings, input.config, { tenantId, phoneNumber: input.phone_number });
      const changes = {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.prompt !== undefined ? { draft_prompt: input.prompt } : {}),
        ...(input.welcome_message !== undefined ? { draft_welcome_message: input.welcome_message } : {}),
        ...(input.phone_number !== undefined ? { draft_phone_number: input.phone_number } : {}),
        ...(input.settings !== undefined ? { settings: JSON.stringify(input.settings) } : {}),
        updated_at: clock.now(),
      };
      const config = input.config;
      const entry = agentChange('agent.updated', tenantId, agentId, Object.keys(input), changes.updated_at);
      if (config === undefined) {
        const row = await writeAudited(
          db,
          (executor) => updateAgent(executor, tenantId, agentId, changes),
          (updated) => updated && entry,
        );
        if (!row) throw notFound('Agent');
        return answer(row);
      }
      // The configuration merges into the draft's: read and write it under the row's lock.
      return db.transaction().execute(async (tx) => {
        const current = await findAgent(tx, tenantId, agentId, { forUpdate: true });
        if (!current) throw notFound('Agent');
        const tenantDefaults = await defaults.resolve(tenantId, tx);
        const merged = mergeConfig(current.config ?? {}, config, tenantDefaults);
        const row = await updateAgent(tx, tenantId, agentId, { ...changes, config: JSON.stringify(merged) });
        if (!row) throw notFound('Agent');
        await recordAudit(tx, entry);
        return toAgent(row, tenantDefaults);
      });
    },

    /**
     * Freezes the draft (prompt, welcome message, number, configuration with its defaults filled)
     * as the next version and makes it the one calls use. Refused, with nothing saved: a
     * configuration the voice engine cannot run (422 naming every field), a draft identical to
     * the published version (409).
     */
    async publish(tenantId: string, agentId: string): Promise<Agent> {
      const { row, tenantDefaults } = await db.transaction().execute(async (tx) => {
        const agent = await findAgent(tx, tenantId, agentId, { forUpdate: true });
        if (!agent) throw notFound('Agent');
        const tenantDefaults = await defaults.resolve(tenantId, tx);
        const config = completeConfig(agent.config ?? {}, tenantDefaults);
        const issues = engineIssues(config, catalog);
        if (issues.length > 0) throw validationFailed(issues);
        if (agent.published_version !== null) {
          const current = await findAgentVersion(tx, tenantId, agentId, agent.published_version);
          if (current && sameVersion(current, agent, config, defaults.operator)) {
            throw new ApiError(
              'conflict',
              `The draft is identical to published version ${agent.published_version}; change the prompt, welcome message, phone number or configuration before publishing.`,
            );
          }
        }
        const version = (agent.published_version ?? 0) + 1;
        const now = clock.now();
        await insertAgentVersion(tx, {
          tenant_id: tenantId,
          agent_id: agentId,
          version,
          prompt: agent.draft_prompt,
          welcome_message: agent.draft_welcome_message,
          phone_number: agent.draft_phone_number,
          config: JSON.stringify(config),
          published_at: now,
        });
        if (deps.syncPublishedVersions) {
          await enqueueJob(tx, {
            queue: ENGINE_SYNC_QUEUE,
            tenantId,
            payload: { tenantId, agentId, version } satisfies EngineSyncPayload,
            runAt: now,
            maxAttempts: ENGINE_SYNC_MAX_ATTEMPTS,
          });
        }
        const row = await updateAgent(tx, tenantId, agentId, { published_version: version, updated_at: now });
        await recordAudit(tx, agentChange('agent.published', tenantId, agentId, ['published_version'], now));
        return { row, tenantDefaults };
      });
      if (!row) throw notFound('Agent');
      if (deps.syncPublishedVersions) deps.onQueued?.();
      return toAgent(row, tenantDefaults);
    },

    /** The agent's published versions, newest first. */
    async versions(tenantId: string, agentId: string, query: ListVersionsQuery) {
      if (!(await findAgent(db, tenantId, agentId))) throw notFound('Agent');
      return listPage(
        query,
        (limit, offset) => listAgentVersions(db, tenantId, agentId, limit, offset),
        () => countAgentVersions(db, tenantId, agentId),
        (row): AgentVersion => ({
          version: row.version,
          prompt: row.prompt,
          welcome_message: row.welcome_message,
          phone_number: row.phone_number,
          config: completeConfig(row.config, defaults.operator),
          published_at: row.published_at.toISOString(),
        }),
      );
    },

    /** Replaces the webhook id; the old URL answers 404 from the moment this commits. */
    async rotateWebhook(tenantId: string, agentId: string): Promise<Agent> {
      const now = clock.now();
      const row = await writeAudited(
        db,
        (executor) =>
          updateAgent(executor, tenantId, agentId, { webhook_id: newWebhookId(), updated_at: now }),
        (updated) => updated && agentChange('agent.webhook_rotated', tenantId, agentId, ['webhook_id'], now),
      );
      if (!row) throw notFound('Agent');
      return answer(row);
    },

    /**
     * Soft-deletes the agent: its webhook answers 404 from the moment this commits (the guarded
     * call insert requires a live agent). Repeating it answers the same tombstone.
     */
    async remove(tenantId: string, agentId: string): Promise<DeletedAgent> {
      return db.transaction().execute(async (tx) => {
        const agent = await findAgent(tx, tenantId, agentId, { forUpdate: true, includeDeleted: true });
        if (!agent) throw notFound('Agent');
        if (agent.deleted_at) {
          auditNothingChanged();
          return { id: agent.id, deleted_at: agent.deleted_at.toISOString() };
        }
        const at = clock.now();
        await markAgentDeleted(tx, tenantId, agentId, at);
        await recordAudit(tx, agentChange('agent.deleted', tenantId, agentId, [], at));
        return { id: agent.id, deleted_at: at.toISOString() };
      });
    },
  };
}

export type AgentService = ReturnType<typeof createAgentService>;
