/**
 * The per-process webhook target cache (src/calls/webhook-targets.ts): once a webhook is known,
 * a trigger is one statement, and every change a partner or the operator makes is still seen by
 * the very next request, answered from a fresh read exactly as without the cache.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CachedWebhookTarget, createWebhookTargetCache } from '../../src/calls/webhook-targets.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { recordStatements } from '../support/statements.js';
import {
  type AgentFixture,
  agentFixture,
  balanceOf,
  countRows,
  getCall,
  grantCredits,
  publish,
  trigger,
} from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const CALLEE = { phone: '+14155550123', name: 'Ada Lovelace', product: 'solar' };
const INSERT = /insert into calls[\s\S]*insert into jobs/i;

/** A published agent whose webhook this process has served, so the next trigger is one statement. */
async function warmAgent(): Promise<AgentFixture> {
  const fixture = await agentFixture(t);
  expect((await trigger(t, fixture.agent.webhook_id, CALLEE)).status).toBe(202);
  const sent = await recordStatements(async () => {
    expect((await trigger(t, fixture.agent.webhook_id, CALLEE)).status).toBe(202);
  });
  expect(sent.map((s) => s.text)).toEqual([expect.stringMatching(INSERT)]);
  return fixture;
}

function expectRefusal(response: { status: number; body: any }, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.body.error.code).toBe(code);
}

describe('a warmed webhook', () => {
  it('answers 404 for the old id at once after a rotation, and serves the new id', async () => {
    const { agent } = await warmAgent();
    const rotated = await t.admin('POST', `/admin/v1/agents/${agent.id}/rotate-webhook`);
    expect(rotated.status).toBe(200);
    const before = await countRows(t);
    expectRefusal(await trigger(t, agent.webhook_id, CALLEE), 404, 'not_found');
    // Still 404 after the stale entry was dropped (no cache resurrection).
    expectRefusal(await trigger(t, agent.webhook_id, CALLEE), 404, 'not_found');
    expect(await countRows(t)).toEqual(before);
    expect((await trigger(t, rotated.body.data.webhook_id, CALLEE)).status).toBe(202);
  });

  it('uses a newly published version on the next call, then caches that version', async () => {
    const { agent } = await warmAgent();
    const patched = await t.admin('PATCH', `/admin/v1/agents/${agent.id}`, {
      prompt: 'V2 for {name} about {product}',
      welcome_message: 'V2 hello {name}',
      phone_number: '+14155550777',
    });
    expect(patched.status).toBe(200);
    // A draft-only change does not answer: the cached version 1 is still the published one.
    const draftOnly = await trigger(t, agent.webhook_id, CALLEE);
    expect(draftOnly.body.data.from).toBe('+14155550199');
    expect(await getCall(t, draftOnly.body.data.id)).toMatchObject({
      agent_version: 1,
      prompt: 'Call Ada Lovelace about solar.',
    });

    await publish(t, agent.id);
    const next = await trigger(t, agent.webhook_id, CALLEE);
    expect(next.status).toBe(202);
    expect(next.body.data.from).toBe('+14155550777');
    expect(await getCall(t, next.body.data.id)).toMatchObject({
      agent_version: 2,
      from: '+14155550777',
      prompt: 'V2 for Ada Lovelace about solar',
      welcome_message: 'V2 hello Ada Lovelace',
    });

    let again: Awaited<ReturnType<typeof trigger>> | undefined;
    const sent = await recordStatements(async () => {
      again = await trigger(t, agent.webhook_id, CALLEE);
    });
    expect(sent.map((s) => s.text)).toEqual([expect.stringMatching(INSERT)]);
    expect((await getCall(t, again?.body.data.id)).agent_version).toBe(2);
  });

  it('answers 409 agent_unavailable at once when the owner is blocked, and calls again once unblocked', async () => {
    const { agent, userId } = await warmAgent();
    expect((await t.admin('PATCH', `/admin/v1/users/${userId}`, { status: 'blocked' })).status).toBe(200);
    const before = await countRows(t);
    expectRefusal(await trigger(t, agent.webhook_id, CALLEE), 409, 'agent_unavailable');
    expect(await countRows(t)).toEqual(before);
    expect((await t.admin('PATCH', `/admin/v1/users/${userId}`, { status: 'active' })).status).toBe(200);
    expect((await trigger(t, agent.webhook_id, CALLEE)).status).toBe(202);
  });

  it('answers 402 insufficient_credits at once when the balance is drained', async () => {
    const { agent, userId } = await warmAgent();
    await grantCredits(t, userId, -(await balanceOf(t, userId)));
    expect(await balanceOf(t, userId)).toBe(0);
    const before = await countRows(t);
    expectRefusal(await trigger(t, agent.webhook_id, CALLEE), 402, 'insufficient_credits');
    expect(await countRows(t)).toEqual(before);
    await grantCredits(t, userId, 1);
    expect((await trigger(t, agent.webhook_id, CALLEE)).status).toBe(202);
  });

  it('answers 404 at once when the owner is deleted', async () => {
    const { agent, tenant, userId } = await warmAgent();
    expect((await tenant.request('DELETE', `/api/v1/users/${userId}`)).status).toBe(200);
    const before = await countRows(t);
    expectRefusal(await trigger(t, agent.webhook_id, CALLEE), 404, 'not_found');
    expect(await countRows(t)).toEqual(before);
  });

  it('answers a refusal from a fresh read: the refused guarded insert, then the lookup', async () => {
    const { agent, userId } = await warmAgent();
    await t.admin('PATCH', `/admin/v1/users/${userId}`, { status: 'blocked' });
    let refused: Awaited<ReturnType<typeof trigger>> | undefined;
    const sent = await recordStatements(async () => {
      refused = await trigger(t, agent.webhook_id, CALLEE);
    });
    expectRefusal(refused as { status: number; body: any }, 409, 'agent_unavailable');
    expect(sent.map((s) => s.text)).toEqual([
      expect.stringMatching(INSERT),
      expect.stringMatching(/^\s*select [\s\S]* from agents a\b/i),
    ]);
  });

  it('still validates the body before anything else (400, no statement)', async () => {
    const { agent } = await warmAgent();
    let response: Awaited<ReturnType<typeof trigger>> | undefined;
    const sent = await recordStatements(async () => {
      response = await trigger(t, agent.webhook_id, { phone: '+14155550123' });
    });
    expectRefusal(response as { status: number; body: any }, 400, 'invalid_request');
    expect(sent).toEqual([]);
  });
});

