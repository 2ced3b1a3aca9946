/**
 * The database and services a command runs on, opened only when the command first asks for them
 * (a command refused for its flags never touches the database) and closed when it ends.
 *
 * They are opened the way the server opens them (`core/startup.ts`): pending migrations are applied
 * first, and on the embedded database without SECRETS_KEY the stored secrets use DATA_DIR/secrets.key.
 * The embedded database belongs to one process: while a server runs on DATA_DIR, a command refuses
 * with the same one line as a second server would (use the operator API then).
 */
import type { Config } from '../core/config.js';
import type { Database } from '../core/db.js';
import { dataDirSecretKey } from '../core/secrets.js';
import { openAndMigrate } from '../core/startup.js';
import { createRateLimits } from '../rate-limits/service.js';
import { createServices, type Services } from '../services.js';
import { UsageError } from './args.js';
import type { CommandContext } from './command.js';

export interface OpenedContext extends CommandContext {
  /** Closes whatever the command opened. */
  close(): Promise<void>;
}

interface Opened {
  database: Database;
  applied: string[];
}

export function createContext(
  config: Config,
  io: { stdin: NodeJS.ReadableStream & { isTTY?: boolean }; note(line: string): void },
): OpenedContext {
  let opening: Promise<Opened> | undefined;
  let services: Services | undefined;

  const open = () => {
    opening ??= openAndMigrate(config);
    return opening;
  };

  return {
    config,

    async migrate() {
      return (await open()).applied;
    },

    async services() {
      if (services) return services;
      const { database, applied } = await open();
      if (applied.length > 0) {
        // stderr: stdout is the command's answer (one JSON document with --json).
        io.note(`Applied ${applied.length} pending migration(s) first, as the server does at its start.`);
      }
      let effective = config;
      if (!config.secretKeys && !config.databaseUrl) {
        const { key, file, created } = dataDirSecretKey(config.dataDir);
        if (created)
          io.note(
            `SECRETS_KEY is not set: stored secrets are sealed with ${file}; back it up with DATA_DIR.`,
          );
        effective = { ...config, secretKeys: { current: key, previous: [] } };
      }
      services = createServices({
        config: effective,
        database,
        // No command takes a rate-limit token: no Redis connection for a one-shot process.
        adapters: { rateLimits: createRateLimits({ db: database.db, policies: config.rateLimits }) },
      });
      return services;
    },

    async readStdin(flag) {
      if (io.stdin.isTTY) {
        throw new UsageError(
          `--${flag} reads a pipe or a file (… --${flag} < file), not the terminal, so the value is never echoed.`,
        );
      }
      let text = '';
      for await (const chunk of io.stdin) text += String(chunk);
      return text;
    },

    async close() {
      await services?.close().catch(() => {});
      if (opening) {
        const opened = await opening.catch(() => undefined);
        await opened?.database.close().catch(() => {});
      }
    },
  };
}
