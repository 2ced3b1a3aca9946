/**
 * `voiceplane` before it touches a database: the help, usage errors (exit 2, one line on stderr,
 * nothing on stdout, no database opened or created), an invalid configuration (exit 78 naming the
 * variable), a held data directory (exit 1, the server's line), and `config show`, which must never
 * print a secret it was given.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/api-keys/service.js';
import { ENGINE } from '../support/databases.js';
import { STACK_LINE, voiceplane } from './cli-process.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A DATA_DIR that does not exist yet: a command that opened the database would create it. */
function untouchedDataDir(): string {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'voiceplane-cli-usage-'));
  dirs.push(parent);
  return path.join(parent, 'data');
}

const COMMANDS = [
  'migrate',
  'tenants create',
  'tenants list',
  'owners create',
  'api-keys create',
  'operators create',
  'seed demo',
  'config show',
];

describe('help', () => {
  it('lists every command with `help`, `--help` and no arguments', async () => {
    for (const args of [['help'], ['--help'], []]) {
      const run = await voiceplane(args);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      for (const command of COMMANDS) expect(run.stdout).toContain(`  ${command}  `);
      expect(run.stdout).toMatch(/Exit codes: 0 done; 1 .*; 2 usage; 78 bad configuration/);
    }
  });

  it("shows a command's flags with `<command> --help`, `help <command>` and the topic:action spelling", async () => {
    const [flag, word, colon] = await Promise.all([
      voiceplane(['api-keys', 'create', '--help']),
      voiceplane(['help', 'api-keys', 'create']),
      voiceplane(['api-keys:create', '-h']),
    ]);
    expect(flag).toMatchObject({ code: 0, stderr: '' });
    expect(flag.stdout).toMatch(/^Usage: voiceplane api-keys create --tenant <id> --scopes <scope,…>\|all /);
    for (const scope of SCOPES) expect(flag.stdout).toContain(scope);
    expect(flag.stdout).toContain('--expires-at <timestamp>');
    expect(word.stdout).toBe(flag.stdout);
    expect(colon.stdout).toBe(flag.stdout);
  });

  it("lists a topic's commands with `tenants --help`", async () => {
    const run = await voiceplane(['tenants', '--help']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toContain('tenants create');
    expect(run.stdout).toContain('tenants list');
    expect(run.stdout).not.toContain('owners create');
  });

  it('prints the version', async () => {
    const manifest = JSON.parse(
      fs.readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8'),
    );
    expect(await voiceplane(['--version'])).toMatchObject({ code: 0, stdout: `${manifest.version}\n` });
  });
});

describe('usage errors: exit 2, one line, nothing opened', () => {
  const cases: { args: string[]; message: RegExp }[] = [
    { args: ['frobnicate'], message: /^Unknown command "frobnicate"\. See: voiceplane --help$/ },
    { args: ['tenants', 'delete', '--json'], message: /^Unknown command "tenants delete"\./ },
    {
      args: ['tenants'],
      message: /^"tenants" needs a subcommand: create, list\. See: voiceplane tenants --help$/,
    },
    {
      args: ['tenants', 'create'],
      message: /^Missing required flag: --name\. See: voiceplane tenants create --help$/,
    },
    {
      args: ['owners', 'create', '--json'],
      message: /^Missing required flags: --tenant, --email\. See: voiceplane owners create --help$/,
    },
    {
      args: ['tenants', 'create', '--name', 'Acme', '--slug', 'acme'],
      message: /^Unknown flag --slug for voiceplane tenants create\./,
    },
    {
      args: ['api-keys', 'create', '--scopes', 'all', '--tenant'],
      message: /^--tenant needs a value \(--tenant <id>\)\./,
    },
    {
      args: ['tenants', 'create', '--name', 'A', '--name', 'B'],
      message: /^--name was given more than once\./,
    },
    {
      args: ['tenants', 'list', 'extra'],
      message:
        /^Unexpected argument "extra": voiceplane tenants list takes only flags\. See: voiceplane tenants list --help$/,
    },
    {
      // A password is never a flag's value: it would stay in the shell history.
      args: ['owners', 'create', '--tenant', 'ten_x', '--email', 'a@b.example', '--password', 'hunter22'],
      message: /^Unknown flag --password for voiceplane owners create\./,
    },
    // Values the API's own schema refuses, before the database is opened.
    {
      args: ['owners', 'create', '--tenant', 'ten_x', '--email', 'not-an-email'],
      message: /^The request has invalid fields: --email must be a valid email address\.$/,
    },
    {
      args: ['api-keys', 'create', '--tenant', 'ten_x', '--scopes', 'users:read,calls:delete'],
      message: /^The request has invalid fields: --scopes must be one of: users:read, /,
    },
    {
      args: ['tenants', 'list', '--limit', '500', '--sort-order', 'sideways'],
      message:
        /^The request has invalid fields: --limit must be at most 100\. --sort-order must be one of: asc, desc\.$/,
    },
  ];

  for (const { args, message } of cases) {
    it(`voiceplane ${args.join(' ')}`, async () => {
      const dataDir = untouchedDataDir();
      const run = await voiceplane(args, { env: { DATA_DIR: dataDir } });
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr.trimEnd()).toMatch(message);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).not.toMatch(STACK_LINE);
      expect(fs.existsSync(dataDir)).toBe(false);
    });
  }
});

