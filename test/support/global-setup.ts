/**
 * Once per run: compiles the sources for the processes tests spawn (compiled.ts), and builds the
 * migrated template (a PGlite tarball and data directory, or a PostgreSQL template database).
 */
import fs from 'node:fs';
import { openDatabase } from '../../src/core/db/database.js';
import { migrate } from '../../src/core/db/migrate.js';
import { compiledRoot } from './compiled.js';
import {
  adminQuery,
  adminQueryWhenUnused,
  ENGINE,
  ensureTemplateDataDir,
  POSTGRES_URL,
  postgresAnswers,
  runDatabasePrefix,
  TMP_DIR,
  templateDatabaseName,
  templatePath,
  urlForDatabase,
} from './databases.js';

async function databaseExists(name: string): Promise<boolean> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    return rows.length > 0;
  } finally {
    await client.end();
  }
}

export async function setup() {
  fs.mkdirSync(TMP_DIR, { recursive: true });
  await compiledRoot();
  if (ENGINE === 'postgres') {
    if (!(await postgresAnswers())) {
      throw new Error(`TEST_DATABASE=postgres but no PostgreSQL answers at ${POSTGRES_URL}`);
    }
    // The template is named after the migrations' hash and built under a temporary name, then
    // renamed: concurrent runs share a finished template and never see a half-migrated one.
    const name = templateDatabaseName();
    if (await databaseExists(name)) return;
    const building = `${name}_build_${process.pid}`;
    await adminQuery(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
    await adminQuery(`CREATE DATABASE ${building}`);
    const database = await openDatabase({ databaseUrl: urlForDatabase(building), dataDir: '' });
    await migrate(database);
    await database.close();
    try {
      await adminQueryWhenUnused(`ALTER DATABASE ${building} RENAME TO ${name}`);
    } catch (error) {
      await adminQuery(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      if (!(await databaseExists(name))) throw error;
    }
    return;
  }
  if (!fs.existsSync(templatePath())) await buildTemplateTarball();
  await ensureTemplateDataDir();
}

async function buildTemplateTarball() {
  const database = await openDatabase({ databaseUrl: 'memory://', dataDir: '' });
  await migrate(database);
  const dump = await database.pglite!.dumpDataDir('gzip');
  await database.close();
  const tmp = `${templatePath()}.${process.pid}`;
  fs.writeFileSync(tmp, Buffer.from(await dump.arrayBuffer()));
  fs.renameSync(tmp, templatePath());
}

export async function teardown() {
  if (ENGINE !== 'postgres') return;
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const prefix = runDatabasePrefix(process.pid).replace(/_/g, '\\_');
    const { rows } = await client.query('SELECT datname FROM pg_database WHERE datname LIKE $1', [
      `${prefix}%`,
    ]);
    for (const row of rows) await client.query(`DROP DATABASE IF EXISTS ${row.datname} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
