/**
 * `voiceplane api-keys create` and `owners create`: the printed key authenticates against the
 * partner API with exactly its scopes and is never shown again; the printed owner signs in to the
 * console. Refusals (an unknown tenant, a bad email or scope, an email already taken) exit non-zero
 * with the service's message and create nothing.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listApiKeys } from '../../src/api-keys/service.js';
import { consoleClient } from '../console/http.js';
import type { TestApp } from '../support/app.js';
import {
  type CliDatabase,
  cliDatabase,
  jsonOf,
  partnerRequest,
  STACK_LINE,
  voiceplane,
} from './cli-process.js';

let db: CliDatabase;
let tenantId: string;
const run = (args: string[], stdin?: string) => voiceplane(args, { env: db.env, stdin });

beforeAll(async () => {
  db = await cliDatabase();
  tenantId = jsonOf(await run(['tenants', 'create', '--name', 'Acme Agency', '--json'])).data.id;
});
afterAll(async () => {
  await db?.drop();
});

async function apiKeyRows(): Promise<number> {
  return db.withApp(async ({ services }) => {
    const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM api_keys`.execute(
      services.database.db,
    );
    return Number(rows[0].n);
  });
}

async function signIn(email: string, password: string) {
  return db.withApp(async ({ app }) => {
    const client = consoleClient({ app } as TestApp);
    const answer = await client.signIn(email, password);
    const overview = await client.get('/console');
    return { status: answer.status, location: answer.headers.location, overview };
  });
}

describe('api-keys create', { timeout: 120_000 }, () => {
  it('prints a key, once, that authenticates against the partner API', async () => {
    const created = await run([
      'api-keys',
      'create',
      '--tenant',
      tenantId,
      '--scopes',
      'all',
      '--name',
      'backend',
    ]);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout).toMatch(
      new RegExp(
        `^Created test API key key_\\w+ \\(backend\\) for tenant ${tenantId} \\(Acme Agency\\)\\.$`,
        'm',
      ),
    );
    const key = /^ {2}(vp_test_[0-9A-Za-z]{32})$/m.exec(created.stdout)?.[1] as string;
    expect(key).toBeDefined();

    await db.withApp(async ({ app, services }) => {
      const plans = await partnerRequest(app, key, '/api/v1/plans');
      expect(plans.status).toBe(200);
      expect(plans.body.data).toEqual([]);
      // Shown once: what the operator can list afterwards never holds the secret.
      const listed = await listApiKeys(services.database.db, services.clock, tenantId, {
        page: 1,
        limit: 20,
        sort_order: 'desc',
      });
      expect(listed.data).toHaveLength(1);
      expect(listed.data[0]).toMatchObject({ name: 'backend', status: 'active', env: 'test' });
      expect(JSON.stringify(listed)).not.toContain(key);
      const stored = await sql`SELECT * FROM api_keys`.execute(services.database.db);
      expect(JSON.stringify(stored.rows)).not.toContain(key);
    });
  });

  it('gives a --json key exactly the scopes asked for', async () => {
    const document = jsonOf(
      await run([
        'api-keys',
        'create',
        '--tenant',
        tenantId,
        '--scopes',
        'plans:read, users:read',
        '--env',
        'live',
        '--json',
      ]),
    );
    expect(document.data).toMatchObject({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^vp_live_[0-9A-Za-z]{32}$/),
      env: 'live',
      scopes: ['plans:read', 'users:read'],
      name: null,
      expires_at: null,
    });
    await db.withApp(async ({ app }) => {
      expect((await partnerRequest(app, document.data.key, '/api/v1/plans')).status).toBe(200);
      const agents = await partnerRequest(app, document.data.key, '/api/v1/agents');
      expect(agents.status).toBe(403);
      expect(agents.body.error.code).toBe('permission_denied');
    });
  });

  it('refuses an unknown tenant (exit 1) and refused values (exit 2), creating no key', async () => {
    const before = await apiKeyRows();
    const unknown = await run(['api-keys', 'create', '--tenant', 'ten_doesnotexist', '--scopes', 'all']);
    expect(unknown).toMatchObject({ code: 1, stdout: '', stderr: 'Tenant not found.\n' });

    const refusals: [string[], RegExp][] = [
      [['--scopes', 'users:read,users:fly'], /--scopes must be one of: users:read, users:write, /],
      [['--scopes', ','], /--scopes must have at least 1 items\./],
      [['--scopes', 'all', '--env', 'prod'], /--env must be one of: test, live\./],
      [['--scopes', 'all', '--expires-at', '2001-01-01T00:00:00Z'], /--expires-at must be in the future\./],
      [['--scopes', 'all', '--expires-at', 'tomorrow'], /--expires-at must be a valid date-time\./],
    ];
    for (const [flags, message] of refusals) {
      const refused = await run(['api-keys', 'create', '--tenant', tenantId, ...flags, '--json']);
      expect(refused.code).toBe(2);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toMatch(message);
      expect(refused.stderr).not.toMatch(STACK_LINE);
    }
    expect(await apiKeyRows()).toBe(before);
  });
});

describe('owners create', { timeout: 120_000 }, () => {
  it('creates an owner with a generated password, shown once, that signs in to the console', async () => {
    const created = await run([
      'owners',
      'create',
      '--tenant',
      tenantId,
      '--email',
      'ada@acme.example',
      '--name',
      'Ada',
    ]);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout).toMatch(
      /^Created owner mem_\w+ \(ada@acme\.example\) of tenant ten_\w+ \(Acme Agency\)\.$/m,
    );
    expect(created.stdout).toContain(
      'Sign in to the agency console at http://127.0.0.1:3000/console/sign-in',
    );
    const password = /^ {2}password: +([0-9A-Za-z]{20}) +\(generated; shown only now/m.exec(
      created.stdout,
    )?.[1];
    expect(password).toBeDefined();

    const session = await signIn('ada@acme.example', password as string);
    expect(session).toMatchObject({ status: 303, location: '/console' });
    expect(session.overview.status).toBe(200);
    expect(session.overview.body).toContain('Acme Agency');
    await db.withApp(async ({ services }) => {
      const members = await services.members.list(tenantId);
      expect(members).toEqual([
        expect.objectContaining({ email: 'ada@acme.example', name: 'Ada', role: 'owner' }),
      ]);
    });
  });

  it('takes the password from stdin with --password-stdin and never prints it (--json)', async () => {
    const password = 'correct horse battery staple';
    const document = jsonOf(
      await run(
        [
          'owners',
          'create',
          '--tenant',
          tenantId,
          '--email',
          'bob@acme.example',
          '--password-stdin',
          '--json',
        ],
        `${password}\n`,
      ),
    );
    expect(document).toEqual({
      data: expect.objectContaining({
        email: 'bob@acme.example',
        role: 'owner',
        tenant_id: tenantId,
        name: null,
      }),
      sign_in_url: 'http://127.0.0.1:3000/console/sign-in',
      generated_password: null,
    });
    expect((await signIn('bob@acme.example', password)).status).toBe(303);
    // The final line break was not part of the password.
    expect((await signIn('bob@acme.example', `${password}\n`)).status).not.toBe(303);
  });

  it('refuses a bad email or short password (exit 2), an unknown tenant or a taken email (exit 1), creating nobody', async () => {
    const cases: { args: string[]; stdin?: string; code: number; stderr: string }[] = [
      {
        args: ['--tenant', tenantId, '--email', 'not-an-email'],
        code: 2,
        stderr: 'The request has invalid fields: --email must be a valid email address.\n',
      },
      {
        args: ['--tenant', tenantId, '--email', 'carol@acme.example', '--password-stdin'],
        stdin: 'short\n',
        code: 2,
        stderr: 'The request has invalid fields: the password must be at least 8 characters long.\n',
      },
      {
        args: ['--tenant', tenantId, '--email', 'carol@acme.example', '--password-stdin'],
        stdin: 'pass\nword12\n',
        code: 2,
        stderr:
          '--password-stdin read a line break or another control character inside the value. See: voiceplane owners create --help\n',
      },
      {
        args: ['--tenant', tenantId, '--email', 'carol@acme.example', '--password-stdin'],
        stdin: 'x'.repeat(5_000),
        code: 2,
        stderr: '--password-stdin reads at most 4100 bytes. See: voiceplane owners create --help\n',
      },
      {
        args: ['--tenant', 'ten_doesnotexist', '--email', 'carol@acme.example'],
        code: 1,
        stderr: 'Tenant not found.\n',
      },
      {
        args: ['--tenant', tenantId, '--email', 'ada@acme.example'],
        code: 1,
        stderr: 'A member with this email already exists: --email is already a member.\n',
      },
    ];
    for (const { args, stdin, code, stderr } of cases) {
      const refused = await run(['owners', 'create', ...args], stdin);
      expect(refused).toEqual({ code, stdout: '', stderr });
    }
    await db.withApp(async ({ services }) => {
      const members = await services.members.list(tenantId);
      expect(members.map((member) => member.email).sort()).toEqual(['ada@acme.example', 'bob@acme.example']);
    });
  });
});
