/**
 * GET /api/v1/users remembers the totals it counted (src/users/list-totals.ts, migration 0008):
 * a remembered total must be exactly what a fresh count would say, whoever changed the users, and
 * the page must be the same whichever way it was found (all matches, or a walk in display order).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/core/ids.js';
import { listUsers } from '../../src/users/repository.js';
import { createTenant, createUser, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { ENGINE } from '../support/databases.js';
import { recordStatements } from '../support/statements.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

interface Person {
  id: string;
  name: string;
  email: string;
  created_at: Date;
}

/** Users straight into the database (as another process or an import would write them). */
async function insertPeople(tenant: TestTenant, people: Omit<Person, 'id'>[]): Promise<Person[]> {
  const { db } = t.services.database;
  const rows = people.map((p) => ({ ...p, id: newId('usr') }));
  await db
    .insertInto('users')
    .values(
      rows.map((p) => ({
        id: p.id,
        tenant_id: tenant.id,
        email: p.email,
        name: p.name,
        phone: null,
        status: 'active' as const,
        password_hash: null,
        created_at: p.created_at,
        updated_at: p.created_at,
      })),
    )
    .execute();
  return rows;
}

async function page(tenant: TestTenant, query: string) {
  const response = await tenant.request('GET', `/api/v1/users${query}`);
  expect(response.status).toBe(200);
  return {
    ids: response.body.data.map((u: { id: string }) => u.id) as string[],
    pagination: response.body.pagination,
  };
}

