/** Helpers shared by the email tests. */
import { expect } from 'vitest';
import { createTenant, type TestApp, type TestTenant } from '../support/app.js';

export const EMAIL_QUEUE = 'emails.send';

/** A tenant with an API key and the given email settings. */
export async function createEmailTenant(
  t: TestApp,
  settings: { smtp_url: string; from: string } | null,
  name = 'Acme Voice',
): Promise<TestTenant> {
  const tenant = await createTenant(t, { name });
  if (settings) {
    const patched = await t.admin('PATCH', `/admin/v1/tenants/${tenant.id}`, { email: settings });
    expect(patched.status, patched.raw).toBe(200);
  }
  return tenant;
}

export async function outboxRows(t: TestApp, tenantId: string) {
  return t.services.database.db
    .selectFrom('email_outbox')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function emailJobs(t: TestApp, tenantId: string) {
  return t.services.database.db
    .selectFrom('jobs')
    .selectAll()
    .where('queue', '=', EMAIL_QUEUE)
    .where('tenant_id', '=', tenantId)
    .orderBy('id')
    .execute();
}

export async function operatorEmails(t: TestApp, tenantId: string, query = '') {
  const response = await t.admin('GET', `/admin/v1/tenants/${tenantId}/emails${query}`);
  expect(response.status, response.raw).toBe(200);
  return response.body as { data: any[]; pagination: any };
}

let counter = 0;
export async function postUser(tenant: TestTenant, overrides: Record<string, unknown> = {}) {
  counter++;
  const response = await tenant.request('POST', '/api/v1/users', {
    email: `person${counter}@client.example`,
    name: `Person ${counter}`,
    password: 'correct horse battery',
    ...overrides,
  });
  expect(response.status, response.raw).toBe(201);
  return response.body.data as { id: string; email: string; name: string };
}
