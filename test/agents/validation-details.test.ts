/**
 * A refused agent body names every offending field at once: the schema's issues together with the
 * settings' problems only the service checks (an unknown time zone, a window that starts where it
 * ends), on the partner's create (before its Idempotency-Key is claimed) and update, and on the
 * operator's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, createUser, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { expectInvalidFields } from '../support/expect.js';

let t: TestApp;
let tenant: TestTenant;
let ownerId: string;
beforeAll(async () => {
  t = await startTestApp();
  tenant = await createTenant(t);
  ownerId = (await createUser(tenant)).id;
});
afterAll(() => t.close());

const badHours = { timezone: 'Mars/Olympus_Mons', days: [1, 2], start: '09:00', end: '09:00' };
const agentBody = (overrides: Record<string, unknown> = {}) => ({
  user_id: ownerId,
  name: 'Sunny',
  phone_number: '+14155550199',
  prompt: 'Call {name}.',
  welcome_message: 'Hi {name}.',
  ...overrides,
});

describe('agents', () => {
  it('create: the schema’s issues with both calling-hours problems', async () => {
    const response = await tenant.request(
      'POST',
      '/api/v1/agents',
      agentBody({ name: 42, phone_number: 'not a number', settings: { calling_hours: badHours } }),
      { 'Idempotency-Key': 'agent-every-issue' },
    );
    expectInvalidFields(response, [
      'name',
      'phone_number',
      'settings.calling_hours.timezone',
      'settings.calling_hours.end',
    ]);
    // The key was not spent on the refusal: the same key creates once the body is good.
    const created = await tenant.request('POST', '/api/v1/agents', agentBody(), {
      'Idempotency-Key': 'agent-every-issue',
    });
    expect(created.status, created.raw).toBe(201);
  });

  it('a settings object the schema refuses is not checked again by the service', async () => {
    const response = await tenant.request(
      'POST',
      '/api/v1/agents',
      agentBody({ name: '', settings: { calling_hours: { ...badHours, days: [9] } } }),
    );
    expectInvalidFields(response, ['name', 'settings.calling_hours.days.0']);
  });

  it('update, partner and operator: the schema’s issues with the settings’', async () => {
    const agent = (await tenant.request('POST', '/api/v1/agents', agentBody())).body.data;
    const body = { name: 7, settings: { calling_hours: badHours } };
    const fields = ['name', 'settings.calling_hours.timezone', 'settings.calling_hours.end'];
    expectInvalidFields(await tenant.request('PATCH', `/api/v1/agents/${agent.id}`, body), fields);
    expectInvalidFields(await t.admin('PATCH', `/admin/v1/agents/${agent.id}`, body), fields);
    expectInvalidFields(
      await t.admin('POST', `/admin/v1/tenants/${tenant.id}/agents`, {
        ...agentBody({ prompt: '' }),
        settings: { calling_hours: badHours },
      }),
      ['prompt', 'settings.calling_hours.timezone', 'settings.calling_hours.end'],
    );
    expect((await tenant.request('GET', `/api/v1/agents/${agent.id}`)).body.data.name).toBe('Sunny');
  });
});