describe('createWebhookTargetCache', () => {
  const target = (agentId: string, prompt = 'p'): CachedWebhookTarget => ({
    agent_id: agentId,
    tenant_id: 'ten_1',
    user_id: 'usr_1',
    published_version: 1,
    prompt,
    welcome_message: 'w',
    phone_number: '+14155550199',
  });

  it('evicts the oldest entry first once full', () => {
    const cache = createWebhookTargetCache({ maxEntries: 2 });
    cache.set('a', target('agt_a'));
    cache.set('b', target('agt_b'));
    cache.set('c', target('agt_c'));
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')?.agent_id).toBe('agt_b');
    expect(cache.get('c')?.agent_id).toBe('agt_c');
  });

  it('bounds the characters held too, and never holds an entry larger than the bound', () => {
    const cache = createWebhookTargetCache({ maxChars: 10 });
    cache.set('a', target('agt_a', 'x'.repeat(4)));
    cache.set('b', target('agt_b', 'x'.repeat(4)));
    cache.set('c', target('agt_c', 'x'.repeat(4)));
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBeDefined();
    expect(cache.get('c')).toBeDefined();
    cache.set('d', target('agt_d', 'x'.repeat(20)));
    expect(cache.get('d')).toBeUndefined();
    expect(cache.get('c')).toBeDefined();
  });

  it('forgets an entry only if it is still the one that was refused', () => {
    const cache = createWebhookTargetCache();
    const stale = target('agt_a');
    cache.set('a', stale);
    const fresh = { ...stale, published_version: 2 };
    cache.set('a', fresh);
    cache.forget('a', stale);
    expect(cache.get('a')).toBe(fresh);
    cache.forget('a', fresh);
    expect(cache.get('a')).toBeUndefined();
  });
});
