import { type RawBuilder, type Selectable, sql } from 'kysely';
import { type Executor, runPrepared } from '../core/db/database.js';
import { MAX_PAGE_LIMIT } from '../core/db/pagination.js';
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

declare module '../core/db/database.js' {
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

/** `%`, `_` and `\` in a search term match themselves (docs/design-choices.md). */
export function likeContains(term: string): string {
  return `%${term.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Joins the lowered name and email in `users.search_text` (migration 0009). */
const SEARCH_TEXT_SEPARATOR = '\n';

/**
 * How a search term is tested: `indexed` as a LIKE pattern the trigram index serves (to find
 * every match); `scanned` as `strpos`, which no index serves, for a walk that tests the rows of
 * another index. A statement is prepared once for every term, and a LIKE in a walk would let the
 * planner swap the walk for a trigram scan, or plan the statement again on every run.
 */
type TermTest = 'indexed' | 'scanned';

function filteredUsers(db: Executor, tenantId: string, filter: UserFilter, termTest: TermTest) {
  let query = db
    .selectFrom('users as u')
    .where('u.tenant_id', '=', tenantId)
    .where('u.deleted_at', 'is', null);
  if (filter.status) query = query.where('u.status', '=', filter.status);
  if (filter.search !== undefined && filter.search !== '') {
    const term = filter.search.toLowerCase();
    const pattern = likeContains(filter.search);
    const contains = (text: RawBuilder<unknown>) =>
      termTest === 'indexed'
        ? sql<boolean>`${text} LIKE ${pattern} ESCAPE '\\'`
        : sql<boolean>`strpos(${text}, ${term}) > 0`;
    query = query.where(contains(sql`u.search_text`));
    // Only a term holding the separator can match across it: checked on each field as well.
    if (term.includes(SEARCH_TEXT_SEPARATOR)) {
      query = query.where((eb) => eb.or([contains(sql`lower(u.name)`), contains(sql`lower(u.email)`)]));
    }
  }
  return query;
}

/**
 * The plan of the user's current subscription: active or trialing and already started (a scheduled
 * agency downgrade starts next month and does not count yet).
 */
function currentPlanJoin(now: Date) {
  // The plan's name is looked up for the one subscription picked, inside the lateral subquery: a
  // join outside it made the planner build a hash of the tenant's plans for every row of the page.
  return sql`
    LEFT JOIN LATERAL (
      SELECT s.plan_id, (SELECT p.name FROM plans p WHERE p.id = s.plan_id) AS plan_name
      FROM subscriptions s
      WHERE s.tenant_id = page.tenant_id AND s.user_id = page.id
        AND s.status IN ('active', 'trialing') AND s.current_period_start <= ${now}
      ORDER BY s.current_period_start DESC, s.id DESC
      LIMIT 1
    ) current_subscription ON true`;
}

export interface UserListQuery extends UserFilter {
  sortBy: 'created_at' | 'name';
  sortOrder: 'asc' | 'desc';
  limit: number;
  offset: number;
  now: Date;
}

type ListStatementRow = UserListRow & { version: string; live_users: string; total: string | null };

export interface UserListResult {
  rows: UserListRow[];
  /** `tenants.users_version` in the statement's snapshot (migration 0008). */
  version: string;
  liveUsers: number;
  /** The exact total, or null when the caller passed a known one and it was not counted again. */
  total: number | null;
}

/**
 * How the page's rows are found:
 * - `matches`: every match through the trigram index, set aside (MATERIALIZED), then a top-N
 *   sort; the cheap way for a narrow search, and the way to count one;
 * - `walk`: the (tenant, sort key, id) index in display order, testing each row until the page
 *   is full; the cheap way without a search or for a broad one;
 * - `none`: the page is past the end, only the total and version are read.
 */
type PageAccess = 'matches' | 'walk' | 'none';

/**
 * Costs of the two ways, in rows walked: a match costs MATCH_COST walked rows (a heap page of its
 * own, the recheck, the sort), and planning a `matches` statement MATCHES_PLANNING_COST (it is
 * planned for every run, see `listUsers`; a walk's plan is kept). Measured, not derived: see
 * bench/README.md, "Tuning constants".
 */
const MATCH_COST = 4;
const MATCHES_PLANNING_COST = 1_000;

function pageAccess(
  query: UserListQuery,
  known: { total: number; liveUsers: number } | undefined,
): PageAccess {
  if (query.offset > Number.MAX_SAFE_INTEGER) return 'none';
  if (!query.search) return known && query.offset >= known.total ? 'none' : 'walk';
  if (!known) return 'matches';
  if (query.offset >= known.total) return 'none';
  // Name order is left to `matches`: names that match a term cluster in name order, so a walk
  // can cross tens of thousands of rows before the first match.
  if (query.sortBy !== 'created_at') return 'matches';
  // A walk in created_at order visits about (offset + limit) / selectivity rows, and never more
  // than the tenant's users; `matches` visits every match.
  const walked = Math.min(
    known.liveUsers,
    ((query.offset + query.limit) * known.liveUsers) / Math.max(known.total, 1),
  );
  return walked < MATCH_COST * known.total + MATCHES_PLANNING_COST ? 'walk' : 'matches';
}

/**
 * One page of the tenant's users with the tenant's `users_version`, in one statement (one
 * snapshot). Counts the exact total unless `known` gives the total counted at a version the
 * caller remembers; the caller must check that `version` is still that one before using it.
 */
export async function listUsers(
  db: Executor,
  tenantId: string,
  query: UserListQuery,
  known?: { total: number; liveUsers: number },
): Promise<UserListResult> {
  const access = pageAccess(query, known);
  const counting = !known;
  const direction = query.sortOrder === 'asc' ? sql`ASC` : sql`DESC`;
  const orderOf = (alias: string) =>
    query.sortBy === 'name'
      ? sql`${sql.ref(`${alias}.name`)} ${direction} NULLS LAST, ${sql.ref(`${alias}.id`)} ${direction}`
      : sql`${sql.ref(`${alias}.created_at`)} ${direction}, ${sql.ref(`${alias}.id`)} ${direction}`;
  const columns = [
    'u.id',
    'u.tenant_id',
    'u.name',
    'u.email',
    'u.phone',
    'u.status',
    'u.created_at',
  ] as const;
  const usesMatches = Boolean(query.search) && (access === 'matches' || counting);
  const total = !counting
    ? sql`NULL::bigint`
    : usesMatches
      ? sql`(SELECT count(*) FROM matches)`
      : sql`(${filteredUsers(db, tenantId, query, 'scanned').select((eb) => eb.fn.countAll().as('n'))})`;
  // A walk is prepared once per shape and, after a few runs, the server may keep a generic plan
  // instead of planning again on every run (which costs more than running it). It does so
  // only when the generic plan looks no dearer, and a plan for an unknown LIMIT assumes a tenth
  // of the table. The first page, the one nearly every list asks for, is therefore cut at the
  // largest page size first, a constant the planner can use, and then at the page's own limit
  // (an index walk stops as soon as the outer limit has its rows).
  const window = (rows: RawBuilder<unknown>, alias: string) =>
    query.offset === 0
      ? sql`SELECT * FROM (${rows} ORDER BY ${orderOf(alias)} LIMIT ${sql.lit(MAX_PAGE_LIMIT)}) ${sql.id(alias)}
            ORDER BY ${orderOf(alias)} LIMIT ${query.limit}`
      : sql`${rows} ORDER BY ${orderOf(alias)} LIMIT ${query.limit} OFFSET ${query.offset}`;
  const page =
    access === 'none'
      ? sql`SELECT NULL::text AS id, NULL::text AS tenant_id, NULL::text AS name, NULL::text AS email,
               NULL::text AS phone, NULL::text AS status, NULL::timestamptz AS created_at WHERE false`
      : access === 'matches'
        ? window(sql`SELECT m.* FROM matches m`, 'm')
        : window(sql`${filteredUsers(db, tenantId, query, 'scanned').select(columns)}`, 'u');
  // A walk's plan is the same for every tenant and term: it is kept as a named prepared statement.
  // The best way to all matches depends on the tenant's size and the term (the tenant's entries
  // of the trigram index, or its other indexes for a small tenant). A generic plan is made for the
  // average tenant, and was far slower for a large tenant among many small ones (bench/README.md,
  // "Many tenants in one table"): statements with `matches` are planned for their own values on
  // every run.
  const statement = sql<ListStatementRow>`
    ${usesMatches ? sql`WITH matches AS MATERIALIZED (${filteredUsers(db, tenantId, query, 'indexed').select(columns)})` : sql``}
    SELECT v.users_version::text AS version, v.live_users::text AS live_users, ${total} AS total,
           page.id, page.name, page.email, page.phone, page.status, page.created_at,
           current_subscription.plan_id, current_subscription.plan_name
    FROM tenants v
    LEFT JOIN LATERAL (${page}) page ON true
    ${currentPlanJoin(query.now)}
    WHERE v.id = ${tenantId}
    ORDER BY ${orderOf('page')}`.compile(db);
  const rows = usesMatches
    ? (await db.executeQuery(statement)).rows
    : await runPrepared<ListStatementRow>(db, {
        // One name for every shape of the list (sort, filters, access path); see PreparedStatement.name.
        name: 'users_list',
        text: statement.sql,
        values: [...statement.parameters],
      });
  const first = rows[0];
  if (!first) throw new Error(`tenant ${tenantId} not found while listing its users`);
  return {
    rows: first.id === null ? [] : rows,
    version: first.version,
    liveUsers: Number(first.live_users),
    total: first.total === null ? null : Number(first.total),
  };
}

/** One user as a list item; deleted users are absent. */
export async function findUserListItem(db: Executor, tenantId: string, userId: string, now: Date) {
  const result = await sql<UserListRow>`
    SELECT page.id, page.name, page.email, page.phone, page.status, page.created_at,
           current_subscription.plan_id, current_subscription.plan_name
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

/** Names and emails of the tenant's users among `ids` (deleted ones too), in one query. */
export async function findUserNames(db: Executor, tenantId: string, ids: readonly string[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('users')
    .select(['id', 'name', 'email', 'deleted_at'])
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', [...ids])
    .execute();
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

const USER_COLUMNS = `id, tenant_id, email, name, phone, status, password_hash, credit_balance_minutes,
  created_at, updated_at, deleted_at`;

/** The user and its membership in one statement (one round trip of a user creation's transaction). */
export async function insertUser(
  db: Executor,
  row: Omit<UsersTable, 'credit_balance_minutes' | 'deleted_at'>,
): Promise<UserRow> {
  const { id, tenant_id, email, name, phone, status, password_hash, created_at, updated_at } = row;
  const [user] = await runPrepared<UserRow>(db, {
    name: 'users_insert_with_membership',
    text: `
      WITH inserted AS (
        INSERT INTO users (id, tenant_id, email, name, phone, status, password_hash, created_at, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${USER_COLUMNS}
      ), membership AS (
        INSERT INTO memberships (tenant_id, user_id, created_at) SELECT tenant_id, id, created_at FROM inserted
      )
      SELECT ${USER_COLUMNS} FROM inserted`,
    values: [id, tenant_id, email, name, phone, status, password_hash, created_at, updated_at],
  });
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

/**
 * Replaces a password hash with a stronger one of the same password, only if it is still the one
 * that was verified: a password changed in between is never overwritten. Touches no column a
 * list can see (no users_version bump) and leaves updated_at alone: nothing the user set changed.
 */
export async function replacePasswordHash(
  db: Executor,
  tenantId: string,
  userId: string,
  verified: string,
  stronger: string,
): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ password_hash: stronger })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .where('password_hash', '=', verified)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Sets a new password (a reset): only the hash changes, so no list total moves; updated_at is the
 * time of the change.
 */
export async function setPasswordHash(
  db: Executor,
  tenantId: string,
  userId: string,
  passwordHash: string,
  at: Date,
): Promise<void> {
  await db
    .updateTable('users')
    .set({ password_hash: passwordHash, updated_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .where('deleted_at', 'is', null)
    .execute();
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
