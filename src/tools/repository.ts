/** The tools_secrets table: one row per tenant that has a tools secret. */
import type { Selectable } from 'kysely';
import { type Executor, runPrepared } from '../core/db/database.js';

export interface ToolsSecretsTable {
  tenant_id: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  rotated_at: Date;
}

declare module '../core/db/database.js' {
  interface Tables {
    tools_secrets: ToolsSecretsTable;
  }
}

export type ToolsSecretRow = Selectable<ToolsSecretsTable>;

export async function findToolsSecret(db: Executor, tenantId: string): Promise<ToolsSecretRow | undefined> {
  return db.selectFrom('tools_secrets').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
}

/** The tenant's row, locked until the transaction ends (a rotation reads then replaces it). */
export async function lockToolsSecret(db: Executor, tenantId: string): Promise<ToolsSecretRow | undefined> {
  return db
    .selectFrom('tools_secrets')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .forUpdate()
    .executeTakeFirst();
}

/** The tenant's first tools secret; false when another request stored one first. */
export async function insertToolsSecret(db: Executor, row: ToolsSecretsTable): Promise<boolean> {
  const inserted = await db
    .insertInto('tools_secrets')
    .values(row)
    .onConflict((conflict) => conflict.column('tenant_id').doNothing())
    .returning('tenant_id')
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function updateToolsSecret(db: Executor, row: ToolsSecretsTable): Promise<void> {
  await db
    .updateTable('tools_secrets')
    .set({
      secret_sealed: row.secret_sealed,
      previous_secret_sealed: row.previous_secret_sealed,
      previous_secret_expires_at: row.previous_secret_expires_at,
      rotated_at: row.rotated_at,
    })
    .where('tenant_id', '=', row.tenant_id)
    .execute();
}

/** What running a tool needs of its call, in one statement: the call, its version's tools, the tenant's secret. */
export interface ToolCallContext {
  id: string;
  tenant_id: string;
  engine: string | null;
  agent_id: string | null;
  agent_version: number | null;
  /** The version's `config -> 'tools'` (null: no such version, or no tools). */
  tools: unknown;
  /** The tenant's tools secret row; null when it has none. */
  secret: ToolsSecretRow | null;
}

/**
 * Fast path (prepared; one indexed read per table and call): every tool call of every engine asks
 * it, a turn's calls together. One context per key, in order; undefined for an unknown call or one
 * of another tenant.
 */
export async function findToolCallContexts(
  db: Executor,
  keys: { tenantId: string; callId: string }[],
): Promise<(ToolCallContext | undefined)[]> {
  const rows = await runPrepared<
    Omit<ToolCallContext, 'secret'> & {
      secret_sealed: string | null;
      previous_secret_sealed: string | null;
      previous_secret_expires_at: Date | null;
      rotated_at: Date | null;
    }
  >(db, {
    name: 'tool_call_contexts',
    text: `SELECT c.id, c.tenant_id, c.engine, c.agent_id, c.agent_version, v.config -> 'tools' AS tools,
        s.secret_sealed, s.previous_secret_sealed, s.previous_secret_expires_at, s.rotated_at
      FROM calls c
      LEFT JOIN agent_versions v
        ON v.tenant_id = c.tenant_id AND v.agent_id = c.agent_id AND v.version = c.agent_version
      LEFT JOIN tools_secrets s ON s.tenant_id = c.tenant_id
      WHERE c.id = ANY($1::text[])`,
    values: [keys.map((key) => key.callId)],
  });
  const byCall = new Map<string, ToolCallContext>();
  for (const row of rows) {
    const { secret_sealed, previous_secret_sealed, previous_secret_expires_at, rotated_at, ...call } = row;
    const secret =
      secret_sealed !== null && rotated_at !== null
        ? {
            tenant_id: row.tenant_id,
            secret_sealed,
            previous_secret_sealed,
            previous_secret_expires_at,
            rotated_at,
          }
        : null;
    byCall.set(row.id, { ...call, secret });
  }
  return keys.map((key) => {
    const found = byCall.get(key.callId);
    return found?.tenant_id === key.tenantId ? found : undefined;
  });
}
