/**
 * The command line of `voiceplane`: the words naming a command, then flags. Flags are
 * `--name value` or `--name=value`; a boolean flag takes no value. Anything else (an unknown flag,
 * a stray word, a flag given twice, a required flag missing) is a UsageError: exit 2, before the
 * command opens the database.
 */

/** A mistake in the command line itself; the runner prints it with a pointer to the help. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** The help to point at (`voiceplane tenants create --help`), when a command was recognised. */
    readonly helpCommand?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface FlagSpec {
  /** `string` takes a value; `boolean` is on when present. */
  type: 'string' | 'boolean';
  description: string;
  required?: boolean;
  /** The value's placeholder in the help (`<id>`, `<email>`). */
  placeholder?: string;
}

export type FlagSpecs = Readonly<Record<string, FlagSpec>>;
export type FlagValues = Record<string, string | boolean | undefined>;

/** Flags every command takes. */
export const GLOBAL_FLAGS: FlagSpecs = {
  json: { type: 'boolean', description: 'Print one JSON document on stdout instead of text.' },
  help: { type: 'boolean', description: 'Show this help.' },
};

/** Splits argv into the command words (up to the first flag) and the rest. */
export function splitCommand(argv: readonly string[]): { words: string[]; rest: string[] } {
  const first = argv.findIndex((arg) => arg.startsWith('-'));
  const end = first === -1 ? argv.length : first;
  // `tenants:create` (Heroku's spelling) is the same command as `tenants create`.
  const words = argv.slice(0, end).flatMap((word) => word.split(':').filter(Boolean));
  return { words, rest: argv.slice(end) };
}

/**
 * Parses flags against the command's specs (plus the global ones). Required flags are checked
 * only when help was not asked for.
 */
export function parseFlags(args: readonly string[], specs: FlagSpecs, command: string): FlagValues {
  const all: FlagSpecs = { ...specs, ...GLOBAL_FLAGS };
  const values: FlagValues = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '-h') {
      values.help = true;
      continue;
    }
    if (!arg.startsWith('--') || arg === '--') {
      throw new UsageError(`Unexpected argument "${arg}": ${command} takes only flags.`, command);
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const spec = all[name];
    if (!spec) throw new UsageError(`Unknown flag --${name} for ${command}.`, command);
    if (values[name] !== undefined) throw new UsageError(`--${name} was given more than once.`, command);
    if (spec.type === 'boolean') {
      if (eq !== -1) throw new UsageError(`--${name} takes no value.`, command);
      values[name] = true;
      continue;
    }
    if (eq !== -1) {
      values[name] = arg.slice(eq + 1);
      continue;
    }
    const next = args[i + 1];
    if (next === undefined || next.startsWith('--')) {
      throw new UsageError(`--${name} needs a value (--${name} ${spec.placeholder ?? '<value>'}).`, command);
    }
    values[name] = next;
    i++;
  }
  if (!values.help) {
    const missing = Object.entries(specs)
      .filter(([name, spec]) => spec.required && values[name] === undefined)
      .map(([name]) => `--${name}`);
    if (missing.length > 0) {
      throw new UsageError(
        `Missing required flag${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}.`,
        command,
      );
    }
  }
  return values;
}

/** A string flag's value (parseFlags already refused a boolean or a missing required one). */
export function stringFlag(values: FlagValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** A whole decimal number as a number (what the API's query parser does), anything else as typed. */
export function integerFlag(values: FlagValues, name: string): number | string | undefined {
  const value = stringFlag(values, name);
  if (value === undefined) return undefined;
  return /^-?\d{1,20}$/.test(value) ? Number(value) : value;
}

/** The fields without those left undefined (flags not given), as a JSON body would arrive. */
export function given<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}
