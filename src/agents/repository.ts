import { type Selectable, sql } from 'kysely';
import { type Executor, runPrepared } from '../core/db.js';
import type { UserStatus } from '../users/schemas.js';

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
  created_at: Date;
  updated_at: Date;
}

export interface AgentVersionsTable {
  tenant_id: string;
  agent_id: string;
  version: number;
  prompt: string;
  welcome_message: string;
  phone_number: string;
  published_at: Date;
}

declare module '../core/db.js' {
  interface Tables {
    agents: AgentsTable;
    agent_versions: AgentVersionsTable;
  }
}

export type AgentRow = Selectable<AgentsTable>;

export async function insertAgent(db: Executor, row: AgentsTable): Promise<AgentRow> {
  return db.insertInto('agents').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findAgent(
  db: Executor,
  tenantId: string,
  agentId: string,
  options: { forUpdate?: boolean } = {},
) {
  let query = db.selectFrom('agents').selectAll().where('tenant_id', '=', tenantId).where('id', '=', agentId);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** Operator API only: the tenant of an agent (operator paths name no tenant). */
export async function findAgentTenant(db: Executor, agentId: string): Promise<string | undefined> {
  const row = await db.selectFrom('agents').select('tenant_id').where('id', '=', agentId).executeTakeFirst();
  return row?.tenant_id;
}

export async function updateAgent(
  db: Executor,
  tenantId: string,
  agentId: string,
  changes: Partial<Omit<AgentsTable, 'id' | 'tenant_id' | 'created_at'>>,
): Promise<AgentRow | undefined> {
  return db
    .updateTable('agents')
    .set(changes)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', agentId)
    .returningAll()
    .executeTakeFirst();
}

/** A tenant's agents, one page, each row with the total. */
export async function listAgents(
  db: Executor,
  tenantId: string,
  options: { sortBy: 'created_at' | 'name'; sortOrder: 'asc' | 'desc'; limit: number; offset: number },
) {
  const direction = options.sortOrder === 'asc' ? sql`ASC` : sql`DESC`;
  return db
    .selectFrom('agents')
    .selectAll()
    .select(sql<number>`count(*) over ()`.as('total'))
    .where('tenant_id', '=', tenantId)
    .orderBy(sql`${sql.ref(options.sortBy)} ${direction}, id ${direction}`)
    .limit(options.limit)
    .offset(options.offset)
    .execute();
}

export async function countAgents(db: Executor, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('agents')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function insertAgentVersion(db: Executor, row: AgentVersionsTable): Promise<void> {
  await db.insertInto('agent_versions').values(row).execute();
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
}

/** Everything the webhook needs in one query, by the webhook id's unique index. */
export async function findWebhookTarget(db: Executor, webhookId: string): Promise<WebhookTarget | undefined> {
  const rows = await runPrepared<WebhookTarget>(db, {
    name: 'agents_webhook_target',
    text: `
      SELECT a.id AS agent_id, a.tenant_id, a.user_id, a.published_version,
             v.prompt, v.welcome_message, v.phone_number,
             u.status AS owner_status, u.deleted_at AS owner_deleted_at, u.credit_balance_minutes
      FROM agents a
      JOIN users u ON u.id = a.user_id AND u.tenant_id = a.tenant_id
      LEFT JOIN agent_versions v ON v.agent_id = a.id AND v.version = a.published_version
      WHERE a.webhook_id = $1`,
    values: [webhookId],
  });
  return rows[0];
}
