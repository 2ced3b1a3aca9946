/**
 * `npm run db:migrate` (`node dist/cli/migrate.js`): applies pending migrations to the configured
 * database and exits. It fails the way the server does: exit 78 naming a bad variable, exit 1
 * with one plain line for a locked data directory or a database it cannot open.
 */
import { ConfigError, loadConfig } from '../core/config.js';
import { openAndMigrate } from '../core/startup.js';

async function main(): Promise<number> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      return 78;
    }
    throw error;
  }
  const { database, applied } = await openAndMigrate(config);
  await database.close();
  console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'Nothing to apply.');
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  },
);
