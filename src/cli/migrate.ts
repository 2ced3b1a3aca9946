/**
 * `npm run db:migrate` (`node dist/cli/migrate.js`): `voiceplane migrate`, which applies pending
 * migrations to the configured database and exits. It fails the way the server does: exit 78
 * naming a bad variable, exit 1 with one plain line for a locked data directory or a database it
 * cannot open.
 */
import { runCli } from './run.js';

process.exitCode = await runCli(['migrate']);
