/** The help `voiceplane help`, `voiceplane <command> --help` and `voiceplane <topic> --help` print. */
import { type FlagSpecs, GLOBAL_FLAGS } from './args.js';
import type { Command } from './command.js';
import { keyValueLines } from './output.js';

const EXIT_CODES =
  'Exit codes: 0 done; 1 refused or failed (the reason on stderr); 2 usage; 78 bad configuration.';

function flagLabel(name: string, spec: FlagSpecs[string]): string {
  return spec.type === 'boolean' ? `--${name}` : `--${name} ${spec.placeholder ?? '<value>'}`;
}

function flagLines(flags: FlagSpecs): string[] {
  return keyValueLines(
    Object.entries(flags).map(([name, spec]) => [
      `  ${flagLabel(name, spec)}`,
      `${spec.description}${spec.required ? ' Required.' : ''}`,
    ]),
  );
}

function synopsis(command: Command): string {
  const flags = Object.entries(command.flags).map(([name, spec]) =>
    spec.required ? flagLabel(name, spec) : `[${flagLabel(name, spec)}]`,
  );
  return ['voiceplane', command.name, ...flags, '[--json]'].join(' ');
}

function commandList(commands: readonly Command[]): string[] {
  return keyValueLines(commands.map((command) => [`  ${command.name}`, command.summary]));
}

export function generalHelp(commands: readonly Command[]): string[] {
  return [
    'voiceplane: the operator commands of a voiceplane deployment.',
    '',
    'Usage: voiceplane <command> [flags]      (npx voiceplane …, or npm run -s cli -- …)',
    '',
    'Commands:',
    ...commandList(commands),
    '',
    'Flags every command takes:',
    ...flagLines(GLOBAL_FLAGS),
    '',
    'Commands run on the database and settings the server would use here (DATABASE_URL or DATA_DIR,',
    'and the other variables of the configuration); the embedded database cannot be used while a',
    "server runs on it. Writes go through the operator API's own validation and services.",
    EXIT_CODES,
    'More: voiceplane help <command>, or docs/cli.md.',
  ];
}

export function commandHelp(command: Command): string[] {
  return [
    `Usage: ${synopsis(command)}`,
    '',
    command.summary,
    ...(command.description?.length ? ['', ...command.description] : []),
    '',
    'Flags:',
    ...flagLines({ ...command.flags, ...GLOBAL_FLAGS }),
    ...(command.examples?.length ? ['', 'Examples:', ...command.examples.map((line) => `  ${line}`)] : []),
    '',
    EXIT_CODES,
  ];
}

/** The commands under one topic (`voiceplane tenants --help`). */
export function topicHelp(topic: string, commands: readonly Command[]): string[] {
  return [
    `Commands of ${topic}:`,
    ...commandList(commands),
    '',
    `More: voiceplane ${topic} <command> --help`,
  ];
}
