/** `npm run db:migrate`: applies pending migrations to the configured database and exits. */
import { loadConfig } from '../core/config.js';
import { openDatabase } from '../core/db.js';
import { migrate } from '../core/migrate.js';

const config = loadConfig();
const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
try {
  const applied = await migrate(database);
  console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'Nothing to apply.');
} finally {
  await database.close();
}
