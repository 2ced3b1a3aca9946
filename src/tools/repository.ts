/** The tools_secrets table: one row per tenant that has a tools secret. */
import type { Selectable } from 'kysely';
import type { Executor } from '../core/db/database.js';

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
