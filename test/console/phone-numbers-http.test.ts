/**
 * The console's Phone numbers page over plain HTTP: the tenant's numbers with who answers them and
 * their inbound calls (linked to the calls list filtered to the number); the picker and label form
 * refuse what the API refuses (another tenant's agent, 422 naming the field) and change only the
 * tenant's own numbers (another tenant's number is the 404 page, and stays unchanged); the
 * simulator's button rings the number once however often its form is sent; a viewer changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentFixture } from '../calls/helpers.js';
import { createTenant, type TestTenant } from '../support/app.js';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { type ConsoleClient, consoleClient } from './http.js';

const OURS = '+14155550410';
const THEIRS = '+14155550420';
const encoded = encodeURIComponent;

let f: ConsoleFixture;
let other: TestTenant;
let owner: ConsoleClient;
let ourAgent: { id: string; name: string };
let theirAgent: { id: string };

beforeAll(async () => {
  f = await startConsole({ env: { SIMULATED_CALL_SECONDS: '61' } });
  other = await createTenant(f.t, { name: 'Other Agency' });
  for (const [number, tenant] of [
    [OURS, f.tenant],
    [THEIRS, other],
  ] as const) {
    const imported = await f.t.admin('POST', '/admin/v1/phone-numbers', {
      phone_number: number,
      tenant_id: tenant.id,
    });
    expect(imported.status, imported.raw).toBe(201);
  }
  ourAgent = (
    await agentFixture(f.t, { tenant: f.tenant, agent: { name: 'Front desk agent', phone_number: OURS } })
  ).agent;
  theirAgent = (await agentFixture(f.t, { tenant: other, agent: { phone_number: THEIRS } })).agent;
  owner = consoleClient(f.t);
  expect((await owner.signIn(f.owner.email, f.owner.password)).status).toBe(303);
});
afterAll(async () => {
  await f?.close();
});

const ourNumber = async () =>
  (await f.tenant.request('GET', `/api/v1/phone-numbers/${encoded(OURS)}`)).body.data;

describe('the Phone numbers page', () => {
  it('is in the navigation and lists only the tenant’s numbers', async () => {
    const page = await owner.get('/console/phone-numbers');
    expect(page.status).toBe(200);
    expect(page.body).toContain('href="/console/phone-numbers"');
    expect(page.body).toContain(OURS);
    expect(page.body).not.toContain(THEIRS);
  });

  it('chooses the agent that answers and the label; the API sees the same', async () => {
    const saved = await owner.post(`/console/phone-numbers/${encoded(OURS)}`, {
      inbound_agent_id: ourAgent.id,
      label: 'Front desk',
    });
    expect(saved.status).toBe(303);
    expect(await ourNumber()).toMatchObject({ inbound_agent_id: ourAgent.id, label: 'Front desk' });
    const list = await owner.get('/console/phone-numbers');
    expect(list.body).toContain('Front desk agent');
    // No one: calls are declined; the empty label clears it.
    await owner.post(`/console/phone-numbers/${encoded(OURS)}`, { inbound_agent_id: '', label: '' });
    expect(await ourNumber()).toMatchObject({ inbound_agent_id: null, label: null });
  });

  it('refuses another tenant’s agent as the API does: 422 naming the picker, nothing saved', async () => {
    await owner.post(`/console/phone-numbers/${encoded(OURS)}`, {
      inbound_agent_id: ourAgent.id,
      label: 'Kept',
    });
    const refused = await owner.post(`/console/phone-numbers/${encoded(OURS)}`, {
      inbound_agent_id: theirAgent.id,
      label: 'Changed',
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toContain('id="inbound_agent_id-error"');
    const api = await f.tenant.request('PATCH', `/api/v1/phone-numbers/${encoded(OURS)}`, {
      inbound_agent_id: theirAgent.id,
    });
    expect(api.status).toBe(422);
    expect(api.body.error.details.map((d: { field: string }) => d.field)).toEqual(['inbound_agent_id']);
    expect(await ourNumber()).toMatchObject({ inbound_agent_id: ourAgent.id, label: 'Kept' });
  });

  it('another tenant’s number is the 404 page, to read, change or ring', async () => {
    expect((await owner.get(`/console/phone-numbers/${encoded(THEIRS)}`)).status).toBe(404);
    const changed = await owner.post(`/console/phone-numbers/${encoded(THEIRS)}`, {
      inbound_agent_id: ourAgent.id,
      label: 'Mine now',
    });
    expect(changed.status).toBe(404);
    const rung = await owner.post(`/console/phone-numbers/${encoded(THEIRS)}/simulate`, {
      from: '+14155550123',
    });
    expect(rung.status).toBe(404);
    const theirs = await other.request('GET', `/api/v1/phone-numbers/${encoded(THEIRS)}`);
    expect(theirs.body.data).toMatchObject({ inbound_agent_id: null, label: null });
    expect((await other.request('GET', '/api/v1/calls?direction=inbound')).body.pagination.total).toBe(0);
  });

  it('simulates an inbound call once per form, shown in the calls list filtered to the number', async () => {
    await owner.post(`/console/phone-numbers/${encoded(OURS)}`, { inbound_agent_id: ourAgent.id, label: '' });
    const detail = await owner.get(`/console/phone-numbers/${encoded(OURS)}`);
    expect(detail.body).toContain('Simulate an inbound call');
    const formKey = /name="form_key" value="([^"]+)"/.exec(detail.body)?.[1] as string;
    const first = await owner.post(`/console/phone-numbers/${encoded(OURS)}/simulate`, {
      from: '+14155550123',
      form_key: formKey,
    });
    expect(first.status).toBe(303);
    const again = await owner.post(`/console/phone-numbers/${encoded(OURS)}/simulate`, {
      from: '+14155550123',
      form_key: formKey,
    });
    expect(again.headers.location).toBe(first.headers.location);
    const inbound = await f.tenant.request('GET', '/api/v1/calls?direction=inbound');
    expect(inbound.body.pagination.total).toBe(1);
    expect(inbound.body.data[0]).toMatchObject({ from: '+14155550123', to: OURS, agent_id: ourAgent.id });
    expect(first.headers.location).toBe(`/console/calls/${inbound.body.data[0].id}`);

    const bad = await owner.post(`/console/phone-numbers/${encoded(OURS)}/simulate`, { from: '555' });
    expect(bad.status).toBe(422);
    expect(bad.body).toContain('id="from-error"');

    const list = await owner.get('/console/phone-numbers');
    expect(list.body).toContain(`href="/console/calls?direction=inbound&amp;to=${encoded(OURS)}"`);
    const filtered = await owner.get(`/console/calls?direction=inbound&to=${encoded(OURS)}`);
    expect(filtered.status).toBe(200);
    expect(filtered.body).toContain(inbound.body.data[0].id);
    const outbound = await owner.get('/console/calls?direction=outbound');
    expect(outbound.body).not.toContain(inbound.body.data[0].id);
  });

  it('a viewer sees who answers but no form, and cannot change it', async () => {
    const member = await f.addMember('viewer');
    const viewer = consoleClient(f.t);
    expect((await viewer.signIn(member.email, member.password)).status).toBe(303);
    const page = await viewer.get(`/console/phone-numbers/${encoded(OURS)}`);
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('name="inbound_agent_id"');
    expect(page.body).not.toContain('Simulate an inbound call</button>');
    const forged = await viewer.post(`/console/phone-numbers/${encoded(OURS)}`, {
      inbound_agent_id: '',
      label: '',
    });
    expect(forged.status).toBe(403);
    expect(await ourNumber()).toMatchObject({ inbound_agent_id: ourAgent.id });
  });
});
