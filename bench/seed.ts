/**
 * Seeds the benchmark tenant straight into a migrated database, in a few set-based statements:
 * 20 plans, N users sharing one precomputed scrypt hash (so seeding never hashes), their
 * memberships, 1,000 subscriptions and ample credits for the future agent owner. The agent itself
 * is created through the operator API once the service runs (its tables belong to another
 * feature and may not exist yet).
 */
import { sql } from 'kysely';
import type { Database } from '../src/core/db/database.js';
import { randomBase62, sha256Hex } from '../src/core/ids.js';
import { hashPassword } from '../src/core/security/passwords.js';
import { CALLS_LIST_CALLS, LIST_AGENTS, listAgentId as listAgentIdOf, seedListCalls } from './seed-calls.js';
import { seedCallHistory } from './seed-history.js';

export { CALLS_LIST_CALLS, LIST_AGENTS };

export const API_KEY_PREFIX = 'vp';
export const BENCH_PASSWORD = 'bench-password';
export const OWNER_CREDITS = 100_000_000;
const SUBSCRIPTIONS = 1_000;
const TENANT_RATE_LIMIT = 1_000_000;
const USER_BATCH = 25_000;
/**
 * What the seed builds, as a number: a PostgreSQL seed is kept as a template database named by a
 * hash of the migrations, this version and the sizes (bench/seed-template.ts), so raise it
 * whenever the seeded data changes.
 */
export const SEED_VERSION = 2;

const FIRST_NAMES = [
  'Olivia',
  'Liam',
  'Emma',
  'Noah',
  'Amelia',
  'Oliver',
  'Sophia',
  'Elijah',
  'Charlotte',
  'James',
  'Isabella',
  'William',
  'Ava',
  'Benjamin',
  'Mia',
  'Lucas',
  'Evelyn',
  'Henry',
  'Harper',
  'Theodore',
  'Luna',
  'Jack',
  'Camila',
  'Levi',
  'Gianna',
  'Alexander',
  'Elizabeth',
  'Jackson',
  'Eleanor',
  'Mateo',
  'Ella',
  'Daniel',
  'Abigail',
  'Michael',
  'Sofia',
  'Mason',
  'Avery',
  'Sebastian',
  'Scarlett',
  'Ethan',
  'Emily',
  'Logan',
  'Aria',
  'Owen',
  'Penelope',
  'Samuel',
  'Chloe',
  'Jacob',
  'Layla',
  'Asher',
  'Mila',
  'Aiden',
  'Nora',
  'John',
  'Hazel',
  'Joseph',
  'Madison',
  'Wyatt',
  'Ellie',
  'David',
];
const LAST_NAMES = [
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'Garcia',
  'Miller',
  'Davis',
  'Rodriguez',
  'Martinez',
  'Hernandez',
  'Lopez',
  'Gonzalez',
  'Wilson',
  'Anderson',
  'Thomas',
  'Taylor',
  'Moore',
  'Jackson',
  'Martin',
  'Lee',
  'Perez',
  'Thompson',
  'White',
  'Harris',
  'Sanchez',
  'Clark',
  'Ramirez',
  'Lewis',
  'Robinson',
  'Walker',
  'Young',
  'Allen',
  'King',
  'Wright',
  'Scott',
  'Torres',
  'Nguyen',
  'Hill',
  'Flores',
  'Green',
  'Adams',
  'Nelson',
  'Baker',
  'Hall',
  'Rivera',
  'Campbell',
  'Mitchell',
  'Carter',
  'Roberts',
  'Gomez',
  'Phillips',
  'Evans',
  'Turner',
  'Diaz',
  'Parker',
  'Cruz',
  'Edwards',
  'Collins',
  'Reyes',
  'Stewart',
  'Morris',
  'Morales',
  'Murphy',
  'Cook',
  'Rogers',
  'Gutierrez',
  'Ortiz',
  'Morgan',
  'Cooper',
  'Peterson',
  'Bailey',
  'Reed',
  'Kelly',
  'Howard',
  'Ramos',
  'Kim',
  'Cox',
  'Ward',
  'Richardson',
];
const DOMAINS = ['example.com', 'mailbox.test', 'acme.io', 'corp.example'];

/**
 * Three-letter search terms of `users_search`, from rare to broad (a few dozen to tens of
 * thousands of matching users out of 100,000), picked at random per request.
 */