/** What a fresh, exhaustive answer would be, computed here. */
function expected(people: Person[], term: string, order: 'asc' | 'desc', pageNumber: number, limit: number) {
  const matching = people
    .filter((p) => p.name.toLowerCase().includes(term) || p.email.toLowerCase().includes(term))
    .sort(
      (a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    );
  if (order === 'desc') matching.reverse();
  const pages = Math.ceil(matching.length / limit);
  return {
    ids: matching.slice((pageNumber - 1) * limit, pageNumber * limit).map((p) => p.id),
    pagination: {
      page: pageNumber,
      limit,
      total: matching.length,
      pages,
      has_more: pageNumber < pages,
    },
  };
}

describe('user list totals remembered per users_version', () => {
  it('answers the same pages and totals on the counting and the remembered path, for broad and narrow terms', async () => {
    const tenant = await createTenant(t);
    const start = Date.parse('2026-01-01T00:00:00.000Z');
    // 90 users: "son" matches every third (broad: found by a walk once the total is known),
    // "zed" three of them (narrow: found through all matches); some share a created_at.
    const people = await insertPeople(
      tenant,
      Array.from({ length: 90 }, (_, i) => ({
        name: i % 3 === 0 ? `Jackson ${i}` : i % 30 === 1 ? `Zed ${i}` : `Person ${i}`,
        email: `p${i}@example.com`,
        created_at: new Date(start + Math.floor(i / 2) * 1000),
      })),
    );
    for (const term of ['son', 'zed', 'SON']) {
      for (const order of ['asc', 'desc'] as const) {
        for (const pageNumber of [1, 2, 3, 4, 11]) {
          const query = `?search=${term}&limit=10&page=${pageNumber}&sort_order=${order}`;
          const want = expected(people, term.toLowerCase(), order, pageNumber, 10);
          // Twice: the first may count, the second answers from the remembered total.
          expect(await page(tenant, query)).toEqual(want);
          expect(await page(tenant, query)).toEqual(want);
        }
      }
    }
  });

  // PGlite has one connection: a second session to take the lock from exists on PostgreSQL only.
  it.skipIf(ENGINE !== 'postgres')(
    "bumps the tenant's users_version at commit: an open user creation does not hold the tenant row",
    async () => {
      const tenant = await createTenant(t);
      const { db } = t.services.database;
      const versionOf = async () =>
        (await sql<{ v: string }>`SELECT users_version AS v FROM tenants WHERE id = ${tenant.id}`.execute(db))
          .rows[0].v;
      const before = await versionOf();
      await db.transaction().execute(async (tx) => {
        await tx
          .insertInto('users')
          .values({
            id: newId('usr'),
            tenant_id: tenant.id,
            email: 'held@example.com',
            name: 'Held Open',
            phone: null,
            status: 'active',
            password_hash: null,
            created_at: new Date(),
            updated_at: new Date(),
          })
          .execute();
        // Another session can take the lock a counter update needs at once (NOWAIT fails when not):
        // the transaction's later statements no longer queue other writers of this tenant's users.
        await sql`SELECT 1 FROM tenants WHERE id = ${tenant.id} FOR NO KEY UPDATE NOWAIT`.execute(db);
        expect(await versionOf()).toBe(before);
      });
      expect(BigInt(await versionOf())).toBe(BigInt(before) + 1n);
    },
  );

  it('uses a remembered total only while the users are unchanged (proved by hiding a change from the counter)', async () => {
    const tenant = await createTenant(t);
    const { db } = t.services.database;
    await insertPeople(tenant, [
      { name: 'Ann One', email: 'ann1@example.com', created_at: new Date('2026-01-01T00:00:00Z') },
      { name: 'Ann Two', email: 'ann2@example.com', created_at: new Date('2026-01-01T00:00:01Z') },
    ]);
    expect((await page(tenant, '?search=ann')).pagination.total).toBe(2);
    // With the counter's trigger off, a new user is invisible to the version check: the
    // remembered total (2) is answered beside a page that already shows 3 users. This is what the
    // trigger prevents, and shows the total really was remembered.
    await sql`ALTER TABLE users DISABLE TRIGGER users_bump_version`.execute(db);
    try {
      await insertPeople(tenant, [
        { name: 'Ann Three', email: 'ann3@example.com', created_at: new Date('2026-01-01T00:00:02Z') },
      ]);
      const hidden = await page(tenant, '?search=ann');
      expect(hidden.ids).toHaveLength(3);
      expect(hidden.pagination.total).toBe(2);
    } finally {
      await sql`ALTER TABLE users ENABLE TRIGGER users_bump_version`.execute(db);
    }
    await insertPeople(tenant, [
      { name: 'Ann Four', email: 'ann4@example.com', created_at: new Date('2026-01-01T00:00:03Z') },
    ]);
    const seen = await page(tenant, '?search=ann');
    expect(seen.ids).toHaveLength(4);
    expect(seen.pagination.total).toBe(4);
  });

  it('counts again after every kind of change a list can see, made through the API or straight in SQL', async () => {
    const tenant = await createTenant(t);
    const { db } = t.services.database;
    const total = async (query: string) => (await page(tenant, query)).pagination.total as number;
    const anna = await createUser(tenant, { name: 'Anna', email: 'a1@example.com' });
    const hanna = await createUser(tenant, { name: 'Hanna', email: 'h@example.com' });
    expect(await total('?search=anna')).toBe(2);
    expect(await total('?status=active&search=anna')).toBe(2);
    expect(await total('')).toBe(2);

    // Blocked (operator API): out of status=active, still in the unfiltered list.
    expect((await t.admin('PATCH', `/admin/v1/users/${hanna.id}`, { status: 'blocked' })).status).toBe(200);
    expect(await total('?status=active&search=anna')).toBe(1);
    expect(await total('?search=anna')).toBe(2);

    // Renamed and re-addressed straight in SQL (another process): in and out of a search.
    await db.updateTable('users').set({ name: 'Bob' }).where('id', '=', anna.id).execute();
    expect(await total('?search=anna')).toBe(1);
    await db.updateTable('users').set({ email: 'joanna@example.com' }).where('id', '=', anna.id).execute();
    expect(await total('?search=anna')).toBe(2);

    // Deleted through the API: gone from every list.
    expect((await tenant.request('DELETE', `/api/v1/users/${hanna.id}`)).status).toBe(200);
    expect(await total('?search=anna')).toBe(1);
    expect(await total('')).toBe(1);

    // Removed for good in SQL (no soft delete).
    await db.deleteFrom('memberships').where('user_id', '=', anna.id).execute();
    await db.deleteFrom('users').where('id', '=', anna.id).execute();
    expect(await total('?search=anna')).toBe(0);
    expect(await total('')).toBe(0);
  });

  it('does not bump the counter for changes no list shows (a credit debit, a password change)', async () => {
    const tenant = await createTenant(t);
    const { db } = t.services.database;
    const user = await createUser(tenant, { name: 'Quiet', email: 'quiet@example.com' });
    const version = async () =>
      (
        await db
          .selectFrom('tenants')
          .select('users_version')
          .where('id', '=', tenant.id)
          .executeTakeFirstOrThrow()
      ).users_version;
    const before = await version();
    await db
      .updateTable('users')
      .set({ credit_balance_minutes: 42, password_hash: 'scrypt$1024$8$1$x$y', updated_at: new Date() })
      .where('id', '=', user.id)
      .execute();
    expect(await version()).toBe(before);
    await db.updateTable('users').set({ name: 'Loud' }).where('id', '=', user.id).execute();
    expect(BigInt(await version())).toBe(BigInt(before) + 1n);
  });

  it('keeps live_users equal to the users not deleted, through inserts, soft and hard deletes', async () => {
    const tenant = await createTenant(t);
    const { db } = t.services.database;
    const live = async () =>
      Number(
        (
          await db
            .selectFrom('tenants')
            .select('live_users')
            .where('id', '=', tenant.id)
            .executeTakeFirstOrThrow()
        ).live_users,
      );
    const a = await createUser(tenant);
    await createUser(tenant);
    const c = await createUser(tenant);
    expect(await live()).toBe(3);
    expect((await tenant.request('DELETE', `/api/v1/users/${a.id}`)).status).toBe(200);
    expect(await live()).toBe(2);
    await db.updateTable('users').set({ status: 'blocked' }).where('id', '=', c.id).execute();
    expect(await live()).toBe(2);
    await db.deleteFrom('memberships').where('user_id', '=', c.id).execute();
    await db.deleteFrom('users').where('id', '=', c.id).execute();
    expect(await live()).toBe(1);
  });
});

describe('user list statements', () => {
  it('plan the first page once: the server keeps a generic plan for it, whatever the term', async () => {
    const tenant = await createTenant(t);
    // Enough users that a plan for "some unknown number of rows" looks far dearer than one for a page.
    const { db } = t.services.database;
    await sql`
      INSERT INTO users (id, tenant_id, email, name, status, created_at, updated_at)
      SELECT 'usr_plan' || g, ${tenant.id}, 'plan' || g || '@example.com',
             CASE WHEN g % 2 = 0 THEN 'Jackson ' ELSE 'Wilma ' END || g, 'active',
             timestamptz '2026-02-01' + g * interval '1 second', timestamptz '2026-02-01'
      FROM generate_series(1, 5000) g`.execute(db);
    await sql`ANALYZE users`.execute(db);
    // One connection, so the statement's plan cache is the one asked about below.
    const plans = await t.services.database.db.connection().execute(async (connection) => {
      const list = (search: string, limit: number) =>
        listUsers(
          connection,
          tenant.id,
          { search, sortBy: 'created_at', sortOrder: 'desc', limit, offset: 0, now: new Date() },
          { total: 2500, liveUsers: 5000 },
        );
      // The server plans the first runs for their own values, then settles on a generic plan
      // only if it does not look dearer; an unknown LIMIT alone used to make it look 30× dearer.
      const sent = await recordStatements(async () => {
        for (let i = 0; i < 12; i++) {
          const limit = i % 3 ? 20 : 10;
          const result = await list(i % 2 ? 'son' : 'jack', limit);
          expect(result.rows).toHaveLength(limit);
        }
      });
      const names = new Set(sent.map((statement) => statement.name));
      expect([...names]).toEqual([expect.any(String)]);
      const counts = async () =>
        (
          await sql<{ generic_plans: string; custom_plans: string }>`
            SELECT generic_plans::text, custom_plans::text FROM pg_prepared_statements
            WHERE name = ${[...names][0]}`.execute(connection)
        ).rows.map((row) => ({ generic: Number(row.generic_plans), custom: Number(row.custom_plans) }));
      const before = await counts();
      for (let i = 0; i < 4; i++) await list(i % 2 ? 'son' : 'jack', 10 + i);
      return { before, after: await counts() };
    });
    // Settled: every further run reuses the generic plan.
    expect(plans.before).toHaveLength(1);
    expect(plans.after).toEqual([{ generic: plans.before[0].generic + 4, custom: plans.before[0].custom }]);
  });

  it('plan a search through all matches for its own tenant and term on every run (sent unnamed)', async () => {
    const tenant = await createTenant(t);
    await insertPeople(tenant, [
      { name: 'Zed One', email: 'zed1@example.com', created_at: new Date('2026-03-01T00:00:00.000Z') },
      { name: 'Ann Two', email: 'ann2@example.com', created_at: new Date('2026-03-01T00:00:01.000Z') },
    ]);
    const query = { sortBy: 'created_at', sortOrder: 'desc', limit: 20, offset: 0, now: new Date() } as const;
    const { db } = t.services.database;
    const sent = await recordStatements(async () => {
      // Counting goes through all matches; so does a name-ordered search; a walk does not.
      expect((await listUsers(db, tenant.id, { ...query, search: 'zed' })).total).toBe(1);
      await listUsers(db, tenant.id, { ...query, search: 'zed', sortBy: 'name' }, { total: 1, liveUsers: 2 });
      await listUsers(db, tenant.id, { ...query, search: 'zed' }, { total: 1, liveUsers: 2 });
    });
    expect(
      sent.map((statement) => [statement.text.includes('WITH matches'), statement.name !== undefined]),
    ).toEqual([
      [true, false],
      [true, false],
      [false, true],
    ]);
  });
});
