/**
 * Forward-only migrations: the numbered .sql files of /migrations, applied in order at start-up,
 * each in its own transaction, recorded in schema_migrations. An advisory lock keeps two
 * processes starting together from applying the same file twice.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from './database.js';

export const MIGRATIONS_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../migrations',
);
const MIGRATION_LOCK_ID = 727_001;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return fs
    .readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file,
      sql: fs.readFileSync(path.join(dir, file), 'utf8'),
    }));
}

/** Applies pending migrations; returns the names applied. */
export async function migrate(database: Database, migrations = readMigrations()): Promise<string[]> {
  return database.withScriptSession(async (exec) => {
    await exec(`SELECT pg_advisory_lock(${MIGRATION_LOCK_ID})`);
    try {
      await exec(
        `CREATE TABLE IF NOT EXISTS schema_migrations (
           version integer PRIMARY KEY,
           name text NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now()
         )`,
      );
      const done = await exec('SELECT version FROM schema_migrations');
      const doneVersions = new Set(done.map((row) => Number(row.version)));
      const applied: string[] = [];
      for (const migration of migrations) {
        if (doneVersions.has(migration.version)) continue;
        try {
          await exec(
            `BEGIN;\n${migration.sql}\n;INSERT INTO schema_migrations (version, name) VALUES (${migration.version}, '${migration.name}');\nCOMMIT;`,
          );
        } catch (error) {
          await exec('ROLLBACK').catch(() => {});
          throw new Error(`Migration ${migration.name} failed: ${(error as Error).message}`);
        }
        applied.push(migration.name);
      }
      return applied;
    } finally {
      await exec(`SELECT pg_advisory_unlock(${MIGRATION_LOCK_ID})`).catch(() => {});
    }
  });
}
