/** What a `voiceplane` command is, and what it gets to run with. */
import type { Config } from '../core/config/config.js';
import type { Services } from '../services.js';
import type { FlagSpecs, FlagValues } from './args.js';

/** What the command opened for it: the configuration always, the database on first use. */
export interface CommandContext {
  readonly config: Config;
  /** Every service on the configured database, opened (pending migrations applied) on first use. */
  services(): Promise<Services>;
  /** Opens the database if needed; the migrations this run applied. */
  migrate(): Promise<string[]>;
  /** Standard input as text (`--password-stdin`); refuses a terminal. */
  readStdin(flag: string): Promise<string>;
}

/** A command's result: the JSON document (`--json`) and the lines an operator reads. */
export interface CommandOutput {
  json: unknown;
  text: string[];
}

export interface Command {
  /** The words that name it: `tenants create`. */
  name: string;
  summary: string;
  /** More about what it does, for its --help. */
  description?: string[];
  flags: FlagSpecs;
  examples?: string[];
  /**
   * The API field a flag fills, where the names differ (`expires_at` → `--expires-at`), so a
   * refusal names the flag the operator typed.
   */
  fieldFlags?: Readonly<Record<string, string>>;
  /**
   * Validates its flags (before anything is opened), then does its work. A refusal is an ApiError
   * from the same schema or service the operator API uses.
   */
  run(context: CommandContext, flags: FlagValues): Promise<CommandOutput>;
}
