import { type Selectable, sql } from 'kysely';
import type { Executor } from '../core/db.js';
import type { UserStatus } from './schemas.js';

export interface UsersTable {
  id: string;
  tenant_id: string;
  email: string;
  name: string | null;
  phone: string | null;
  status: UserStatus;
  password_hash: string | null;
  credit_balance_minutes: import('kysely').Generated<number>;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export interface MembershipsTable {
  tenant_id: string;
  user_id: string;
  role: import('kysely').Generated<string>;
  created_at: Date;
}

declare module '../core/db.js' {
  interface Tables {
    users: UsersTable;
    memberships: MembershipsTable;
  }
}

export type UserRow = Selectable<UsersTable>;

export interface UserListRow {
  id: string;
  name: string | null;
  email: string;
  phone: string | null;
  status: UserStatus;
  created_at: Date;
  plan_id: string | null;
  plan_name: string | null;
}

export interface UserFilter {
  status?: 'active' | 'blocked';
  search?: string;
}

/** `%`, `_` and `\` in a search term match themselves (decisions.md §2). */
export function likeContains(term: string): string {
  return `%${term.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function filteredUsers(db: Executor, tenantId: string, filter: UserFilter) {
  let query = db
    .selectFrom('users as u')
    .where('u.tenant_id', '=', tenantId)
    .where('u.deleted_at', 'is', null);
  if (filter.status) query = query.where('u.status', '=', filter.status);
  if (filter.search !== undefined && filter.search !== '') {
    const pattern = likeContains(filter.search);
    query = query.where((eb) =>
      eb.or([
        eb(sql`lower(u.name)`, 'like', sql`${pattern} ESCAPE '\\'`),
        eb(sql`lower(u.email)`, 'like', sql`${pattern} ESCAPE '\\'`),
      ]),
    );
  }
  return query;
}

/**
 * The plan of the user's current subscription: active or trialing and already started (a scheduled
 * agency downgrade starts next month and does not count yet).
 */
function currentPlanJoin(now: Date) {
  return sql<{ plan_id: string | null; plan_name: string | null }>`
    LEFT JOIN LATERAL (
      SELECT s.plan_id, p.name AS plan_name
      FROM subscriptions s JOIN plans p ON p.id = s.plan_id
      WHERE s.tenant_id = page.tenant_id AND s.user_id = page.id
        AND s.status IN ('active', 'trialing') AND s.current_period_start <= ${now}
      ORDER BY s.current_period_start DESC, s.id DESC
      LIMIT 1
    ) current_plan ON true`;
}

export async function listUsers(
  db: Executor,
  tenantId: string,
  options: UserFilter & {
    sortBy: 'created_at' | 'name';
    sortOrder: 'asc' | 'desc';
    limit: number;
    offset: number;
    now: Date;
  },
): Promise<(UserListRow & { total: number })[]> {
  const direction = options.sortOrder === 'asc' ? sql`ASC` : sql`DESC`;
  const orderOf = (alias: string) =>
    options.sortBy === 'name'
      ? sql`${sql.ref(`${alias}.name`)} ${direction} NULLS LAST, ${sql.ref(`${alias}.id`)} ${direction}`
      : sql`${sql.ref(`${alias}.created_at`)} ${direction}, ${sql.ref(`${alias}.id`)} ${direction}`;
  const matches = filteredUsers(db, tenantId, options).select([
    'u.id',
    'u.tenant_id',
    'u.name',
    'u.email',
    'u.phone',
    'u.status',
    'u.created_at',
  ]);
  const total = filteredUsers(db, tenantId, options).select((eb) => eb.fn.countAll<number>().as('n'));
  // A search is answered from its matches, found through the trigram indexes and set aside
  // (MATERIALIZED): otherwise PostgreSQL walks the whole tenant in display order testing every
  // name. The page is then a top-N sort of the matches and the total one count of them. Without
  // a search, the page comes straight off the (tenant, sort key, id) index.
  const page = options.search
    ? sql`
      WITH matches AS MATERIALIZED (${matches})
      SELECT m.*, (SELECT count(*) FROM matches) AS total FROM matches m
      ORDER BY ${orderOf('m')} LIMIT ${options.limit} OFFSET ${options.offset}`
    : sql`
      SELECT m.*, (${total}) AS total FROM (${matches}) m
      ORDER BY ${orderOf('m')} LIMIT ${options.limit} OFFSET ${options.offset}`;
  const result = await sql<UserListRow & { total: number }>`
    SELECT page.id, page.name, page.email, page.phone, page.status, page.created_at, page.total,
           current_plan.plan_id, current_plan.plan_name
    FROM (${page}) page
    ${currentPlanJoin(options.now)}
    ORDER BY ${orderOf('page')}`.execute(db);
  return result.rows;
}

export async function countUsers(db: Executor, tenantId: string, filter: UserFilter): Promise<number> {
  const row = await filteredUsers(db, tenantId, filter)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** One user as a list item; deleted users are absent. */
export async function findUserListItem(db: Executor, tenantId: string, userId: string, now: Date) {
  const result = await sql<UserListRow>`
    SELECT page.id, page.name, page.email, page.phone, page.status, page.created_at,
           current_plan.plan_id, current_plan.plan_name
    FROM (SELECT * FROM users WHERE tenant_id = ${tenantId} AND id = ${userId} AND deleted_at IS NULL) page
    ${currentPlanJoin(now)}`.execute(db);
  return result.rows[0];
}

/** A user of the tenant, deleted or not; locks the row when inside a transaction that asks. */
export async function findUser(
  db: Executor,
  tenantId: string,
  userId: string,
  options: { forUpdate?: boolean } = {},
) {
  let query = db.selectFrom('users').selectAll().where('tenant_id', '=', tenantId).where('id', '=', userId);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function findLiveUserByEmail(db: Executor, tenantId: string, email: string) {
  return db
    .selectFrom('users')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function insertUser(
  db: Executor,
  row: Omit<UsersTable, 'credit_balance_minutes' | 'deleted_at'>,
): Promise<UserRow> {
  const user = await db.insertInto('users').values(row).returningAll().executeTakeFirstOrThrow();
  await db
    .insertInto('memberships')
    .values({ tenant_id: row.tenant_id, user_id: row.id, created_at: row.created_at })
    .execute();
  return user;
}

export async function markUserDeleted(db: Executor, tenantId: string, userId: string, at: Date) {
  await db
    .updateTable('users')
    .set({ deleted_at: at, updated_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .execute();
  await db
    .deleteFrom('memberships')
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .execute();
}

export async function updateUserStatus(
  db: Executor,
  tenantId: string,
  userId: string,
  status: UserStatus,
  at: Date,
) {
  return db
    .updateTable('users')
    .set({ status, updated_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .where('deleted_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
}

/** Operator API only: the tenant of a user that is not deleted (operator paths name no tenant). */
export async function findUserTenant(db: Executor, userId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('users')
    .select('tenant_id')
    .where('id', '=', userId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row?.tenant_id;
}
