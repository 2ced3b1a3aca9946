/**
 * A refused webhook endpoint names every offending field at once: the schema's issues (an unknown
 * event name) together with what only the service checks (the URL's scheme and host), on create
 * and on update; a URL the schema refused is not also checked by the service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { expectError, expectInvalidFields } from '../support/expect.js';

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await startTestApp({
    adapters: () => ({ resolveHost: async () => [{ address: '93.184.215.14', family: 4 }] }),
  });
  tenant = await createTenant(t);
});
afterAll(() => t.close());

describe('POST /api/v1/webhook-endpoints', () => {
  it('names both a bad url and an unknown event name', async () => {
    const response = await tenant.request('POST', '/api/v1/webhook-endpoints', {
      url: 'http://hooks.example.com/voiceplane',
      events: ['call.exploded'],
    });
    expectInvalidFields(response, ['url', 'events.0']);
    expect(response.body.error.details).toContainEqual({ field: 'url', issue: 'must be an https URL.' });
    expect(await tenant.request('GET', '/api/v1/webhook-endpoints')).toMatchObject({
      body: { data: [] },
    });
  });

  it('names every field the schema refuses with the one only the service checks', async () => {
    const response = await tenant.request('POST', '/api/v1/webhook-endpoints', {
      url: 'https://user:secret@hooks.example.com/voiceplane',
      events: ['call.exploded', 'user.created'],
      enabled: 'yes',
      colour: 'blue',
    });
    expectInvalidFields(response, ['url', 'events.0', 'enabled', 'colour']);
  });

  it('reports a url the schema refuses once, without asking the service', async () => {
    const response = await tenant.request('POST', '/api/v1/webhook-endpoints', { url: '', events: [] });
    expectInvalidFields(response, ['url', 'events']);
    expect(response.body.error.details.filter((d: { field: string }) => d.field === 'url')).toHaveLength(1);
  });

  it('still refuses a body that is no object, and creates a good endpoint', async () => {
    const notObject = await t.inject({
      method: 'POST',
      url: '/api/v1/webhook-endpoints',
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
      payload: '[1]',
    });
    expectError(notObject, 400, 'invalid_request');
    const created = await tenant.request('POST', '/api/v1/webhook-endpoints', {
      url: 'https://hooks.example.com/voiceplane',
      events: ['user.created'],
    });
    expect(created.status, created.raw).toBe(201);
  });
});

describe('PATCH /api/v1/webhook-endpoints/{id}', () => {
  it('names both a bad url and an unknown event name, and changes nothing', async () => {
    const created = await tenant.request('POST', '/api/v1/webhook-endpoints', {
      url: 'https://hooks.example.com/patched',
      events: ['user.created'],
    });
    const id = created.body.data.id;
    const response = await tenant.request('PATCH', `/api/v1/webhook-endpoints/${id}`, {
      url: 'ftp://hooks.example.com/voiceplane',
      events: ['user.exploded'],
    });
    expectInvalidFields(response, ['url', 'events.0']);
    expect((await tenant.request('GET', `/api/v1/webhook-endpoints/${id}`)).body.data).toMatchObject({
      url: 'https://hooks.example.com/patched',
      events: ['user.created'],
    });
    const unknown = await tenant.request('PATCH', '/api/v1/webhook-endpoints/we_nobody', {
      events: ['user.exploded'],
    });
    expectInvalidFields(unknown, ['events.0']);
  });
});
