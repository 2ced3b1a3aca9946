/**
 * The database and services a command runs on, opened only when the command first asks for them
 * (a command refused for its flags never touches the database) and closed when it ends.
 *
 * They are opened the way the server opens them (`core/db/startup.ts`): pending migrations are applied
 * first, and on the embedded database without SECRETS_KEY the stored secrets use DATA_DIR/secrets.key.
 * The embedded database belongs to one process: while a server runs on DATA_DIR, a command refuses
 * with the same one line as a second server would (use the operator API then).
 */
import type { Config } from '../core/config/config.js';
import type { Database } from '../core/db/database.js';
import { openAndMigrate } from '../core/db/startup.js';
import { dataDirSecretKey } from '../core/security/secrets.js';
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

/** The longest password the API takes is 1,024 characters; a few more bytes allow for its encoding. */
const MAX_STDIN_BYTES = 4_100;

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
      // A password, not a file: read at most a little more than the longest one allowed, decoded
      // as one UTF-8 text (a character split between chunks stays whole).
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of io.stdin) {
        const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
        chunks.push(bytes);
        size += bytes.length;
        if (size > MAX_STDIN_BYTES) throw new UsageError(`--${flag} reads at most ${MAX_STDIN_BYTES} bytes.`);
      }
      const text = Buffer.concat(chunks)
        .toString('utf8')
        .replace(/\r?\n$/, '');
      // Only the one final line break is dropped: any other control character could never be typed.
      if (/\p{Cc}/u.test(text)) {
        throw new UsageError(`--${flag} read a line break or another control character inside the value.`);
      }
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