export const SEARCH_TERMS = [
  'kim',
  'ole',
  'ava',
  'ric',
  'mar',
  'ell',
  'son',
  'ber',
  'and',
  'lia',
  'tho',
  'nor',
  'wil',
  'eva',
];

export interface BenchFixture {
  tenantId: string;
  apiKey: string;
  planIds: string[];
  /** A random sample of seeded user ids (baseline reads). */
  sampleUserIds: string[];
  subscriptionIds: string[];
  /** Why subscriptions could not be seeded (a later migration changed the table), if so. */
  subscriptionsError?: string;
  /** calls_list: an agent with 1 / LIST_AGENTS of the tenant's seeded calls; null without calls. */
  listAgentId: string | null;
  callCount: number;
  /** The seeded calls' first and last created_at (ISO), when calls were seeded. */
  firstCallAt?: string;
  lastCallAt?: string;
  /** Owner of the benchmark agent; holds OWNER_CREDITS minutes. */
  ownerUserId: string;
  userCount: number;
  /** True when the tenant's own partner rate limit could be raised (tenants.rate_limit_* exist). */
  tenantRateLimitRaised: boolean;
  seedSeconds: number;
  /** Seconds per seeding step. */
  seedSteps: Record<string, number>;
}

/**
 * Bulk-load practice: drops the table's indexes that back no constraint (the migration's search
 * and listing indexes), runs `load`, and rebuilds them from their own definitions, which is many
 * times faster than maintaining trigram indexes row by row.
 */
async function withoutSecondaryIndexes(
  db: Database['db'],
  table: string,
  mark: (step: string) => void,
  load: () => Promise<void>,
): Promise<void> {
  const indexes = await sql<{ name: string; definition: string }>`
    SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS definition
    FROM pg_index i
    WHERE i.indrelid = ${table}::regclass
      AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`.execute(db);
  for (const index of indexes.rows) await sql`DROP INDEX ${sql.id(index.name)}`.execute(db);
  await load();
  mark(`${table} rows`);
  await db.transaction().execute(async (tx) => {
    await sql`SET LOCAL maintenance_work_mem = '128MB'`.execute(tx);
    for (const index of indexes.rows) await sql.raw(index.definition).execute(tx);
  });
  mark(`${table} indexes`);
}

const sqlList = (values: string[]) =>
  sql.raw(`ARRAY[${values.map((v) => `'${v.replace(/'/g, "''")}'`).join(',')}]`);

