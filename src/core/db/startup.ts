/**
 * Opening the configured database and bringing its schema up to date, with the messages an
 * operator sees when that fails: shared by the server and `npm run db:migrate`, so both say
 * the same thing about a locked data directory or an unreachable server.
 */
import type { Config } from '../config/config.js';
import { redactUrl } from '../security/redact-url.js';
import { type Database, openDatabase } from './database.js';
import type { HealthLogger } from './health.js';
import { DirectoryLockedError } from './lockfile.js';
import { migrate } from './migrate.js';

/** Where the database is, for messages: the URL without its credentials, or the data directory. */
export function describeDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>): string {
  if (!config.databaseUrl) return `the embedded database in DATA_DIR=${config.dataDir}`;
  return `DATABASE_URL=${redactUrl(config.databaseUrl)}`;
}

/**
 * Opens the database and applies pending migrations; returns the names applied. Failures are
 * errors whose message alone is what to print (no stack: nothing in it helps an operator).
 * `logger` receives the two lines of each outage later on (core/db/health.ts).
 */
export async function openAndMigrate(
  config: Config,
  logger?: HealthLogger,
): Promise<{ database: Database; applied: string[] }> {
  let database: Database;
  try {
    database = await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      timeouts: config.databaseTimeouts,
      poolSize: config.databasePoolSize,
      logger,
    });
  } catch (error) {
    if (error instanceof DirectoryLockedError) throw error;
    throw new Error(`Could not open ${describeDatabase(config)}: ${(error as Error).message}`);
  }
  try {
    return { database, applied: await migrate(database) };
  } catch (error) {
    await database.close().catch(() => {});
    const message = (error as Error).message || String((error as { code?: string }).code ?? error);
    throw new Error(`Could not prepare ${describeDatabase(config)}: ${message}`);
  }
}
