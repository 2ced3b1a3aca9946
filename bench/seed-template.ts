/**
 * The PostgreSQL seed, built once and reused: a million calls and a hundred thousand users take
 * minutes to load and index, so the migrated and seeded database is kept as a template,
 * `vp_bench_tpl_<hash>`, the hash covering the migrations, the seed's code, SEED_VERSION and the
 * sizes asked for. Each run copies it (`CREATE DATABASE … TEMPLATE …`, file by file: seconds)
 * into its own `vp_bench_<random>`, dropped at the end as before; the fixture (tenant, key, ids)
 * is stored in the template's `bench_fixture` table. A template whose hash no longer matches is
 * stale: dropped, and the new one built in `…_wip` and renamed when complete, so an interrupted
 * build is never reused. An advisory lock on the admin database keeps two runs from building at
 * once.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { DEFAULT_DATABASE_TIMEOUTS } from '../src/core/config/config.js';
import { openDatabase } from '../src/core/db/database.js';
import { MIGRATIONS_DIR, migrate, readMigrations } from '../src/core/db/migrate.js';
import { cleanups, log, ROOT } from './harness.js';
import { type BenchFixture, SEED_VERSION, seedBench } from './seed.js';

const TEMPLATE_PREFIX = 'vp_bench_tpl_';
const BUILD_LOCK_ID = 727_036;
const SEED_SOURCES = ['bench/seed.ts', 'bench/seed-calls.ts', 'bench/seed-history.ts'];

export interface SeedSize {
  users: number;
  calls: number;
}

/** The template's name for this code and these sizes. */
export function templateName(size: SeedSize): string {
  const hash = crypto.createHash('sha256');
  for (const migration of readMigrations(MIGRATIONS_DIR))
    hash.update(`${migration.name}\n${migration.sql}\n`);
  for (const file of SEED_SOURCES) hash.update(fs.readFileSync(path.join(ROOT, file)));
  hash.update(JSON.stringify({ version: SEED_VERSION, ...size }));
  return `${TEMPLATE_PREFIX}${hash.digest('hex').slice(0, 16)}`;
}

const withDb = (url: string, name: string) => {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
};

async function databases(admin: pg.Client, like: string): Promise<string[]> {
  const result = await admin.query<{ datname: string }>(
    'SELECT datname FROM pg_database WHERE datname LIKE $1 ORDER BY datname',
    [like],
  );
  return result.rows.map((row) => row.datname);
}

/** Migrates and seeds `name` (created empty here), storing the fixture in it. */
async function build(
  adminUrl: string,
  admin: pg.Client,
  name: string,
  size: SeedSize,
): Promise<BenchFixture> {
  await admin.query(`CREATE DATABASE ${name}`);
  const database = await openDatabase({
    databaseUrl: withDb(adminUrl, name),
    dataDir: '',
    poolSize: 4,
    // Seeding statements run for seconds each, longer on a loaded machine: no statement timeout.
    timeouts: { ...DEFAULT_DATABASE_TIMEOUTS, statementMs: 0, queryMs: 0 },
  });
  try {
    await migrate(database);
    const fixture = await seedBench(database, size);
    await sql`CREATE TABLE bench_fixture (fixture jsonb NOT NULL)`.execute(database.db);
    await sql`INSERT INTO bench_fixture (fixture) VALUES (${JSON.stringify(fixture)}::jsonb)`.execute(
      database.db,
    );
    return fixture;
  } finally {
    await database.close();
  }
}

/**
 * A fresh benchmark database copied from the seed template (built first when missing or stale),
 * dropped at exit unless `keep`; its URL and fixture.
 */
export async function seededPostgres(
  adminUrl: string,
  size: SeedSize,
  options: { keep: boolean; rebuild: boolean },
): Promise<{ url: string; fixture: BenchFixture; note: string }> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    const template = templateName(size);
    await admin.query('SELECT pg_advisory_lock($1)', [BUILD_LOCK_ID]);
    let note: string;
    try {
      const existing = await databases(admin, `${TEMPLATE_PREFIX}%`);
      const stale = existing.filter((name) => name !== template || options.rebuild);
      for (const name of stale) {
        log(`dropping seed template ${name} (${name.endsWith('_wip') ? 'unfinished' : 'stale'})`);
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }
      if (existing.includes(template) && !options.rebuild) {
        note = `seed reused from template ${template}`;
      } else {
        const started = performance.now();
        log(`building seed template ${template} (${size.users} users, ${size.calls} calls) …`);
        const fixture = await build(adminUrl, admin, `${template}_wip`, size);
        await admin.query(`ALTER DATABASE ${template}_wip RENAME TO ${template}`);
        const seconds = (performance.now() - started) / 1000;
        log(
          `  built in ${seconds.toFixed(1)} s; steps (s): ${Object.entries(fixture.seedSteps)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}`,
        );
        note = `seed template ${template} built in ${seconds.toFixed(0)} s (migrations, seed, indexes, VACUUM ANALYZE)`;
      }
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [BUILD_LOCK_ID]).catch(() => {});
    }

    const name = `vp_bench_${crypto.randomBytes(5).toString('hex')}`;
    const copyStarted = performance.now();
    // FILE_COPY: the template's files copied as they are (a checkpoint before), much faster for a
    // database of this size than WAL-logging every block (PostgreSQL 15's default).
    await admin
      .query(`CREATE DATABASE ${name} TEMPLATE ${template} STRATEGY = FILE_COPY`)
      .catch(async (error: { code?: string }) => {
        if (error.code !== '42601' && error.code !== '42704') throw error;
        await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`); // before PostgreSQL 15
      });
    cleanups.push(async () => {
      if (options.keep) log(`kept database ${name}`);
      else {
        const client = new pg.Client({ connectionString: adminUrl });
        await client.connect();
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
        await client.end().catch(() => {});
      }
    });
    const copySeconds = (performance.now() - copyStarted) / 1000;
    const url = withDb(adminUrl, name);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    let fixture: BenchFixture;
    try {
      fixture = (await client.query<{ fixture: BenchFixture }>('SELECT fixture FROM bench_fixture')).rows[0]
        .fixture;
    } finally {
      await client.end().catch(() => {});
    }
    log(
      `database ${name} on ${new URL(adminUrl).host}, copied from ${template} in ${copySeconds.toFixed(1)} s`,
    );
    return { url, fixture, note: `${note}; copied into ${name} in ${copySeconds.toFixed(1)} s` };
  } finally {
    await admin.end().catch(() => {});
  }
}
