/**
 * Inbound calls in the client portal: a call answered by a user's agent is one of that user's calls
 * (listed as called in, with the caller's number, and its page naming the caller and the number
 * rung); another user of the agency never sees it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestApp } from '../support/app.js';
import { createAgency, createAgent, createClient, portalClient, startPortalApp } from './helpers.js';

const NUMBER = '+14155550510';
const CALLER = '+14155550199';
let t: TestApp;

beforeAll(async () => {
  t = await startPortalApp({ env: { SIMULATED_CALL_SECONDS: '61' } });
});
afterAll(async () => {
  await t?.close();
});

it('the agent’s owner sees the inbound call with its caller; another user does not', async () => {
  const agency = await createAgency(t, { name: 'Inbound Dental' });
  const grace = await createClient(t, agency);
  const alan = await createClient(t, agency, { name: 'Alan Turing' });
  const agent = await createAgent(t, agency, grace.id);
  expect(
    (await t.admin('POST', '/admin/v1/phone-numbers', { phone_number: NUMBER, tenant_id: agency.tenant.id }))
      .status,
  ).toBe(201);
  const set = await agency.tenant.request('PATCH', `/api/v1/phone-numbers/${encodeURIComponent(NUMBER)}`, {
    inbound_agent_id: agent.id,
  });
  expect(set.status, set.raw).toBe(200);
  const rung = await t.admin('POST', '/admin/v1/simulator/inbound-calls', { to: NUMBER, from: CALLER });
  expect(rung.status, rung.raw).toBe(201);
  const callId = rung.body.data.id as string;
  await t.services.jobRunner.drain();

  const client = portalClient(t);
  await client.signIn(agency.base, grace.email, grace.password);
  const list = await client.get(`${agency.base}/calls`);
  expect(list.status).toBe(200);
  expect(list.body).toContain(`/calls/${callId}`);
  expect(list.body).toContain(CALLER);
  expect(list.body).toContain('Called in');
  const page = await client.get(`${agency.base}/calls/${callId}`);
  expect(page.status).toBe(200);
  expect(page.body).toMatch(/<dt>Caller<\/dt><dd class="phone">\+14155550199<\/dd>/);
  expect(page.body).toMatch(/<dt>Number called<\/dt><dd class="phone">\+14155550510<\/dd>/);

  const other = portalClient(t);
  await other.signIn(agency.base, alan.email, alan.password);
  expect((await other.get(`${agency.base}/calls`)).body).not.toContain(callId);
  expect((await other.get(`${agency.base}/calls/${callId}`)).status).toBe(404);
});
