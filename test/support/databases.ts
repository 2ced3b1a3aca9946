/**
 * A fresh database per test file, on the engine chosen by TEST_DATABASE:
 * - embedded (default): PGlite in memory, loaded from a migrated template tarball (~0.4 s);
 * - postgres: `CREATE DATABASE … TEMPLATE` from a migrated template on TEST_POSTGRES_URL.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { type Database, openDatabase } from '../../src/core/db/database.js';
import { migrate, readMigrations } from '../../src/core/db/migrate.js';

export const ENGINE = process.env.TEST_DATABASE === 'postgres' ? 'postgres' : 'embedded';
/**
 * Every PostgreSQL database the suite creates is named with TEST_DB_PREFIX (default `vp_`):
 * templates `<prefix>template_<hash>`, a run's databases `<prefix>t_<pid>_<random>`. Runs with
 * different prefixes (two CI jobs on one server) never see nor drop each other's databases.
 */
export const DB_PREFIX = testDbPrefix(process.env.TEST_DB_PREFIX);

function testDbPrefix(raw: string | undefined): string {
  const prefix = raw || 'vp_';
  if (!/^[a-z_][a-z0-9_]{0,29}$/.test(prefix)) {
    throw new Error(
      `TEST_DB_PREFIX must be 1-30 lowercase letters, digits or _, not starting with a digit; got "${prefix}"`,
    );
  }
  return prefix;
}
export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const TMP_DIR = path.resolve(import.meta.dirname, '../../.tmp');

export function migrationsHash(): string {
  const hash = crypto.createHash('sha256');
  for (const m of readMigrations()) hash.update(m.name).update(m.sql);
  return hash.digest('hex').slice(0, 12);
}

export function templatePath(): string {
  return path.join(TMP_DIR, `pglite-template-${migrationsHash()}.tar.gz`);
}

export function templateDatabaseName(): string {
  return `${DB_PREFIX}template_${migrationsHash()}`;
}

export function urlForDatabase(name: string): string {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function postgresAnswers(url = POSTGRES_URL): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1500 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

export async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * Databases of one test run share a prefix naming the vitest main process (the parent of the
 * test workers), so the run's teardown drops its own databases and nobody else's.
 */
export function runDatabasePrefix(mainPid = process.ppid): string {
  return `${DB_PREFIX}t_${mainPid}_`;
}

/**
 * Runs an admin statement that needs a database nobody else is connected to (copying it as a
 * template, renaming it). A connection that was just closed keeps its server backend for a few
 * milliseconds, and another test file may be copying the same template: retry briefly on
 * SQLSTATE 55006 (object_in_use).
 */
export async function adminQueryWhenUnused(sql: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await adminQuery(sql);
      return;
    } catch (error) {
      if (attempt >= 100 || (error as { code?: string }).code !== '55006') throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 150));
    }
  }
}

/** Creates a fresh, migrated PostgreSQL database and returns its URL. */
export async function createPostgresDatabase(): Promise<string> {
  const name = `${runDatabasePrefix()}${crypto.randomBytes(6).toString('hex')}`;
  await adminQueryWhenUnused(`CREATE DATABASE ${name} TEMPLATE ${templateDatabaseName()}`);
  return urlForDatabase(name);
}

/**
 * A new, empty database (no migrations: servers started on it migrate it themselves) named with
 * this run's prefix, so the run's teardown drops it even if a test forgets; `drop()` removes it.
 */
export async function emptyPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${runDatabasePrefix()}${crypto.randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = urlForDatabase(name);
  return { url, drop: () => dropPostgresDatabase(url) };
}

export async function dropPostgresDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
}

/** A fresh, migrated database on the engine under test. */
export async function createTestDatabase(): Promise<{
  database: Database;
  url: string | undefined;
  drop(): Promise<void>;
}> {
  if (ENGINE === 'postgres') {
    const url = await createPostgresDatabase();
    const database = await openDatabase({ databaseUrl: url, dataDir: '', poolSize: 10 });
    return {
      database,
      url,
      async drop() {
        await database.close().catch(() => {});
        await dropPostgresDatabase(url);
      },
    };
  }
  const template = fs.existsSync(templatePath()) ? new Blob([fs.readFileSync(templatePath())]) : undefined;
  const database = await openDatabase({ databaseUrl: 'memory://', dataDir: '', loadDataDir: template });
  if (!template) await migrate(database);
  return {
    database,
    url: undefined,
    async drop() {
      await database.close().catch(() => {});
    },
  };
}

/** The embedded template as a data directory (`<dir>/pgdata`, closed cleanly), beside the tarball. */
export function templateDataDirPath(): string {
  return path.join(TMP_DIR, `pglite-datadir-${migrationsHash()}`);
}

/**
 * Makes the template data directory when missing: from the tarball when the global setup made one,
 * otherwise by migrating an empty one. Built under a temporary name, then renamed.
 */
export async function ensureTemplateDataDir(): Promise<string> {
  const template = templateDataDirPath();
  if (fs.existsSync(template)) return template;
  fs.mkdirSync(TMP_DIR, { recursive: true });
  const building = `${template}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
  const tarball = fs.existsSync(templatePath()) ? new Blob([fs.readFileSync(templatePath())]) : undefined;
  const database = await openDatabase({ databaseUrl: undefined, dataDir: building, loadDataDir: tarball });
  if (!tarball) await migrate(database);
  await database.close();
  // Only the database: the lock files stay out of the copies.
  for (const entry of fs.readdirSync(building)) {
    if (entry !== 'pgdata') fs.rmSync(path.join(building, entry), { recursive: true, force: true });
  }
  try {
    fs.renameSync(building, template);
  } catch (error) {
    fs.rmSync(building, { recursive: true, force: true });
    if (!fs.existsSync(template)) throw error;
  }
  return template;
}

/**
 * A new DATA_DIR holding a migrated embedded database without tenants, for a server or a command
 * started on it: a copy of the template data directory (a fraction of a second, where a process
 * on an empty directory spends seconds of CPU creating the database and migrating it). Created in
 * `parent` (default .tmp/) as `<prefix>XXXXXX`; the caller removes it. Tests of what a first start
 * on an empty directory does keep an empty one.
 */
export async function migratedDataDir(prefix = 'data-', parent = TMP_DIR): Promise<string> {
  const template = await ensureTemplateDataDir();
  fs.mkdirSync(parent, { recursive: true });
  const dir = fs.mkdtempSync(path.join(parent, prefix));
  fs.cpSync(path.join(template, 'pgdata'), path.join(dir, 'pgdata'), { recursive: true });
  return dir;
}
