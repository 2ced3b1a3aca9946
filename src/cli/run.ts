/**
 * `voiceplane <command> [flags]`: finds the command, parses its flags, loads the configuration,
 * runs it and prints its answer, text or one JSON document (`--json`), on stdout. Every failure
 * is one line on stderr, with nothing on stdout, and an exit code a script can branch on:
 *
 *   0   done
 *   1   refused or failed: the service's refusal (an unknown tenant, an email already taken), a
 *       locked data directory, a database that cannot be opened
 *   2   usage: an unknown command or flag, a missing flag, a value the API's schema refuses
 *   78  invalid configuration (EX_CONFIG), naming the variable, as the server does
 *
 * A command is refused for its flags before it opens the database, so a usage error changes nothing.
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AuditScope, runInAuditScope } from '../core/audit/context.js';
import { ConfigError, loadConfig } from '../core/config/config.js';
import { ApiError, type FieldIssue } from '../core/errors.js';
import { parseFlags, splitCommand, UsageError } from './args.js';
import type { Command } from './command.js';
import { COMMANDS } from './commands.js';
import { createContext } from './context.js';
import { commandHelp, generalHelp, topicHelp } from './help.js';
import { printable } from './output.js';

export const EXIT = { ok: 0, failed: 1, usage: 2, config: 78 } as const;

export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: Record<string, string | undefined>;
}

const processIo = (): CliIo => ({
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
});

function version(): string {
  const manifest = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../package.json');
  return JSON.parse(fs.readFileSync(manifest, 'utf8')).version;
}

/** The flag an API field came from, so a refusal names what the operator typed. */
function flagOf(command: Command | undefined, field: string): string {
  const base = field.split('.')[0];
  const mapped = command?.fieldFlags?.[base];
  if (mapped) return mapped;
  const flag = base.replace(/_/g, '-');
  return command && flag in command.flags ? `--${flag}` : base;
}

/** The service's message and its field issues, on one line. */
function describeApiError(error: ApiError, command: Command | undefined): string {
  const issues = Array.isArray(error.details) ? (error.details as FieldIssue[]) : [];
  if (issues.length === 0) return error.message;
  const described = issues.map((issue) =>
    issue.field ? `${flagOf(command, issue.field)} ${issue.issue}` : issue.issue,
  );
  return `${error.message.replace(/\.$/, '')}: ${described.join(' ')}`;
}

/** How a failure is told and which exit code it gets. */
function failure(error: unknown, command: Command | undefined): { message: string; code: number } {
  if (error instanceof UsageError) {
    const help = error.helpCommand ?? `voiceplane${command ? ` ${command.name}` : ''}`;
    return { message: `${error.message} See: ${help} --help`, code: EXIT.usage };
  }
  if (error instanceof ConfigError) return { message: error.message, code: EXIT.config };
  if (error instanceof ApiError) {
    // The input itself was refused (the API's 400/422 validation): the command line was wrong.
    const usage = error.code === 'validation_failed' || error.code === 'invalid_request';
    return { message: describeApiError(error, command), code: usage ? EXIT.usage : EXIT.failed };
  }
  return { message: error instanceof Error ? error.message : String(error), code: EXIT.failed };
}

function findCommand(words: readonly string[]): Command | undefined {
  const name = words.join(' ');
  return COMMANDS.find((command) => command.name === name);
}

function topicCommands(topic: string | undefined): Command[] {
  return COMMANDS.filter((command) => command.name.startsWith(`${topic} `));
}

/** The help asked for with `voiceplane help …`, `voiceplane --help` or `voiceplane <topic> --help`. */
function helpFor(words: readonly string[]): string[] {
  if (words.length === 0) return generalHelp(COMMANDS);
  const command = findCommand(words);
  if (command) return commandHelp(command);
  const topic = topicCommands(words[0]);
  if (words.length === 1 && topic.length > 0) return topicHelp(words[0], topic);
  throw new UsageError(`Unknown command "${words.join(' ')}".`, 'voiceplane');
}

function resolve(words: readonly string[]): Command {
  const command = findCommand(words);
  if (command) return command;
  for (let length = words.length - 1; length > 0; length--) {
    const named = findCommand(words.slice(0, length));
    if (named) {
      const label = `voiceplane ${named.name}`;
      throw new UsageError(`Unexpected argument "${words[length]}": ${label} takes only flags.`, label);
    }
  }
  const topic = topicCommands(words[0]);
  if (words.length === 1 && topic.length > 0) {
    const actions = topic.map((item) => item.name.split(' ')[1]);
    throw new UsageError(
      `"${words[0]}" needs a subcommand: ${actions.join(', ')}.`,
      `voiceplane ${words[0]}`,
    );
  }
  throw new UsageError(`Unknown command "${words.join(' ')}".`, 'voiceplane');
}

export async function runCli(argv: readonly string[], io: CliIo = processIo()): Promise<number> {
  const print = (lines: string[]) => io.stdout.write(`${lines.join('\n')}\n`);
  let command: Command | undefined;
  try {
    const { words, rest } = splitCommand(argv);
    if (words.length === 0 && (rest.includes('--version') || rest.includes('-v'))) {
      print([version()]);
      return EXIT.ok;
    }
    const asksHelp = rest.includes('--help') || rest.includes('-h');
    if (words[0] === 'help' || words.length === 0) {
      if (words.length === 0 && rest.length > 0 && !asksHelp) {
        throw new UsageError('Missing command.', 'voiceplane');
      }
      print(helpFor(words[0] === 'help' ? words.slice(1) : []));
      return EXIT.ok;
    }
    if (asksHelp && !findCommand(words)) {
      print(helpFor(words));
      return EXIT.ok;
    }
    command = resolve(words);
    const flags = parseFlags(rest, command.flags, `voiceplane ${command.name}`);
    if (flags.help) {
      print(commandHelp(command));
      return EXIT.ok;
    }
    const context = createContext(loadConfig(io.env), {
      stdin: io.stdin,
      note: (line) => io.stderr.write(`${line}\n`),
    });
    let output: Awaited<ReturnType<Command['run']>>;
    try {
      // The command's writes are audited as the CLI's, named by the operating-system user.
      const running = command;
      output = await runInAuditScope(cliAuditScope(io.env), () => running.run(context, flags));
    } finally {
      await context.close();
    }
    if (flags.json) io.stdout.write(`${JSON.stringify(output.json, null, 2)}\n`);
    else print(output.text.map(printable));
    return EXIT.ok;
  } catch (error) {
    const { message, code } = failure(error, command);
    io.stderr.write(`${printable(message)}\n`);
    return code;
  }
}

/** The audit scope of one command: actor `cli`, its id the operating-system user running it. */
function cliAuditScope(env: Record<string, string | undefined>): AuditScope {
  let user = env.USER ?? env.LOGNAME;
  if (!user) {
    try {
      user = os.userInfo().username;
    } catch {
      user = 'unknown';
    }
  }
  return {
    actor: { type: 'cli', id: user },
    ip: null,
    userAgent: 'voiceplane-cli',
    requestId: null,
    recorded: 0,
  };
}
