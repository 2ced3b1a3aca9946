/**
 * `voiceplane tenants create` / `tenants list` and `migrate` on a real database: what is created
 * is what the operator API then lists, in a table or as the API's own JSON, and a refused command
 * creates nothing.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMigrations } from '../../src/core/db/migrate.js';
import { ENGINE, emptyPostgresDatabase } from '../support/databases.js';
import { type CliDatabase, cliDatabase, jsonOf, tenantCount, voiceplane } from './cli-process.js';

let db: CliDatabase;
const run = (args: string[]) => voiceplane(args, { env: db.env });

beforeAll(async () => {
  db = await cliDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('tenants create, then tenants list', { timeout: 120_000 }, () => {
  let acme: { id: string; name: string };
  let globex: { id: string; name: string };

  it('creates a tenant and says what to do next (text)', async () => {
    const created = await run(['tenants', 'create', '--name', 'Acme Agency']);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const id = /^Created tenant (ten_\w+) \(Acme Agency\)\.$/m.exec(created.stdout)?.[1];
    expect(id).toBeDefined();
    expect(created.stdout).toContain(`voiceplane owners create --tenant ${id} --email <email>`);
    acme = { id: id as string, name: 'Acme Agency' };
  });

  it('creates a tenant and prints the operator API’s answer (--json)', async () => {
    const document = jsonOf(await run(['tenants:create', '--name=Globex', '--json']));
    expect(Object.keys(document)).toEqual(['data']);
    expect(document.data).toMatchObject({ id: expect.stringMatching(/^ten_/), name: 'Globex', email: null });
    globex = document.data;
  });

  it('lists both, newest first, as a table', async () => {
    const listed = await run(['tenants', 'list']);
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +NAME +CREATED$/);
    expect(lines[1]).toMatch(new RegExp(`^${globex.id} +Globex +\\d{4}-\\d\\d-\\d\\dT`));
    expect(lines[2]).toMatch(new RegExp(`^${acme.id} +Acme Agency +\\d{4}-`));
    expect(lines[3]).toBe('Page 1 of 1 (2 tenants).');
  });

  it('lists them as the API’s page (--json), with its paging and sorting', async () => {
    const page = jsonOf(await run(['tenants', 'list', '--json']));
    expect(page.data.map((tenant: { id: string }) => tenant.id)).toEqual([globex.id, acme.id]);
    expect(page.pagination).toEqual({ page: 1, limit: 20, total: 2, pages: 1, has_more: false });
    await db.withApp(async ({ services }) => {
      const fromService = await services.tenants.list({
        page: 1,
        limit: 20,
        sort_by: 'created_at',
        sort_order: 'desc',
      });
      expect(page).toEqual(fromService);
    });

    const byName = jsonOf(
      await run(['tenants', 'list', '--sort-by', 'name', '--sort-order', 'asc', '--limit', '1', '--json']),
    );
    expect(byName.data.map((tenant: { name: string }) => tenant.name)).toEqual(['Acme Agency']);
    expect(byName.pagination).toMatchObject({ total: 2, pages: 2, has_more: true });
    const next = await run(['tenants', 'list', '--sort-by', 'name', '--sort-order', 'asc', '--limit', '1']);
    expect(next.stdout).toContain('Page 1 of 2 (2 tenants). Next: voiceplane tenants list --page 2');
  });

  it('refuses what the API refuses and creates nothing (exit 2)', async () => {
    const empty = await run(['tenants', 'create', '--name', '']);
    expect(empty).toMatchObject({ code: 2, stdout: '' });
    expect(empty.stderr).toBe('The request has invalid fields: --name must be at least 1 characters long.\n');
    const long = await run(['tenants', 'create', '--name', 'x'.repeat(201), '--json']);
    expect(long).toMatchObject({ code: 2, stdout: '' });
    expect(long.stderr).toMatch(/--name must be at most 200 characters long\./);
    expect(await tenantCount(db)).toBe(2);
  });

  it('prints a stored name with control characters harmlessly in the table, and exactly in JSON', async () => {
    const name = 'Evil\u001b[31m Agency\nnext line';
    const created = jsonOf(await run(['tenants', 'create', '--name', name, '--json']));
    expect(created.data.name).toBe(name);
    const table = await run(['tenants', 'list']);
    expect(table.stdout).not.toContain('\u001b');
    expect(table.stdout).toMatch(new RegExp(`^${created.data.id} +Evil\\?\\[31m Agency\\?next line `, 'm'));
  });
});

/** A database nothing was ever applied to: an empty PostgreSQL database, or a new data directory. */
async function freshDatabase(): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (ENGINE === 'postgres') {
    const { url, drop } = await emptyPostgresDatabase();
    return { env: { DATABASE_URL: url }, drop };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'voiceplane-cli-fresh-'));
  return { env: { DATA_DIR: dir }, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
}

describe('migrate', { timeout: 120_000 }, () => {
  it('applies every migration to a fresh database, then the commands find it ready', async () => {
    const fresh = await freshDatabase();
    try {
      const applied = jsonOf(await voiceplane(['migrate', '--json'], { env: fresh.env }));
      expect(applied).toEqual({ data: { applied: readMigrations().map((m) => m.name) } });
      const listed = await voiceplane(['tenants', 'list', '--json'], { env: fresh.env });
      expect(listed.stderr).toBe('');
      expect(jsonOf(listed).pagination.total).toBe(0);
    } finally {
      await fresh.drop();
    }
  });

  it('is applied first by any other command, as the server does, saying so on stderr only', async () => {
    const fresh = await freshDatabase();
    try {
      const created = await voiceplane(['tenants', 'create', '--name', 'Early', '--json'], {
        env: fresh.env,
      });
      expect(jsonOf(created).data.name).toBe('Early');
      expect(created.stderr).toContain(`Applied ${readMigrations().length} pending migration(s) first`);
      expect(await voiceplane(['migrate'], { env: fresh.env })).toMatchObject({
        code: 0,
        stdout: 'Nothing to apply.\n',
      });
    } finally {
      await fresh.drop();
    }
  });

  it('has nothing to apply on a migrated database (text and --json)', async () => {
    expect(await run(['migrate'])).toMatchObject({ code: 0, stdout: 'Nothing to apply.\n', stderr: '' });
    expect(jsonOf(await run(['migrate', '--json']))).toEqual({ data: { applied: [] } });
  });
});
