/**
 * Suspending a tenant: while suspended, its API keys and call-trigger webhooks answer 403
 * `permission_denied` saying the account is suspended, its console shows the suspended page and
 * takes no write, its portal shows a neutral "unavailable" page in the agency's brand, calls to its
 * numbers are declined and its queued calls wait. Lifting brings every one of them back, and
 * nothing of the tenant was deleted on the way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentFixture, getCall, trigger } from '../calls/helpers.js';
import { consoleClient } from '../console/http.js';
import { createAgency, createClient, portalClient } from '../portal/helpers.js';
import { createTenant, createUser, startTestApp, type TestApp } from '../support/app.js';
import { expectInvalidFields } from '../support/expect.js';
import { addStaff, operatorClient } from './console-helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const suspend = (tenantId: string, body: unknown = {}) =>
  t.admin('POST', `/admin/v1/tenants/${tenantId}/suspend`, body);
const lift = (tenantId: string) => t.admin('POST', `/admin/v1/tenants/${tenantId}/unsuspend`);

function expectSuspendedRefusal(answer: { status: number; body: any; raw: string }) {
  expect(answer.status, answer.raw).toBe(403);
  expect(answer.body.error.code).toBe('permission_denied');
  expect(answer.body.error.message).toMatch(/suspended/);
}

describe('the operator API', () => {
  it('suspends with a note, keeps the first time on a repeat, and lifts', async () => {
    const tenant = await createTenant(t);
    const first = await suspend(tenant.id, { reason: 'Unpaid invoice 2026-10' });
    expect(first.status, first.raw).toBe(200);
    expect(first.body.data).toMatchObject({ id: tenant.id, suspended_reason: 'Unpaid invoice 2026-10' });
    expect(first.body.data.suspended_at).toEqual(expect.any(String));
    const again = await suspend(tenant.id, { reason: 'Still unpaid' });
    expect(again.body.data.suspended_at).toBe(first.body.data.suspended_at);
    expect(again.body.data.suspended_reason).toBe('Still unpaid');
    expect((await t.admin('GET', `/admin/v1/tenants/${tenant.id}`)).body.data.suspended_at).toBe(
      first.body.data.suspended_at,
    );
    const lifted = await lift(tenant.id);
    expect(lifted.status).toBe(200);
    expect(lifted.body.data).toMatchObject({ suspended_at: null, suspended_reason: null });
  });

  it('answers 404 for an unknown tenant and 422 naming a bad note', async () => {
    expect((await suspend('ten_unknown')).status).toBe(404);
    expect((await lift('ten_unknown')).status).toBe(404);
    const tenant = await createTenant(t);
    expectInvalidFields(await suspend(tenant.id, { reason: 'x'.repeat(501) }), ['reason']);
    expect((await t.admin('GET', `/admin/v1/tenants/${tenant.id}`)).body.data.suspended_at).toBeNull();
  });

  it('needs the operator token', async () => {
    const tenant = await createTenant(t);
    expect((await t.partner(tenant.key, 'POST', `/admin/v1/tenants/${tenant.id}/suspend`, {})).status).toBe(
      401,
    );
  });
});

describe('a suspended tenant’s API keys and webhooks', () => {
  it('are refused with 403 while suspended, and work again after the lift with nothing lost', async () => {
    const fixture = await agentFixture(t);
    const { tenant } = fixture;
    const before = await tenant.request('GET', '/api/v1/users');
    expect(before.status).toBe(200);
    const placed = await trigger(t, fixture.agent.webhook_id, { phone: '+14155550101', name: 'Ada' });
    expect(placed.status, placed.raw).toBe(202);
    const other = await createTenant(t);

    expect((await suspend(tenant.id)).status).toBe(200);
    expectSuspendedRefusal(await tenant.request('GET', '/api/v1/users'));
    expectSuspendedRefusal(await tenant.request('POST', '/api/v1/users', { email: 'new@example.com' }));
    expectSuspendedRefusal(
      await trigger(t, fixture.agent.webhook_id, { phone: '+14155550102', name: 'Ada' }),
    );
    // Another tenant is untouched.
    expect((await other.request('GET', '/api/v1/users')).status).toBe(200);

    expect((await lift(tenant.id)).status).toBe(200);
    const after = await tenant.request('GET', '/api/v1/users');
    expect(after.status).toBe(200);
    expect(after.body.data).toEqual(before.body.data);
    expect((await tenant.request('GET', `/api/v1/calls/${placed.body.data.id}`)).status).toBe(200);
    expect((await tenant.request('GET', `/api/v1/agents/${fixture.agent.id}`)).status).toBe(200);
    expect((await trigger(t, fixture.agent.webhook_id, { phone: '+14155550103', name: 'Ada' })).status).toBe(
      202,
    );
  });

  it('holds queued calls until the lift, then dials them', async () => {
    const fixture = await agentFixture(t);
    const placed = await trigger(t, fixture.agent.webhook_id, { phone: '+14155550104', name: 'Ada' });
    expect(placed.status).toBe(202);
    await suspend(fixture.tenant.id);
    await t.services.jobRunner.drain();
    expect((await getCall(t, placed.body.data.id)).status).toBe('queued');
    await lift(fixture.tenant.id);
    await t.services.jobRunner.drain();
    expect((await getCall(t, placed.body.data.id)).status).toBe('completed');
  });
});

describe('calls to a suspended tenant’s numbers', () => {
  it('are declined and recorded while suspended, answered after the lift', async () => {
    const tenant = await createTenant(t);
    const number = '+14155550777';
    expect(
      (await t.admin('POST', '/admin/v1/phone-numbers', { phone_number: number, tenant_id: tenant.id }))
        .status,
    ).toBe(201);
    const fixture = await agentFixture(t, { tenant, agent: { phone_number: number } });
    await tenant.request('PATCH', `/api/v1/phone-numbers/${encodeURIComponent(number)}`, {
      inbound_agent_id: fixture.agent.id,
    });
    await suspend(tenant.id);
    const declined = await t.admin('POST', '/admin/v1/simulator/inbound-calls', {
      to: number,
      from: '+14155550123',
    });
    expect(declined.status, declined.raw).toBe(201);
    expect(declined.body.data).toMatchObject({ status: 'failed', ended_reason: 'tenant-suspended' });
    await lift(tenant.id);
    const answered = await t.admin('POST', '/admin/v1/simulator/inbound-calls', {
      to: number,
      from: '+14155550123',
    });
    expect(answered.body.data.status).not.toBe('failed');
  });
});

describe('a suspended tenant’s console', () => {
  it('shows members the suspended page on every page, takes no write, and comes back after the lift', async () => {
    const tenant = await createTenant(t);
    const created = await t.admin('POST', `/admin/v1/tenants/${tenant.id}/members`, {
      email: 'admin@suspended.example',
      password: 'member password 123',
      role: 'admin',
    });
    expect(created.status, created.raw).toBe(201);
    const client = consoleClient(t);
    expect((await client.signIn('admin@suspended.example', 'member password 123')).status).toBe(303);
    expect((await client.get('/console/users')).status).toBe(200);

    await suspend(tenant.id);
    for (const url of ['/console', '/console/users', '/console/api-keys', '/console/settings']) {
      const page = await client.get(url);
      expect(page.status, url).toBe(403);
      expect(page.body).toContain('Account suspended');
      expect(page.body).toContain('This account is suspended');
    }
    const write = await client.post('/console/api-keys', { name: 'sneaky', scopes: 'users:read' });
    expect(write.status).toBe(403);
    expect(write.body).toContain('Account suspended');
    expect((await tenant.request('GET', '/api/v1/users')).status).toBe(403);

    await lift(tenant.id);
    expect((await client.get('/console/users')).status).toBe(200);
    const keys = await t.admin('GET', `/admin/v1/tenants/${tenant.id}/api-keys`);
    expect(keys.body.data.map((key: any) => key.name)).not.toContain('sneaky');
  });
});

describe('a suspended tenant’s portal', () => {
  it('shows its clients a neutral page in the agency’s brand, then the portal again', async () => {
    const agency = await createAgency(t, { name: 'Paused Dental', color: '#0f766e' });
    const client = await createClient(t, agency);
    const browser = portalClient(t);
    expect((await browser.signIn(agency.base, client.email, client.password)).status).toBe(303);
    expect((await browser.get(agency.base)).status).toBe(200);

    await suspend(agency.tenant.id, { reason: 'Chargeback investigation' });
    for (const url of [agency.base, `${agency.base}/calls`, `${agency.base}/sign-in`]) {
      const page = await browser.get(url);
      expect(page.status, url).toBe(403);
      expect(page.body).toContain('Temporarily unavailable');
      expect(page.body).toContain('Paused Dental');
      expect(page.body).not.toMatch(/voiceplane|suspend|chargeback/i);
    }
    const signIn = await portalClient(t).post(`${agency.base}/sign-in`, {
      email: client.email,
      password: client.password,
    });
    expect(signIn.status).toBe(403);

    await lift(agency.tenant.id);
    expect((await browser.get(agency.base)).status).toBe(200);
  });
});

describe('the operator console’s suspend and lift', () => {
  it('lets an admin suspend with a note and lift, and refuses support', async () => {
    const tenant = await createTenant(t, { name: 'Console Suspended Ltd' });
    await createUser(tenant);
    const admin = operatorClient(t);
    expect((await admin.signIn(await addStaff(t, 'admin'))).status).toBe(303);
    const page = await admin.get(`/operator/tenants/${tenant.id}`);
    expect(page.body).toContain('data-confirm="Suspend Console Suspended Ltd?');
    const suspended = await admin.post(`/operator/tenants/${tenant.id}/suspend`, { reason: 'Abuse report' });
    expect(suspended.status).toBe(303);
    const shown = await admin.get(`/operator/tenants/${tenant.id}`);
    expect(shown.body).toContain('Suspended since');
    expect(shown.body).toContain('Abuse report');
    expect(shown.body).toContain('Lift the suspension');
    expect((await tenant.request('GET', '/api/v1/users')).status).toBe(403);

    const support = operatorClient(t);
    expect((await support.signIn(await addStaff(t, 'support'))).status).toBe(303);
    expect((await support.post(`/operator/tenants/${tenant.id}/lift`, {})).status).toBe(403);
    expect((await tenant.request('GET', '/api/v1/users')).status).toBe(403);

    expect((await admin.post(`/operator/tenants/${tenant.id}/lift`, {})).status).toBe(303);
    expect((await tenant.request('GET', '/api/v1/users')).status).toBe(200);
    expect((await tenant.request('GET', '/api/v1/users')).body.data).toHaveLength(1);
  });
});
