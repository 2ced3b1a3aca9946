/**
 * On a tenant's verified custom domain only the tenant's client-facing paths answer (the portal,
 * its agents' webhooks); the platform's APIs and pages are 404 there (docs/white-label.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentFixture } from '../calls/helpers.js';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

async function addDomain(tenantId: string, hostname: string, verified: boolean) {
  await t.services.database.db
    .insertInto('tenant_domains')
    .values({
      id: `dom_${hostname.replace(/\W/g, '')}`,
      tenant_id: tenantId,
      hostname,
      verification_token: 'token',
      verified_at: verified ? new Date() : null,
      checked_at: null,
      check_problem: null,
      created_at: new Date(),
    })
    .execute();
}

describe('a verified custom domain', () => {
  it('answers the tenant’s webhooks and nothing of the platform', async () => {
    const fixture = await agentFixture(t);
    await addDomain(fixture.tenant.id, 'calls.brand-one.example', true);
    await addDomain(fixture.tenant.id, 'pending.brand-one.example', false);
    const on = (host: string) => ({ host, authorization: `Bearer ${fixture.tenant.key}` });

    const trigger = await t.inject({
      method: 'POST',
      url: `/webhooks/agents/${fixture.agent.webhook_id}/trigger`,
      headers: { host: 'calls.brand-one.example', 'content-type': 'application/json' },
      payload: JSON.stringify({ phone: '+14155550123', name: 'Ada' }),
    });
    expect(trigger.status).toBe(202);

    for (const url of [
      '/api/v1/plans',
      '/docs',
      '/api/v1/openapi.json',
      '/metrics',
      '/console/sign-in',
      '/admin/v1/tenants',
    ]) {
      const refused = await t.inject({ method: 'GET', url, headers: on('Calls.Brand-One.example:443') });
      expect(refused.status, url).toBe(404);
      expect(refused.body.error).toMatchObject({ code: 'not_found' });
      expect(refused.raw).not.toMatch(/voiceplane/i);
    }
    const root = await t.inject({ method: 'GET', url: '/', headers: { host: 'calls.brand-one.example' } });
    expect([root.status, root.headers.location]).toEqual([302, '/portal']);
    // The platform's own host, an address, and a name not (yet) verified are the platform as ever.
    for (const host of ['voiceplane.test', '127.0.0.1:3000', 'pending.brand-one.example']) {
      expect((await t.inject({ method: 'GET', url: '/api/v1/plans', headers: on(host) })).status, host).toBe(
        200,
      );
    }
  });
});