export async function seedBench(
  database: Database,
  options: { users: number; calls?: number },
): Promise<BenchFixture> {
  const started = performance.now();
  const steps: Record<string, number> = {};
  let last = started;
  const mark = (step: string) => {
    const now = performance.now();
    steps[step] = Math.round(now - last) / 1000;
    last = now;
  };
  const db = database.db;
  const salt = randomBase62(8);
  const tenantId = `ten_bench${randomBase62(20)}`;
  const apiKey = `${API_KEY_PREFIX}_test_${randomBase62(32)}`;
  const passwordHash = await hashPassword(BENCH_PASSWORD);
  mark('password hash');
  const now = new Date();
  // Users were created one minute apart, ending a day ago; plans an hour apart before them.
  const usersStart = new Date(now.getTime() - (options.users + 24 * 60) * 60_000);
  const plansStart = new Date(usersStart.getTime() - 30 * 3600_000);

  await sql`INSERT INTO tenants (id, name, created_at, updated_at) VALUES (${tenantId}, 'Bench Agency', ${plansStart}, ${plansStart})`.execute(
    db,
  );
  // The partner API's per-tenant rate limit (migration 0005), raised so it cannot cap the run.
  const rateLimitColumns = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM information_schema.columns
    WHERE table_name = 'tenants' AND column_name IN ('rate_limit_per_second', 'rate_limit_burst')`.execute(
    db,
  );
  const tenantRateLimitRaised = rateLimitColumns.rows[0].n === 2;
  if (tenantRateLimitRaised) {
    await sql`
      UPDATE tenants SET rate_limit_per_second = ${TENANT_RATE_LIMIT}, rate_limit_burst = ${TENANT_RATE_LIMIT}
      WHERE id = ${tenantId}`.execute(db);
  }
  await sql`
    INSERT INTO api_keys (id, tenant_id, name, env, scopes, key_hash, created_at)
    VALUES (${`key_${randomBase62(24)}`}, ${tenantId}, 'bench', 'test',
            ${sql.raw(`ARRAY['users:read','users:write','plans:read','subscriptions:read','subscriptions:write','calls:read','calls:write','webhooks:read','webhooks:write','agents:write']`)},
            ${sha256Hex(apiKey)}, ${plansStart})`.execute(db);

  await sql`
    INSERT INTO plans (id, tenant_id, name, description, active, provider, currency, monthly_price, annual_price,
                       included_minutes, overage_rate, topup_rate, trial_period_days, created_at, updated_at)
    SELECT 'plan_' || md5('p' || g || ${salt}), ${tenantId},
           CASE WHEN g % 2 = 0 THEN 'Card ' ELSE 'Invoice ' END || g * 100 || ' minutes',
           'Benchmark plan ' || g, true,
           CASE WHEN g % 2 = 0 THEN 'processor' ELSE 'agency' END, 'usd',
           990 * g, 9900 * g, 100 * g, 0.12, 0.10, CASE WHEN g % 4 = 0 THEN 14 ELSE 0 END,
           ${plansStart}::timestamptz + g * interval '1 hour', ${plansStart}::timestamptz + g * interval '1 hour'
    FROM generate_series(1, 20) g`.execute(db);

  mark('tenant, key, plans');
  // The per-row users trigger (migration 0008) would update the tenant row 100,000 times: off
  // for the load, then the counters it keeps are set once.
  await sql`ALTER TABLE users DISABLE TRIGGER users_bump_version`.execute(db);
  await withoutSecondaryIndexes(db, 'users', mark, async () => {
    for (let from = 1; from <= options.users; from += USER_BATCH) {
      const to = Math.min(options.users, from + USER_BATCH - 1);
      await sql`
      INSERT INTO users (id, tenant_id, email, name, phone, status, password_hash, created_at, updated_at)
      SELECT 'usr_' || md5('u' || g || ${salt}), ${tenantId},
             lower(n.first) || '.' || lower(n.last) || g || '@' || (${sqlList(DOMAINS)})[1 + g % ${DOMAINS.length}],
             n.first || ' ' || n.last,
             CASE WHEN g % 3 = 0 THEN NULL ELSE '+1415' || lpad(g::text, 7, '0') END,
             CASE WHEN g % 50 = 0 THEN 'blocked' WHEN g % 40 = 0 THEN 'pending' ELSE 'active' END,
             ${passwordHash},
             ${usersStart}::timestamptz + g * interval '1 minute', ${usersStart}::timestamptz + g * interval '1 minute'
      FROM generate_series(${from}::int, ${to}::int) g
      CROSS JOIN LATERAL (
        SELECT (${sqlList(FIRST_NAMES)})[1 + g % ${FIRST_NAMES.length}] AS first,
               (${sqlList(LAST_NAMES)})[1 + (g / ${FIRST_NAMES.length}) % ${LAST_NAMES.length}] AS last
      ) n`.execute(db);
    }
  });
  await sql`ALTER TABLE users ENABLE TRIGGER users_bump_version`.execute(db);
  await sql`
    UPDATE tenants SET users_version = users_version + 1,
      live_users = (SELECT count(*) FROM users WHERE tenant_id = ${tenantId} AND deleted_at IS NULL)
    WHERE id = ${tenantId}`.execute(db);
  await sql`
    INSERT INTO memberships (tenant_id, user_id, role, created_at)
    SELECT tenant_id, id, 'member', created_at FROM users WHERE tenant_id = ${tenantId}`.execute(db);
  mark('memberships');

  const owner = await sql<{ id: string }>`
    SELECT id FROM users WHERE tenant_id = ${tenantId} AND status = 'active' ORDER BY created_at LIMIT 1`.execute(
    db,
  );
  const ownerUserId = owner.rows[0].id;
  await sql`
    INSERT INTO credit_ledger (id, tenant_id, user_id, minutes, reason, created_at)
    VALUES (${`cred_${randomBase62(24)}`}, ${tenantId}, ${ownerUserId}, ${OWNER_CREDITS}, 'benchmark credits', ${now})`.execute(
    db,
  );
  await sql`
    UPDATE users SET credit_balance_minutes = credit_balance_minutes + ${OWNER_CREDITS}
    WHERE tenant_id = ${tenantId} AND id = ${ownerUserId}`.execute(db);

  // Subscriptions: the first 1,000 active users (not the agent owner), one each, cycling through
  // the plans; mostly active, some trialing and canceled.
  let subscriptionsError: string | undefined;
  try {
    await sql`
      INSERT INTO subscriptions (id, tenant_id, user_id, plan_id, status, provider, provider_subscription_id,
                                 cancel_at_period_end, current_period_start, current_period_end, created_at, updated_at)
      SELECT 'sub_' || md5('s' || u.rn || ${salt}), u.tenant_id, u.id, p.id,
             CASE WHEN u.rn % 10 = 0 THEN 'canceled' WHEN u.rn % 10 = 1 THEN 'trialing' ELSE 'active' END,
             p.provider,
             CASE WHEN p.provider = 'processor' THEN 'sub_' || substr(md5('ps' || u.rn || ${salt}), 1, 24) END,
             false,
             date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC',
             (date_trunc('month', now() AT TIME ZONE 'UTC') + interval '1 month') AT TIME ZONE 'UTC',
             u.created_at, u.created_at
      FROM (SELECT id, tenant_id, created_at, row_number() OVER (ORDER BY created_at) AS rn
            FROM users WHERE tenant_id = ${tenantId} AND status = 'active' AND id <> ${ownerUserId}
            ORDER BY created_at LIMIT ${SUBSCRIPTIONS}) u
      JOIN (SELECT id, provider, row_number() OVER (ORDER BY created_at) - 1 AS idx
            FROM plans WHERE tenant_id = ${tenantId}) p ON p.idx = u.rn % 20`.execute(db);
  } catch (error) {
    subscriptionsError = (error as Error).message;
  }
  mark('credits, subscriptions');

  // The lists at scale: finished calls of the tenant over LIST_AGENTS agents (bench/seed-calls.ts;
  // agents and versions need not exist for a read: calls keep what they used).
  const callCount = options.calls ?? 0;
  const listAgentId = callCount > 0 ? listAgentIdOf(salt) : null;
  let seededCalls: { firstCallAt?: string; lastCallAt?: string } = {};
  if (callCount > 0) {
    await withoutSecondaryIndexes(db, 'calls', mark, async () => {
      seededCalls = await seedListCalls(db, { tenantId, ownerUserId, salt, now, calls: callCount });
    });
  }

  await seedCallHistory(db, { tenantId, ownerUserId, salt, now });
  mark('call history');

  await sql`
    CREATE TABLE IF NOT EXISTS bench_baseline_writes (
      id text PRIMARY KEY,
      tenant_id text NOT NULL,
      payload jsonb NOT NULL,
      created_at timestamptz NOT NULL
    )`.execute(db);
  // A server's autovacuum would analyze these tables within a minute; do it now so the first
  // measured queries already get the plans a long-running database gets. The calls, inserted in
  // bulk, are vacuumed too, as autovacuum does after large inserts: index-only scans need the
  // visibility map it sets.
  if (callCount > 0) await sql`VACUUM (ANALYZE) calls`.execute(db);
  await sql`ANALYZE`.execute(db);
  mark('analyze');

  const plans = await sql<{ id: string }>`SELECT id FROM plans WHERE tenant_id = ${tenantId}`.execute(db);
  const sample = await sql<{ id: string }>`
    SELECT id FROM users WHERE tenant_id = ${tenantId} ORDER BY md5(id || ${salt}) LIMIT 1000`.execute(db);
  const subscriptions = await sql<{ id: string }>`
    SELECT id FROM subscriptions WHERE tenant_id = ${tenantId}`.execute(db);
  return {
    tenantId,
    apiKey,
    planIds: plans.rows.map((r) => r.id),
    sampleUserIds: sample.rows.map((r) => r.id),
    subscriptionIds: subscriptions.rows.map((r) => r.id),
    subscriptionsError,
    listAgentId,
    callCount,
    ...seededCalls,
    ownerUserId,
    userCount: options.users,
    tenantRateLimitRaised,
    seedSeconds: (performance.now() - started) / 1000,
    seedSteps: steps,
  };
}

/** A random element (Math.random: this runs per request inside the load generator). */
export function pick<T>(values: readonly T[]): T {
  return values[Math.floor(Math.random() * values.length)];
}
