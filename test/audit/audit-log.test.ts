/**
 * The audit log (docs/audit.md): every write by an API key, the operator and a console member
 * leaves exactly one entry with the right actor, in the write's own transaction; partners read
 * only their tenant's; no secret value ever reaches an entry; the table is append-only and the
 * retention purge removes what is past 400 days.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInAuditScope } from '../../src/core/audit/context.js';
import { recordAudit } from '../../src/core/audit/record.js';
import { consoleClient } from '../console/http.js';
import { createPlan, createTenant, startTestApp, type TestApp, type TestTenant } from '../support/app.js';

let t: TestApp;
let acme: TestTenant;
let globex: TestTenant;
const USER_PASSWORD = 'Sup3r-secret-password-4417';
const MEMBER_PASSWORD = 'member password 9931';
const SMTP_PASSWORD = 'smtp-Pa55word-8812';

async function entriesOf(requestId: string) {
  const rows = await t.services.database.db
    .selectFrom('audit_events')
    .selectAll()
    .where('request_id', '=', requestId)
    .execute();
  return rows;
}

beforeAll(async () => {
  t = await startTestApp();
  acme = await createTenant(t, { name: 'Acme' });
  globex = await createTenant(t, { name: 'Globex' });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

describe('each write path leaves exactly one entry with its actor', { timeout: 60_000 }, () => {
  it('a partner API write: the key, the action, the object, the field names, where from', async () => {
    const created = await acme.request(
      'POST',
      '/api/v1/users',
      { email: 'ada@example.com', name: 'Ada', password: USER_PASSWORD },
      { 'user-agent': 'partner-crm/2.1', 'x-request-id': 'req_audit_partner_1' },
    );
    expect(created.status).toBe(201);
    const entries = await entriesOf('req_audit_partner_1');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      tenant_id: acme.id,
      actor_type: 'api_key',
      actor_id: acme.keyId,
      action: 'user.created',
      object_type: 'user',
      object_id: created.body.data.id,
      fields: ['email', 'name', 'password'],
      user_agent: 'partner-crm/2.1',
      request_id: 'req_audit_partner_1',
    });
    expect(entries[0].ip).toBeTruthy();
  });

  it('a refused write leaves none (the duplicate email rolls the transaction back)', async () => {
    const again = await acme.request(
      'POST',
      '/api/v1/users',
      { email: 'ada@example.com', name: 'Ada again', password: USER_PASSWORD },
      { 'x-request-id': 'req_audit_refused' },
    );
    expect(again.status).toBe(409);
    expect(await entriesOf('req_audit_refused')).toHaveLength(0);
  });

  it('an entry recorded in a transaction that rolls back is gone with it', async () => {
    const { db } = t.services.database;
    const scope = {
      actor: { type: 'system' as const, id: 'test' },
      ip: null,
      userAgent: null,
      requestId: 'req_rolled_back',
      recorded: 0,
    };
    await expect(
      runInAuditScope(scope, () =>
        db.transaction().execute(async (tx) => {
          await recordAudit(tx, {
            action: 'user.created',
            tenantId: acme.id,
            objectType: 'user',
            objectId: 'usr_x',
          });
          throw new Error('the write failed after its entry');
        }),
      ),
    ).rejects.toThrow('the write failed');
    expect(scope.recorded).toBe(1);
    expect(await entriesOf('req_rolled_back')).toHaveLength(0);
  });

  it('an operator write: actor operator_token, the tenant of the object', async () => {
    const plan = await createPlan(t, acme.id);
    const patched = await t.admin(
      'PATCH',
      `/admin/v1/plans/${plan.id}`,
      { name: 'Starter+' },
      { 'x-request-id': 'req_audit_operator' },
    );
    expect(patched.status).toBe(200);
    const entries = await entriesOf('req_audit_operator');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      tenant_id: acme.id,
      actor_type: 'operator_token',
      actor_id: 'admin_token',
      action: 'plan.updated',
      object_type: 'plan',
      object_id: plan.id,
      fields: ['name'],
    });
  });

  it('a console form: actor member', async () => {
    const member = await t.admin('POST', `/admin/v1/tenants/${acme.id}/members`, {
      email: 'owner@acme.example',
      password: MEMBER_PASSWORD,
      role: 'owner',
    });
    expect(member.status).toBe(201);
    const user = await acme.request('POST', '/api/v1/users', {
      email: 'bo@example.com',
      name: 'Bo',
      password: USER_PASSWORD,
    });
    const console = consoleClient(t, { 'x-request-id': 'req_audit_console' });
    await console.signIn('owner@acme.example', MEMBER_PASSWORD);
    await console.get(`/console/users/${user.body.data.id}`);
    const blocked = await console.post(`/console/users/${user.body.data.id}/block`, {});
    expect(blocked.status).toBe(303);
    const entries = (await entriesOf('req_audit_console')).filter(
      (row) => row.action === 'user.status_changed',
    );
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      tenant_id: acme.id,
      actor_type: 'member',
      actor_id: member.body.data.id,
      object_id: user.body.data.id,
      fields: ['status'],
    });
  });

  it('a write that finds nothing to change records nothing (a repeated delete)', async () => {
    const user = await acme.request('POST', '/api/v1/users', {
      email: 'cy@example.com',
      name: 'Cy',
      password: USER_PASSWORD,
    });
    const first = await acme.request('DELETE', `/api/v1/users/${user.body.data.id}`, undefined, {
      'x-request-id': 'req_del_1',
    });
    const second = await acme.request('DELETE', `/api/v1/users/${user.body.data.id}`, undefined, {
      'x-request-id': 'req_del_2',
    });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect((await entriesOf('req_del_1')).map((row) => row.action)).toEqual(['user.deleted']);
    expect(await entriesOf('req_del_2')).toHaveLength(0);
    expect(t.logs.some((line) => line.includes('audit entry missing'))).toBe(false);
  });
});

describe('a refused write leaves no entry', { timeout: 60_000 }, () => {
  const total = async () =>
    Number(
      (
        await t.services.database.db
          .selectFrom('audit_events')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('a partner or operator body that fails validation (422)', async () => {
    const before = await total();
    const partner = await acme.request('POST', '/api/v1/users', { email: 'not-an-email', name: '' });
    expect(partner.status).toBe(422);
    const plan = await createPlan(t, acme.id);
    const afterSetup = await total();
    const operator = await t.admin('PATCH', `/admin/v1/plans/${plan.id}`, { monthly_price: -5 });
    expect(operator.status).toBe(422);
    expect(afterSetup - before).toBe(1); // the plan the setup created, nothing for the refusals
    expect(await total()).toBe(afterSetup);
  });

  it('a console form with a field in error (re-shown with 422)', async () => {
    const console = consoleClient(t);
    await console.signIn('owner@acme.example', MEMBER_PASSWORD);
    await console.get('/console/do-not-call');
    const before = await total();
    const refused = await console.post('/console/do-not-call', { phone_number: '555-0100' });
    expect(refused.status).toBe(422);
    expect(refused.body).toContain('E.164');
    expect(await total()).toBe(before);
  });
});

describe('reading the log', { timeout: 60_000 }, () => {
  it('partners read only their tenant’s, newest first, filtered by actor, action, object and time', async () => {
    await globex.request('POST', '/api/v1/users', {
      email: 'gl@example.com',
      name: 'Gl',
      password: USER_PASSWORD,
    });
    const acmeLog = await acme.request('GET', '/api/v1/audit-events?limit=100');
    expect(acmeLog.status).toBe(200);
    expect(acmeLog.body.data.length).toBeGreaterThan(3);
    expect(acmeLog.body.data.every((entry: { tenant_id: string }) => entry.tenant_id === acme.id)).toBe(true);
    const times = acmeLog.body.data.map((entry: { created_at: string }) => entry.created_at);
    expect([...times].sort().reverse()).toEqual(times);

    const globexLog = await globex.request('GET', '/api/v1/audit-events?limit=100');
    expect(globexLog.body.data.every((entry: { tenant_id: string }) => entry.tenant_id === globex.id)).toBe(
      true,
    );
    expect(globexLog.body.data.map((entry: { action: string }) => entry.action)).toContain('user.created');

    const byAction = await acme.request('GET', '/api/v1/audit-events?action=plan.updated');
    expect(byAction.body.data).toHaveLength(1);
    expect(byAction.body.data[0]).toMatchObject({
      actor: { type: 'operator_token', id: 'admin_token' },
      object: { type: 'plan' },
      fields: ['name'],
    });
    const byActor = await acme.request(
      'GET',
      `/api/v1/audit-events?actor_type=api_key&actor_id=${acme.keyId}`,
    );
    expect(byActor.body.data.length).toBeGreaterThan(0);
    expect(byActor.body.data.every((entry: { actor: { id: string } }) => entry.actor.id === acme.keyId)).toBe(
      true,
    );
    const future = await acme.request('GET', '/api/v1/audit-events?created_after=2999-01-01T00:00:00.000Z');
    expect(future.body).toMatchObject({ data: [], pagination: { total: 0 } });
  });

  it('needs the scope audit:read (existing keys keep theirs)', async () => {
    const key = await t.admin('POST', `/admin/v1/tenants/${acme.id}/api-keys`, { scopes: ['users:read'] });
    const refused = await t.partner(key.body.data.key, 'GET', '/api/v1/audit-events');
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({
      code: 'permission_denied',
      details: { required_scopes: ['audit:read'] },
    });
  });

  it('the operator reads everyone’s, filtered by tenant', async () => {
    const all = await t.admin('GET', '/admin/v1/audit-events?limit=100');
    const tenants = new Set(all.body.data.map((entry: { tenant_id: string }) => entry.tenant_id));
    expect(tenants.has(acme.id) && tenants.has(globex.id)).toBe(true);
    const globexOnly = await t.admin('GET', `/admin/v1/audit-events?tenant_id=${globex.id}&limit=100`);
    expect(globexOnly.body.data.every((entry: { tenant_id: string }) => entry.tenant_id === globex.id)).toBe(
      true,
    );
    const invalid = await t.admin('GET', '/admin/v1/audit-events?created_after=yesterday');
    expect(invalid.status).toBe(422);
  });
});

describe('no secret value ever appears in an entry', { timeout: 60_000 }, () => {
  it('passwords, API keys, tools secrets, SMTP passwords, card tokens', async () => {
    const secrets: string[] = [USER_PASSWORD, MEMBER_PASSWORD, SMTP_PASSWORD, 'pm_card_visa'];
    const key = await t.admin('POST', `/admin/v1/tenants/${acme.id}/api-keys`, { scopes: ['users:read'] });
    secrets.push(key.body.data.key);
    const tools = await acme.request('POST', '/api/v1/tools-secret/rotate');
    expect(tools.status).toBe(200);
    secrets.push(tools.body.data.secret);
    const smtp = await t.admin('PATCH', `/admin/v1/tenants/${acme.id}`, {
      email: {
        smtp_url: `smtp://mailer:${SMTP_PASSWORD}@smtp.example.com:587`,
        from: 'Acme <no-reply@acme.example>',
      },
    });
    expect(smtp.status).toBe(200);
    const user = await acme.request('POST', '/api/v1/users', {
      email: 'card@example.com',
      name: 'Card',
      password: USER_PASSWORD,
    });
    const card = await t.admin('PUT', `/admin/v1/users/${user.body.data.id}/payment-method`, {
      token: 'pm_card_visa',
    });
    expect(card.status).toBe(200);

    const rows = await t.services.database.db.selectFrom('audit_events').selectAll().execute();
    const actions = new Set(rows.map((row) => row.action));
    for (const action of [
      'api_key.created',
      'tools_secret.rotated',
      'tenant.updated',
      'payment_method.set',
    ]) {
      expect(actions).toContain(action);
    }
    const everything = JSON.stringify(rows);
    for (const secret of secrets) expect(everything).not.toContain(secret);
  });
});

describe('append-only, kept 400 days', { timeout: 60_000 }, () => {
  it('refuses UPDATE and DELETE', async () => {
    const { db } = t.services.database;
    await expect(sql`UPDATE audit_events SET action = 'x'`.execute(db)).rejects.toThrow(/append-only/);
    await expect(sql`DELETE FROM audit_events`.execute(db)).rejects.toThrow(/append-only/);
  });

  it('the maintenance purge deletes entries older than 400 days, and only those', async () => {
    const { db } = t.services.database;
    const now = t.services.clock.now().getTime();
    const day = 24 * 60 * 60 * 1000;
    for (const [id, age] of [
      ['aud_old_401', 401],
      ['aud_recent_399', 399],
    ] as const) {
      await db
        .insertInto('audit_events')
        .values({
          id,
          tenant_id: acme.id,
          actor_type: 'api_key',
          actor_id: acme.keyId,
          action: 'user.created',
          object_type: 'user',
          object_id: 'usr_x',
          fields: [],
          ip: null,
          user_agent: null,
          request_id: null,
          created_at: new Date(now - age * day),
        })
        .execute();
    }
    expect(Object.keys(t.services.jobHandlers)).toContain('maintenance.purge_audit_events');
    const result = await t.services.audit.purgeExpired();
    expect(result).toEqual({ deleted: 1, more: false });
    const left = await db
      .selectFrom('audit_events')
      .select('id')
      .where('id', 'in', ['aud_old_401', 'aud_recent_399'])
      .execute();
    expect(left.map((row) => row.id)).toEqual(['aud_recent_399']);
  });
});
