/**
 * The CLI's writes are audited like the API's: one entry per object a command creates, actor `cli`
 * named by the operating-system user, and no password, API key or TOTP secret the command prints.
 * A command that is refused leaves no entry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliDatabase, cliDatabase, jsonOf, voiceplane } from '../cli/cli-process.js';

let db: CliDatabase;
const OS_USER = 'ops-alice';
const run = (args: string[], stdin?: string) =>
  voiceplane(args, { env: { ...db.env, USER: OS_USER }, stdin });

const entries = () =>
  db.withApp(({ services }) =>
    services.database.db.selectFrom('audit_events').selectAll().orderBy('created_at').execute(),
  );

beforeAll(async () => {
  db = await cliDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('the CLI in the audit log', { timeout: 120_000 }, () => {
  let tenantId: string;

  it('tenants create leaves one entry with actor cli and the OS user', async () => {
    tenantId = jsonOf(await run(['tenants', 'create', '--name', 'Acme Agency', '--json'])).data.id;
    const rows = await entries();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      actor_type: 'cli',
      actor_id: OS_USER,
      action: 'tenant.created',
      object_type: 'tenant',
      object_id: tenantId,
      tenant_id: tenantId,
    });
  });

  it('a refused command (an owner of an unknown tenant) leaves none', async () => {
    const refused = await run(['owners', 'create', '--tenant', 'ten_missing', '--email', 'x@example.com']);
    expect(refused.code).not.toBe(0);
    expect(await entries()).toHaveLength(1);
  });

  it('commands that print secrets record field names only', async () => {
    const staff = jsonOf(
      await run(
        [
          'operators',
          'create',
          '--email',
          'ops@platform.example',
          '--role',
          'owner',
          '--password-stdin',
          '--json',
        ],
        'a long staff password 4471\n',
      ),
    );
    const key = jsonOf(await run(['api-keys', 'create', '--tenant', tenantId, '--scopes', 'all', '--json']));
    const rows = await entries();
    expect(rows.map((row) => [row.actor_type, row.action])).toEqual([
      ['cli', 'tenant.created'],
      ['cli', 'staff.created'],
      ['cli', 'api_key.created'],
    ]);
    const stored = JSON.stringify(rows);
    const secrets = ['a long staff password 4471', staff.totp.secret, key.data.key].filter(
      (value): value is string => typeof value === 'string' && value.length > 0,
    );
    expect(secrets.length).toBeGreaterThanOrEqual(2);
    for (const secret of secrets) expect(stored).not.toContain(secret);
  });
});
