/**
 * Migrations: applied from scratch, they give the same schema on the embedded engine (PGlite)
 * and on PostgreSQL; applying them again changes nothing; two processes migrating one fresh
 * PostgreSQL database at the same moment apply each file once.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/core/db/database.js';
import { migrate, readMigrations } from '../../src/core/db/migrate.js';
import { emptyPostgresDatabase, postgresAvailable, warnWithoutPostgres } from './postgres.js';

warnWithoutPostgres('test/operations/migrations.test.ts');

/** The schema as comparable text: columns, constraints and indexes of the public schema. */
async function describeSchema(database: Database) {
  const db = database.db;
  const columns = await sql<{ line: string }>`
    SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '-') AS line
    FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1`.execute(db);
  const constraints = await sql<{ line: string }>`
    SELECT c.conrelid::regclass::text || ' ' || c.conname || ' ' || c.contype::text || ' ' || pg_get_constraintdef(c.oid) AS line
    FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
    WHERE n.nspname = 'public' AND c.contype::text <> 'n' ORDER BY 1`.execute(db);
  const indexes = await sql<{ line: string }>`
    SELECT indexdef AS line FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1`.execute(db);
  const applied = await sql<{
    line: string;
  }>`SELECT version || ' ' || name AS line FROM schema_migrations ORDER BY version`.execute(db);
  return {
    columns: columns.rows.map((r) => r.line),
    constraints: constraints.rows.map((r) => r.line),
    indexes: indexes.rows.map((r) => r.line),
    applied: applied.rows.map((r) => r.line),
  };
}

let embedded: Database;
let appliedFirst: string[];
beforeAll(async () => {
  embedded = await openDatabase({ databaseUrl: 'memory://', dataDir: '' });
  appliedFirst = await migrate(embedded);
});
afterAll(() => embedded?.close());

describe('migrations', () => {
  it('apply from scratch on the embedded engine, every file once, and again change nothing', async () => {
    const files = readMigrations().map((m) => m.name);
    expect(appliedFirst).toEqual(files);
    const first = await describeSchema(embedded);
    expect(first.applied.map((line) => line.split(' ')[1])).toEqual(files);
    expect(await migrate(embedded)).toEqual([]);
    expect(await describeSchema(embedded)).toEqual(first);
  });

  it('give every table holding tenant data a tenant_id column', async () => {
    const { columns } = await describeSchema(embedded);
    const tables = new Set(columns.map((line) => line.split('.')[0]));
    const withTenant = new Set(
      columns.filter((line) => /^\w+\.tenant_id /.test(line)).map((line) => line.split('.')[0]),
    );
    // Tables that are not tenant data: the tenants themselves, bookkeeping, shared queues.
    // The operator's own tables: its staff, their sessions and invitations, and the platform's brand.
    const global = new Set([
      'tenants',
      'schema_migrations',
      'jobs',
      'operator_staff',
      'operator_staff_sessions',
      'operator_staff_invitations',
      'platform_brand',
    ]);
    const missing = [...tables].filter((table) => !withTenant.has(table) && !global.has(table));
    expect(missing, 'tables without tenant_id (add it, or list the table here with the reason)').toEqual([]);
  });
});

describe.skipIf(!postgresAvailable)('migrations on PostgreSQL', { timeout: 60_000 }, () => {
  it('give the same schema as on the embedded engine, and again change nothing', async () => {
    const fresh = await emptyPostgresDatabase();
    const postgres = await openDatabase({ databaseUrl: fresh.url, dataDir: '' });
    try {
      await migrate(postgres);
      const onEmbedded = await describeSchema(embedded);
      const onPostgres = await describeSchema(postgres);
      expect(onPostgres.applied).toEqual(onEmbedded.applied);
      expect(onPostgres.columns).toEqual(onEmbedded.columns);
      expect(onPostgres.indexes).toEqual(onEmbedded.indexes);
      expect(onPostgres.constraints).toEqual(onEmbedded.constraints);
      expect(await migrate(postgres)).toEqual([]);
      expect(await describeSchema(postgres)).toEqual(onPostgres);
    } finally {
      await postgres.close();
      await fresh.drop();
    }
  });

  it('two processes migrating one fresh database at once apply each file exactly once', async () => {
    const fresh = await emptyPostgresDatabase();
    const one = await openDatabase({ databaseUrl: fresh.url, dataDir: '' });
    const two = await openDatabase({ databaseUrl: fresh.url, dataDir: '' });
    try {
      const [a, b] = await Promise.all([migrate(one), migrate(two)]);
      const files = readMigrations().map((m) => m.name);
      expect([...a, ...b].sort()).toEqual([...files].sort());
      expect((await describeSchema(one)).applied).toHaveLength(files.length);
    } finally {
      await one.close();
      await two.close();
      await fresh.drop();
    }
  });
});
