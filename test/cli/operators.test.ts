/**
 * `voiceplane operators create`: the first owner of the operator console, with a generated
 * password and a TOTP secret printed once, signs in at /operator with a code of that secret; a bad
 * role or email is refused with the flag's name and creates nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf, operatorClient } from '../operator/console-helpers.js';
import type { TestApp } from '../support/app.js';
import { type CliDatabase, cliDatabase, jsonOf, voiceplane } from './cli-process.js';

let db: CliDatabase;
const run = (args: string[], stdin?: string) => voiceplane(args, { env: db.env, stdin });

beforeAll(async () => {
  db = await cliDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('operators create', { timeout: 120_000 }, () => {
  it('prints the password and the TOTP secret once, and the owner signs in to /operator', async () => {
    const created = await run(['operators', 'create', '--email', 'ops@platform.example', '--role', 'owner']);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout).toMatch(
      /^Created owner stf_\w+ \(ops@platform\.example\) of the operator console\.$/m,
    );
    const password = /^ {2}password: +([0-9A-Za-z]{20}) +\(generated/m.exec(created.stdout)?.[1] as string;
    const secret = /^ {2}TOTP secret: +([A-Z2-7]{32}) +\(shown only now\)$/m.exec(
      created.stdout,
    )?.[1] as string;
    expect(password).toBeDefined();
    expect(secret).toBeDefined();
    expect(created.stdout).toMatch(
      /^ {2}TOTP URI: +otpauth:\/\/totp\/voiceplane:ops%40platform\.example\?secret=/m,
    );

    await db.withApp(async ({ app, services }) => {
      const t = { app, services } as TestApp;
      const client = operatorClient(t);
      const answer = await client.signIn(
        { id: '', email: 'ops@platform.example', password, secret, role: 'owner' },
        codeOf(secret),
      );
      expect(answer.status).toBe(303);
      expect((await client.get('/operator/staff')).body).toContain('ops@platform.example');
    });
  });

  it('takes the password from stdin and prints JSON with --json', async () => {
    const created = await run(
      [
        'operators',
        'create',
        '--email',
        'support@platform.example',
        '--role',
        'support',
        '--password-stdin',
        '--json',
      ],
      'a long enough password\n',
    );
    expect(created.code).toBe(0);
    const json = jsonOf(created);
    expect(json.data).toMatchObject({ email: 'support@platform.example', role: 'support' });
    expect(json.generated_password).toBeNull();
    expect(json.totp.uri).toContain(`secret=${json.totp.secret}`);
  });

  it('refuses an unknown role and a bad email, naming the flags, and creates nothing', async () => {
    const refused = await run(['operators', 'create', '--email', 'not-an-email', '--role', 'root']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('--email');
    expect(refused.stderr).toContain('--role');
    await db.withApp(async ({ services }) => {
      expect((await services.staff.list()).map((s) => s.email).sort()).toEqual([
        'ops@platform.example',
        'support@platform.example',
      ]);
    });
  });
});
