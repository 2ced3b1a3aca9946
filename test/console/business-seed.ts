/**
 * Many users for the business pages' tests and timings, inserted set-based (generate_series) the
 * way bench/seed.ts does: names from short lists, so a distinctive name stands out in a search.
 */
import { sql } from 'kysely';
import type { Executor } from '../../src/core/db/database.js';

const FIRST = ['Ada', 'Alan', 'Grace', 'Edsger', 'Barbara', 'Donald', 'Frances', 'John', 'Margaret', 'Ken'];
const LAST = ['Lovelace', 'Turing', 'Hopper', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Backus', 'Hamilton'];

/** Rows per statement: each stays well inside the statement timeout. */
const BATCH = 5_000;

const list = (values: string[]) => sql.raw(`ARRAY[${values.map((v) => `'${v}'`).join(',')}]`);

/**
 * Inserts `count` users into the tenant (created a minute apart, before `until`), with their
 * memberships, and sets the tenant's list counters once (the per-row trigger is off meanwhile,
 * as in bench/seed.ts, so 100,000 rows do not update the tenant row 100,000 times).
 */
export async function seedUsers(
  db: Executor,
  tenantId: string,
  count: number,
  options: { salt?: string; until?: Date } = {},
): Promise<void> {
  const salt = options.salt ?? Math.random().toString(36).slice(2, 8);
  const start = new Date((options.until ?? new Date()).getTime() - (count + 1) * 60_000);
  await sql`ALTER TABLE users DISABLE TRIGGER users_bump_version`.execute(db);
  try {
    for (let from = 1; from <= count; from += BATCH) {
      const to = Math.min(count, from + BATCH - 1);
      await sql`
      WITH inserted AS (
      INSERT INTO users (id, tenant_id, email, name, phone, status, password_hash, created_at, updated_at)
      SELECT 'usr_' || md5('u' || g || ${salt}), ${tenantId},
             lower(n.first) || '.' || lower(n.last) || g || '.' || ${salt} || '@example.com',
             n.first || ' ' || n.last,
             NULL,
             CASE WHEN g % 50 = 0 THEN 'blocked' ELSE 'active' END,
             NULL,
             ${start}::timestamptz + g * interval '1 minute', ${start}::timestamptz + g * interval '1 minute'
      FROM generate_series(${from}::int, ${to}::int) g
      CROSS JOIN LATERAL (
        SELECT (${list(FIRST)})[1 + g % ${FIRST.length}] AS first,
               (${list(LAST)})[1 + (g / ${FIRST.length}) % ${LAST.length}] AS last
      ) n
      RETURNING tenant_id, id, created_at)
      INSERT INTO memberships (tenant_id, user_id, created_at) SELECT tenant_id, id, created_at FROM inserted`.execute(
        db,
      );
    }
  } finally {
    await sql`ALTER TABLE users ENABLE TRIGGER users_bump_version`.execute(db);
  }
  await sql`
    UPDATE tenants SET users_version = users_version + 1,
      live_users = (SELECT count(*) FROM users WHERE tenant_id = ${tenantId} AND deleted_at IS NULL)
    WHERE id = ${tenantId}`.execute(db);
}