describe('configuration and the data directory', () => {
  it('never prints a password given in the query string of DATABASE_URL when the server refuses it', async () => {
    const run = await voiceplane(['tenants', 'list'], {
      env: { DATABASE_URL: 'postgres://ops@127.0.0.1:9/x?password=QSECRET&application_name=cli' },
    });
    expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(run.stderr).toContain('DATABASE_URL=postgres://***@127.0.0.1:9/x?password=***');
    expect(run.stderr).not.toContain('QSECRET');
  });

  it('exits 78 naming an invalid variable, like the server', async () => {
    // A real process: its exit code is what a script sees.
    const run = await voiceplane(['tenants', 'list'], {
      env: { DATABASE_URL: 'mysql://db.example/x' },
      spawn: true,
    });
    expect(run).toMatchObject({ code: 78, stdout: '' });
    expect(run.stderr).toBe(
      'Invalid configuration: DATABASE_URL must use one of postgres:, postgresql:, memory:\n',
    );
  });

  it.skipIf(ENGINE === 'postgres')(
    'refuses an embedded data directory a running process holds, with the server’s line, exit 1',
    async () => {
      const dir = untouchedDataDir();
      fs.mkdirSync(dir);
      const holder = spawn('sleep', ['60']);
      try {
        fs.writeFileSync(path.join(dir, 'voiceplane.lock'), String(holder.pid));
        const run = await voiceplane(['tenants', 'create', '--name', 'Acme'], { env: { DATA_DIR: dir } });
        expect(run).toMatchObject({ code: 1, stdout: '' });
        expect(run.stderr).toMatch(
          new RegExp(`^The data directory \\S+ is in use by process ${holder.pid}; `),
        );
        expect(run.stderr.trim().split('\n')).toHaveLength(1);
        expect(fs.readdirSync(dir)).toEqual(['voiceplane.lock']);
      } finally {
        holder.kill();
      }
    },
  );
});

describe('config show', () => {
  const secrets = {
    ADMIN_TOKEN: 'admin-token-7f3a9c1e5b2d8046',
    METRICS_TOKEN: 'metrics-token-4c8e2a6f0b1d3957',
    SECRETS_KEY: 'a1b2c3d4'.repeat(8),
    SECRETS_KEY_PREVIOUS: Buffer.alloc(32, 7).toString('base64'),
    STRIPE_SECRET_KEY: 'sk_test_51SecretStripeValue',
    PROCESSOR: 'stripe',
    DATABASE_URL:
      'postgres://voiceplane:db-password-93kd@db.internal:5432/voiceplane?sslpassword=ssl-pass-x7',
    REDIS_URL: 'redis://:redis-password-55q@cache.internal:6379',
    PLATFORM_SMTP_URL: 'smtps://mailer:smtp-password-k2@smtp.example.com:465',
    PLATFORM_EMAIL_FROM: 'Platform <noreply@example.com>',
  };
  const leaked = [
    secrets.ADMIN_TOKEN,
    secrets.METRICS_TOKEN,
    secrets.SECRETS_KEY,
    secrets.SECRETS_KEY_PREVIOUS,
    Buffer.from(secrets.SECRETS_KEY, 'hex').toString('base64'),
    secrets.STRIPE_SECRET_KEY,
    'db-password-93kd',
    'ssl-pass-x7',
    'redis-password-55q',
    'smtp-password-k2',
  ];

  it('shows the settings with every secret redacted, as text and as JSON, without opening the database', async () => {
    const env = { ...secrets, PORT: '4123', JOB_BATCH_SIZE: '40' };
    const [text, json] = await Promise.all([
      voiceplane(['config', 'show'], { env }),
      voiceplane(['config', 'show', '--json'], { env }),
    ]);
    for (const run of [text, json]) {
      expect(run).toMatchObject({ code: 0, stderr: '' });
      for (const secret of leaked) expect(run.stdout).not.toContain(secret);
    }
    expect(text.stdout).toMatch(/^port +4123$/m);
    expect(text.stdout).toMatch(/^jobBatchSize +40$/m);
    expect(text.stdout).toMatch(/^adminToken +\[redacted\]$/m);
    expect(text.stdout).toMatch(/^stripeSecretKey +\[redacted\]$/m);
    expect(text.stdout).toMatch(/^secretKeys\.current +\[redacted\] \(key id [\w-]{8}\)$/m);
    expect(text.stdout).toMatch(/^stripeApiBase +\(not set\)$/m);

    const { data } = JSON.parse(json.stdout);
    expect(data).toMatchObject({
      port: 4123,
      processor: 'stripe',
      adminToken: '[redacted]',
      metricsToken: '[redacted]',
      stripeSecretKey: '[redacted]',
      databaseUrl: 'postgres://***:***@db.internal:5432/voiceplane?sslpassword=***',
      redisUrl: 'redis://:***@cache.internal:6379',
      platformEmail: {
        smtpUrl: 'smtps://***:***@smtp.example.com:465',
        from: 'Platform <noreply@example.com>',
      },
      stripeApiBase: null,
      http: { headersTimeoutMs: 10_000 },
    });
    expect(data.secretKeys.previous).toHaveLength(1);
    expect(data.secretKeys.previous[0]).toMatch(/^\[redacted\] \(key id [\w-]{8}\)$/);
  });

  it('shows unset credentials as not set', async () => {
    const run = await voiceplane(['config', 'show', '--json'], { env: { DATA_DIR: untouchedDataDir() } });
    const { data } = JSON.parse(run.stdout);
    expect(data).toMatchObject({
      adminToken: null,
      stripeSecretKey: null,
      databaseUrl: null,
      processor: 'simulated',
    });
  });
});
