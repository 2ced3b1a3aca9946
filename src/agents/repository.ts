import { type ColumnType, type Insertable, type Selectable, sql, type Updateable } from 'kysely';
import { type Executor, runPrepared } from '../core/db/database.js';
import type { UserStatus } from '../users/schemas.js';
import type { AgentConfig, AgentModel, AgentVoice, DraftConfig } from './config.js';
import type { AgentSettings } from './settings.js';

export interface AgentsTable {
  id: string;
  tenant_id: string;
  user_id: string;
  name: string;
  /** A credential: never logged. */
  webhook_id: string;
  draft_prompt: string;
  draft_welcome_message: string;
  draft_phone_number: string;
  published_version: number | null;
  /** Call controls (settings.ts); written as JSON text, read back parsed. */
  settings: ColumnType<AgentSettings, string, string>;
  /** What the draft's configuration sets (config.ts DraftConfig); written as JSON text, read back parsed. */
  config: ColumnType<DraftConfig, string | undefined, string>;
  created_at: Date;
  updated_at: Date;
  /** Soft deletion: the agent is gone from every route and its webhook; its calls stay readable. */
  deleted_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface AgentVersionsTable {
  tenant_id: string;
  agent_id: string;
  version: number;
  prompt: string;
  welcome_message: string;
  phone_number: string;
  /**
   * The frozen configuration, every field; `{}` for versions published before configurations
   * existed (read with the operator's defaults, what their calls used).
   */
  config: ColumnType<Partial<AgentConfig>, string, never>;
  published_at: Date;
}

export interface AgentDefaultsTable {
  tenant_id: string;
  /** Null: the operator's (AGENT_DEFAULT_VOICE). */
  voice: ColumnType<AgentVoice | null, string | null, string | null>;
  /** Null: the operator's (AGENT_DEFAULT_MODEL). */
  model: ColumnType<AgentModel | null, string | null, string | null>;
  updated_at: Date;
}

declare module '../core/db/database.js' {
  interface Tables {
    agent_defaults: AgentDefaultsTable;
    agents: AgentsTable;
    agent_versions: AgentVersionsTable;
  }
}

export type AgentRow = Selectable<AgentsTable>;

export type NewAgent = Omit<Insertable<AgentsTable>, 'deleted_at'>;

export async function insertAgent(db: Executor, row: NewAgent): Promise<AgentRow> {
  return db.insertInto('agents').values(row).returningAll().executeTakeFirstOrThrow();
}

/** A live agent of the tenant; `includeDeleted` also finds a soft-deleted one (DELETE's repeat). */
export async function findAgent(
  db: Executor,
  tenantId: string,
  agentId: string,
  options: { forUpdate?: boolean; includeDeleted?: boolean } = {},
) {
  let query = db.selectFrom('agents').selectAll().where('tenant_id', '=', tenantId).where('id', '=', agentId);
  if (!options.includeDeleted) query = query.where('deleted_at', 'is', null);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

/**
 * Operator API only: the tenant of a live agent (operator paths name no tenant), or of any agent
 * ever created with `{ deleted: 'include' }` (its calls outlive it).
 */
export async function findAgentTenant(
  db: Executor,
  agentId: string,
  options: { deleted?: 'include' } = {},
): Promise<string | undefined> {
  let query = db.selectFrom('agents').select('tenant_id').where('id', '=', agentId);
  if (options.deleted !== 'include') query = query.where('deleted_at', 'is', null);
  return (await query.executeTakeFirst())?.tenant_id;
}

export interface AgentListQuery {
  userId?: string;
  sortBy: 'created_at' | 'name';
  sortOrder: 'asc' | 'desc';
}

function liveAgents(db: Executor, tenantId: string, filter: AgentListQuery) {
  let query = db.selectFrom('agents').where('tenant_id', '=', tenantId).where('deleted_at', 'is', null);
  if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
  return query;
}

/** A page of the tenant's live agents with the total (count(*) over ()); ties broken by id. */
export async function listAgents(
  db: Executor,
  tenantId: string,
  filter: AgentListQuery,
  limit: number,
  offset: number,
) {
  return liveAgents(db, tenantId, filter)
    .selectAll()
    .select(sql<number>`count(*) over ()`.as('total'))
    .orderBy(filter.sortBy, filter.sortOrder)
    .orderBy('id', filter.sortOrder)
    .limit(limit)
    .offset(offset)
    .execute();
}

export async function countAgents(db: Executor, tenantId: string, filter: AgentListQuery): Promise<number> {
  const row = await liveAgents(db, tenantId, filter)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function markAgentDeleted(db: Executor, tenantId: string, agentId: string, at: Date) {
  await db
    .updateTable('agents')
    .set({ deleted_at: at, updated_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', agentId)
    .execute();
}

export async function updateAgent(
  db: Executor,
  tenantId: string,
  agentId: string,
  changes: Omit<Updateable<AgentsTable>, 'id' | 'tenant_id' | 'created_at'>,
): Promise<AgentRow | undefined> {
  return db
    .updateTable('agents')
    .set(changes)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', agentId)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

export async function insertAgentVersion(db: Executor, row: Insertable<AgentVersionsTable>): Promise<void> {
  await db.insertInto('agent_versions').values(row).execute();
}

/** One published version of a tenant's agent. */
export async function findAgentVersion(
  db: Executor,
  tenantId: string,
  agentId: string,
  version: number,
): Promise<Selectable<AgentVersionsTable> | undefined> {
  return db
    .selectFrom('agent_versions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('agent_id', '=', agentId)
    .where('version', '=', version)
    .executeTakeFirst();
}

/** An agent's published versions, newest first, with the total (count(*) over ()). */
export async function listAgentVersions(
  db: Executor,
  tenantId: string,
  agentId: string,
  limit: number,
  offset: number,
) {
  return db
    .selectFrom('agent_versions')
    .selectAll()
    .select(sql<number>`count(*) over ()`.as('total'))
    .where('tenant_id', '=', tenantId)
    .where('agent_id', '=', agentId)
    .orderBy('version', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

export async function countAgentVersions(db: Executor, tenantId: string, agentId: string): Promise<number> {
  const row = await db
    .selectFrom('agent_versions')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenant_id', '=', tenantId)
    .where('agent_id', '=', agentId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** What the webhook needs about an agent: the agent, its published version, its owner's state. */
export interface WebhookTarget {
  agent_id: string;
  tenant_id: string;
  user_id: string;
  published_version: number | null;
  /** Null while no version is published. */
  prompt: string | null;
  welcome_message: string | null;
  phone_number: string | null;
  owner_status: UserStatus;
  owner_deleted_at: Date | null;
  credit_balance_minutes: number;
  /** The tenant's wholesale wallet balance; null: the tenant is unmetered (docs/wallets.md). */
  wallet_balance_minutes: number | null;
  /** The operator suspended the tenant: no call is placed. */
  tenant_suspended: boolean;
}

/** Everything the webhook needs in one query, by the webhook id's unique index; a deleted agent has none. */
/** An agent's call target: its owner's standing and its published version (null when unpublished). */
const TARGET_SELECT = `
  SELECT a.id AS agent_id, a.tenant_id, a.user_id, a.published_version,
         v.prompt, v.welcome_message, v.phone_number,
         u.status AS owner_status, u.deleted_at AS owner_deleted_at, u.credit_balance_minutes,
         w.balance_minutes AS wallet_balance_minutes, t.suspended_at IS NOT NULL AS tenant_suspended
  FROM agents a
  JOIN tenants t ON t.id = a.tenant_id
  JOIN users u ON u.id = a.user_id AND u.tenant_id = a.tenant_id
  LEFT JOIN agent_versions v ON v.agent_id = a.id AND v.version = a.published_version
  LEFT JOIN tenant_wallets w ON w.tenant_id = a.tenant_id`;

export async function findWebhookTarget(db: Executor, webhookId: string): Promise<WebhookTarget | undefined> {
  const rows = await runPrepared<WebhookTarget>(db, {
    name: 'agents_webhook_target',
    text: `${TARGET_SELECT}
  WHERE a.webhook_id = $1 AND a.deleted_at IS NULL`,
    values: [webhookId],
  });
  return rows[0];
}

/** The same target by agent id, for POST /api/v1/calls: a deleted agent is absent. */
export async function findAgentTarget(
  db: Executor,
  tenantId: string,
  agentId: string,
): Promise<WebhookTarget | undefined> {
  const rows = await runPrepared<WebhookTarget>(db, {
    name: 'agents_call_target',
    text: `${TARGET_SELECT}
  WHERE a.id = $1 AND a.tenant_id = $2 AND a.deleted_at IS NULL`,
    values: [agentId, tenantId],
  });
  return rows[0];
}

/** The tenant's default voice and model, when it set any. */
export async function findAgentDefaults(db: Executor, tenantId: string) {
  return db.selectFrom('agent_defaults').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
}

export async function saveAgentDefaults(
  db: Executor,
  tenantId: string,
  values: { voice: AgentVoice | null; model: AgentModel | null },
  at: Date,
): Promise<void> {
  const row = {
    voice: values.voice ? JSON.stringify(values.voice) : null,
    model: values.model ? JSON.stringify(values.model) : null,
    updated_at: at,
  };
  await db
    .insertInto('agent_defaults')
    .values({ tenant_id: tenantId, ...row })
    .onConflict((oc) => oc.column('tenant_id').doUpdateSet(row))
    .execute();
}
