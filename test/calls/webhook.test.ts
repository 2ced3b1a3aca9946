/**
 * The call-trigger webhook: each numbered behaviour of docs/api.md's webhook section and each
 * answer of docs/design-choices.md
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, type TestApp } from '../support/app.js';
import { recordStatements } from '../support/statements.js';
import { agentFixture, balanceOf, countRows, getCall, grantCredits, publish, trigger } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const CALLEE = { phone: '+14155550123', name: 'Ada Lovelace' };

function expectEnvelope(response: { status: number; body: any; headers: any }, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.body.error.code).toBe(code);
  expect(typeof response.body.error.message).toBe('string');
  expect(response.body.request_id).toBe(response.headers['x-request-id']);
}

describe('202: the call is queued', () => {
  it('answers 202 with the queued call and X-Request-Id, and stores it with a dispatch job', async () => {
    const { agent, userId } = await agentFixture(t);
    const before = await countRows(t);
    const response = await trigger(t, agent.webhook_id, {
      ...CALLEE,
      email: 'ada@example.com',
      product: 'solar',
    });
    expect(response.status).toBe(202);
    expect(response.headers['x-request-id']).toMatch(/^req_/);
    expect(Object.keys(response.body)).toEqual(['data']);
    const data = response.body.data;
    expect(Object.keys(data).sort()).toEqual(['agent_id', 'created_at', 'from', 'id', 'status', 'to']);
    expect(data).toMatchObject({
      status: 'queued',
      agent_id: agent.id,
      from: '+14155550199',
      to: '+14155550123',
    });
    expect(data.id).toMatch(/^call_[0-9A-Za-z]{20,}$/);
    expect(data.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(await countRows(t)).toEqual({ calls: before.calls + 1, jobs: before.jobs + 1 });

    const call = await getCall(t, data.id);
    expect(call).toMatchObject({
      id: data.id,
      agent_id: agent.id,
      agent_version: 1,
      user_id: userId,
      from: '+14155550199',
      to: '+14155550123',
      name: 'Ada Lovelace',
      email: 'ada@example.com',
      context: { product: 'solar' },
      prompt: 'Call Ada Lovelace about solar.',
      welcome_message: 'Hello Ada Lovelace, this is Acme.',
      // 3. It returns once queued: nothing has been dialled yet.
      status: 'queued',
      started_at: null,
      ended_at: null,
      duration_seconds: null,
      failure_reason: null,
    });
  });

  it('1. uses the published version: a draft-only change does not answer until it is published', async () => {
    const { agent } = await agentFixture(t);
    const patched = await t.admin('PATCH', `/admin/v1/agents/${agent.id}`, {
      prompt: 'NEW prompt for {name}',
      welcome_message: 'NEW welcome',
      phone_number: '+14155550777',
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.draft).toMatchObject({
      prompt: 'NEW prompt for {name}',
      welcome_message: 'NEW welcome',
    });
    expect(patched.body.data.published_version).toBe(1);

    const before = await trigger(t, agent.webhook_id, { ...CALLEE, product: 'x' });
    expect(before.status).toBe(202);
    expect(before.body.data.from).toBe('+14155550199');
    const oldCall = await getCall(t, before.body.data.id);
    expect(oldCall).toMatchObject({
      agent_version: 1,
      prompt: 'Call Ada Lovelace about x.',
      welcome_message: 'Hello Ada Lovelace, this is Acme.',
    });

    await publish(t, agent.id);
    const after = await trigger(t, agent.webhook_id, CALLEE);
    // 2. The agent's (published) phone number is the caller ID.
    expect(after.body.data.from).toBe('+14155550777');
    const newCall = await getCall(t, after.body.data.id);
    expect(newCall).toMatchObject({
      agent_version: 2,
      prompt: 'NEW prompt for Ada Lovelace',
      welcome_message: 'NEW welcome',
    });
  });

  it('4. places one call per request: an identical retry places a second call', async () => {
    const { agent } = await agentFixture(t);
    const before = await countRows(t);
    const first = await trigger(t, agent.webhook_id, CALLEE);
    const second = await trigger(t, agent.webhook_id, CALLEE);
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.body.data.id).not.toBe(first.body.data.id);
    expect(await countRows(t)).toEqual({ calls: before.calls + 2, jobs: before.jobs + 2 });
  });

  it('accepts full_name and fullName for name, and keeps other keys (any JSON) as context', async () => {
    const { agent } = await agentFixture(t, {
      agent: { prompt: 'Hi {name} / {full_name} / {city} / {n} / {flag} / {nested}' },
    });
    const viaFullName = await trigger(t, agent.webhook_id, {
      phone: '+14155550123',
      full_name: 'Grace Hopper',
      city: 'NYC',
    });
    expect(viaFullName.status).toBe(202);
    const call1 = await getCall(t, viaFullName.body.data.id);
    expect(call1.name).toBe('Grace Hopper');
    expect(call1.context).toEqual({ city: 'NYC' });
    expect(call1.prompt).toBe('Hi Grace Hopper / Grace Hopper / NYC / {n} / {flag} / {nested}');

    const context = { n: 42, flag: true, nested: { a: [1, { b: null }] }, list: ['x'], nothing: null };
    const viaCamel = await trigger(t, agent.webhook_id, {
      phone: '+14155550123',
      fullName: 'Alan Turing',
      ...context,
    });
    expect(viaCamel.status).toBe(202);
    const call2 = await getCall(t, viaCamel.body.data.id);
    expect(call2.name).toBe('Alan Turing');
    expect(call2.email).toBeNull();
    expect(call2.context).toEqual(context);
    expect(call2.prompt).toBe('Hi Alan Turing / {full_name} / {city} / 42 / true / {"a":[1,{"b":null}]}');

    const emptyNameWithAlias = await trigger(t, agent.webhook_id, {
      phone: '+14155550123',
      name: '',
      fullName: 'Ada',
    });
    expect(emptyNameWithAlias.status).toBe(202);
    expect((await getCall(t, emptyNameWithAlias.body.data.id)).name).toBe('Ada');
  });

  it('fills placeholders once: inserted values are never expanded again, unknown ones stay', async () => {
    const { agent } = await agentFixture(t, {
      agent: {
        prompt: '{greeting} {name}, {missing} {{name}} {na-me} { name }',
        welcome_message: '{name}{name}',
      },
    });
    const response = await trigger(t, agent.webhook_id, {
      phone: '+14155550123',
      name: '{greeting}',
      greeting: 'Hello {name}',
    });
    const call = await getCall(t, response.body.data.id);
    expect(call.prompt).toBe('Hello {name} {greeting}, {missing} {{greeting}} {na-me} { name }');
    expect(call.welcome_message).toBe('{greeting}{greeting}');
  });
});

describe('400 invalid_request', () => {
  it('answers exactly "name or full name is required" when no name alias is a non-empty string', async () => {
    const { agent } = await agentFixture(t);
    const before = await countRows(t);
    for (const body of [
      { phone: '+14155550123' },
      { phone: '+14155550123', name: '' },
      { phone: '+14155550123', name: '   ' },
      { phone: '+14155550123', name: 42 },
      { phone: '+14155550123', name: null, full_name: '', fullName: ['Ada'] },
      { phone: '+14155550123', first_name: 'Ada' },
      {},
    ]) {
      const response = await trigger(t, agent.webhook_id, body);
      expectEnvelope(response, 400, 'invalid_request');
      expect(response.body.error.message).toBe('name or full name is required');
    }
    expect(await countRows(t)).toEqual(before);
  });

  it('names the field for a missing or invalid phone, an invalid email, or a non-string name alias', async () => {
    const { agent } = await agentFixture(t);
    const before = await countRows(t);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ name: 'Ada' }, /^phone is required/],
      [{ name: 'Ada', phone: null }, /^phone is required/],
      [{ name: 'Ada', phone: '4155550123' }, /^phone must be in E\.164 format/],
      [{ name: 'Ada', phone: '+0155550123' }, /^phone must be in E\.164 format/],
      [{ name: 'Ada', phone: 14155550123 }, /^phone must be in E\.164 format/],
      [{ name: 'Ada', phone: '+1 415 555 0123' }, /^phone must be in E\.164 format/],
      [{ ...CALLEE, email: 'not-an-email' }, /^email must be a valid email/],
      [{ ...CALLEE, email: 42 }, /^email must be a valid email/],
      [{ ...CALLEE, full_name: 7 }, /^full_name must be a string/],
      [{ ...CALLEE, name: 'x'.repeat(201) }, /^name must be at most 200/],
      [{ ...CALLEE, note: 'nul \u0000 inside' }, /NUL/],
      [{ ...CALLEE, 'k\u0000': 1 }, /NUL/],
      [{ ...CALLEE, bad: '\ud800' }, /surrogate/],
    ];
    for (const [body, message] of cases) {
      const response = await trigger(t, agent.webhook_id, body);
      expectEnvelope(response, 400, 'invalid_request');
      expect(response.body.error.message).toMatch(message);
    }
    expect(await countRows(t)).toEqual(before);
  });

  it('refuses malformed JSON and bodies that are not objects', async () => {
    const { agent } = await agentFixture(t);
    for (const raw of [
      '{"phone":',
      '[]',
      '"text"',
      '42',
      'null',
      '{"__proto__":{"x":1},"phone":"+14155550123","name":"A"}',
    ]) {
      const response = await trigger(t, agent.webhook_id, raw);
      expectEnvelope(response, 400, 'invalid_request');
    }
  });

  it('checks the body before the webhook id (400 before 404)', async () => {
    const response = await trigger(t, 'webh_unknownunknownunknownunknown0', { phone: '+14155550123' });
    expectEnvelope(response, 400, 'invalid_request');
  });
});

describe('404 not_found', () => {
  it('answers the same for unknown, malformed and rotated webhook ids, and for a deleted owner', async () => {
    const { agent, tenant, userId } = await agentFixture(t);
    const bodies: any[] = [];
    for (const id of [
      'webh_0123456789abcdefghijABCDEFGHIJ',
      'webh_x',
      'agt_123',
      'nothing',
      `webh_${'a'.repeat(300)}`,
    ]) {
      const response = await trigger(t, id, CALLEE);
      expectEnvelope(response, 404, 'not_found');
      bodies.push(response.body.error);
    }

    const rotated = await t.admin('POST', `/admin/v1/agents/${agent.id}/rotate-webhook`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.webhook_id).not.toBe(agent.webhook_id);
    const old = await trigger(t, agent.webhook_id, CALLEE);
    expectEnvelope(old, 404, 'not_found');
    bodies.push(old.body.error);
    expect((await trigger(t, rotated.body.data.webhook_id, CALLEE)).status).toBe(202);

    const deleted = await tenant.request('DELETE', `/api/v1/users/${userId}`);
    expect(deleted.status).toBe(200);
    const gone = await trigger(t, rotated.body.data.webhook_id, CALLEE);
    expectEnvelope(gone, 404, 'not_found');
    bodies.push(gone.body.error);
    // No hint whether the id ever existed.
    for (const body of bodies) expect(body).toEqual(bodies[0]);
  });
});

describe('409 and 402: the agent cannot call', () => {
  it('answers 409 agent_not_published for an agent with no published version', async () => {
    const { agent } = await agentFixture(t, { publish: false });
    const before = await countRows(t);
    const response = await trigger(t, agent.webhook_id, CALLEE);
    expectEnvelope(response, 409, 'agent_not_published');
    expect(await countRows(t)).toEqual(before);
  });

  it('answers 409 agent_unavailable when the owner is blocked, and calls again once unblocked', async () => {
    const { agent, userId } = await agentFixture(t);
    expect((await t.admin('PATCH', `/admin/v1/users/${userId}`, { status: 'blocked' })).status).toBe(200);
    const before = await countRows(t);
    const response = await trigger(t, agent.webhook_id, CALLEE);
    expectEnvelope(response, 409, 'agent_unavailable');
    expect(await countRows(t)).toEqual(before);
    await t.admin('PATCH', `/admin/v1/users/${userId}`, { status: 'active' });
    expect((await trigger(t, agent.webhook_id, CALLEE)).status).toBe(202);
  });

  it('5. answers 402 insufficient_credits with a zero or negative balance, and stores nothing', async () => {
    const { agent, userId } = await agentFixture(t, { credits: 0 });
    const before = await countRows(t);
    expectEnvelope(await trigger(t, agent.webhook_id, CALLEE), 402, 'insufficient_credits');
    await grantCredits(t, userId, -5);
    expectEnvelope(await trigger(t, agent.webhook_id, CALLEE), 402, 'insufficient_credits');
    expect(await countRows(t)).toEqual(before);
    await grantCredits(t, userId, 6);
    expect(await balanceOf(t, userId)).toBe(1);
    expect((await trigger(t, agent.webhook_id, CALLEE)).status).toBe(202);
  });
});

describe('415 and 413: the request shape', () => {
  it('only takes Content-Type: application/json (415 otherwise, also when it is missing)', async () => {
    const { agent } = await agentFixture(t);
    const before = await countRows(t);
    const json = JSON.stringify(CALLEE);
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/xml',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      'application/vnd.api+json',
    ]) {
      const response = await trigger(t, agent.webhook_id, json, { 'content-type': type });
      expectEnvelope(response, 415, 'invalid_request');
    }
    const missing = await t.inject({
      method: 'POST',
      url: `/webhooks/agents/${agent.webhook_id}/trigger`,
      payload: json,
    });
    expectEnvelope(missing, 415, 'invalid_request');
    const empty = await t.inject({ method: 'POST', url: `/webhooks/agents/${agent.webhook_id}/trigger` });
    expectEnvelope(empty, 415, 'invalid_request');
    expect(await countRows(t)).toEqual(before);

    const withCharset = await trigger(t, agent.webhook_id, json, {
      'content-type': 'Application/JSON; charset=utf-8',
    });
    expect(withCharset.status).toBe(202);
  });

  it('refuses bodies over 64 KiB with 413 and accepts one just under it', async () => {
    const { agent } = await agentFixture(t);
    const before = await countRows(t);
    const padding = (size: number) => 'x'.repeat(size - JSON.stringify({ ...CALLEE, notes: '' }).length);
    const over = JSON.stringify({ ...CALLEE, notes: padding(64 * 1024 + 1) });
    expect(Buffer.byteLength(over)).toBe(64 * 1024 + 1);
    expectEnvelope(await trigger(t, agent.webhook_id, over), 413, 'invalid_request');
    expect(await countRows(t)).toEqual(before);
    const under = JSON.stringify({ ...CALLEE, notes: padding(64 * 1024) });
    expect((await trigger(t, agent.webhook_id, under)).status).toBe(202);
  });
});

describe('the webhook id stays secret and the endpoint is documented', () => {
  it('never writes a full webhook id to the logs', async () => {
    const { agent } = await agentFixture(t);
    await trigger(t, agent.webhook_id, CALLEE);
    await trigger(t, agent.webhook_id, { phone: 'bad' });
    await trigger(t, agent.webhook_id, 'not json');
    const wrongMethod = await t.inject({
      method: 'GET',
      url: `/webhooks/agents/${agent.webhook_id}/trigger`,
    });
    expect(wrongMethod.status).toBe(404);
    await t.services.jobRunner.drain();
    const secret = agent.webhook_id.slice(9);
    expect(t.logs.length).toBeGreaterThan(0);
    expect(t.logs.filter((line) => line.includes(secret))).toEqual([]);
  });

  it('is in the OpenAPI document, tagged Webhooks, without authentication', async () => {
    const response = await t.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(response.status).toBe(200);
    const operation = response.body.paths['/webhooks/agents/{agentWebhookId}/trigger'].post;
    expect(operation.tags).toEqual(['Webhooks']);
    expect(operation.security).toEqual([]);
    expect(operation.description).toMatch(/queued/);
    expect(Object.keys(operation.responses)).toEqual(
      expect.arrayContaining(['202', '400', '402', '404', '409', '413', '415', '429']),
    );
    const ref = operation.requestBody.content['application/json'].schema.$ref;
    expect(ref).toBe('#/components/schemas/TriggerCallRequest');
    const body = response.body.components.schemas.TriggerCallRequest;
    expect(body.properties).toHaveProperty('phone');
    expect(body.additionalProperties).toBe(true);
  });

  it('needs no other header than Content-Type, and ignores an Authorization header', async () => {
    const { agent } = await agentFixture(t);
    const tenant = await createTenant(t);
    const response = await trigger(t, agent.webhook_id, CALLEE, {
      'content-type': 'application/json',
      authorization: `Bearer ${tenant.key}`,
    });
    expect(response.status).toBe(202);
  });
});

describe('hot path', () => {
  it('concurrent triggers share one guarded statement, and each call is stored or refused on its own', async () => {
    const first = await agentFixture(t);
    const second = await agentFixture(t);
    const blocked = '+14155550166';
    const listed = await first.tenant.request('POST', '/api/v1/do-not-call', { phone_number: blocked });
    expect(listed.status).toBe(201);
    // Both webhooks known to this process, so each request goes straight to the guarded insert.
    expect((await trigger(t, first.agent.webhook_id, CALLEE)).status).toBe(202);
    expect((await trigger(t, second.agent.webhook_id, CALLEE)).status).toBe(202);

    const requests = [
      ...[1, 2, 3, 4].map((n) => ({
        agent: first.agent,
        body: { phone: `+1415555020${n}`, name: `First ${n}` },
      })),
      ...[1, 2, 3].map((n) => ({
        agent: second.agent,
        body: { phone: `+1415555030${n}`, name: `Second ${n}` },
      })),
      { agent: first.agent, body: { phone: blocked, name: 'Listed' } },
    ];
    let answers: Awaited<ReturnType<typeof trigger>>[] = [];
    const sent = await recordStatements(async () => {
      answers = await Promise.all(requests.map(({ agent, body }) => trigger(t, agent.webhook_id, body)));
    });
    // Seven calls in one statement; the refused one then reads its agent again and finds the list.
    expect(sent.filter((s) => s.name === 'calls_insert_queued').length).toBeLessThan(requests.length - 1);

    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202, 202, 202, 409]);
    expect(answers[7].body.error.code).toBe('do_not_call');
    const ids = answers.slice(0, 7).map((a) => a.body.data.id as string);
    expect(new Set(ids).size).toBe(7);
    for (const [i, answer] of answers.slice(0, 7).entries()) {
      const { agent, body } = requests[i];
      expect(answer.body.data).toMatchObject({ status: 'queued', agent_id: agent.id, to: body.phone });
      const call = await getCall(t, answer.body.data.id);
      expect(call).toMatchObject({
        agent_id: agent.id,
        to: body.phone,
        name: body.name,
        prompt: `Call ${body.name} about {product}.`,
        status: 'queued',
      });
    }
    const db = t.services.database.db;
    const timeline = await db
      .selectFrom('call_events')
      .select(['call_id', 'status'])
      .where('call_id', 'in', ids)
      .execute();
    expect(timeline.map((e) => e.call_id).sort()).toEqual([...ids].sort());
    expect(new Set(timeline.map((e) => e.status))).toEqual(new Set(['queued']));
    const jobs = await db
      .selectFrom('jobs')
      .select('singleton_key')
      .where(
        'singleton_key',
        'in',
        ids.map((id) => `dispatch:${id}`),
      )
      .execute();
    expect(jobs).toHaveLength(7);
    const events = await db
      .selectFrom('events')
      .select(['tenant_id', 'data'])
      .where('type', '=', 'call.queued')
      .execute();
    const queuedEvents = events.filter((e) => ids.includes((e.data as any).object.id));
    expect(queuedEvents).toHaveLength(7);
    for (const event of queuedEvents) {
      const owner = ids.indexOf((event.data as any).object.id) < 4 ? first : second;
      expect(event.tenant_id).toBe(owner.tenant.id);
    }
    const listedCalls = await db.selectFrom('calls').select('id').where('to_number', '=', blocked).execute();
    expect(listedCalls).toEqual([]);
  });

  it('costs one database round trip once the webhook is known: one statement storing the call and its job', async () => {
    const { agent } = await agentFixture(t);
    let first: Awaited<ReturnType<typeof trigger>> | undefined;
    const cold = await recordStatements(async () => {
      first = await trigger(t, agent.webhook_id, CALLEE);
    });
    expect(first?.status).toBe(202);
    // The first request of this process for the webhook: one lookup, then the guarded insert.
    expect(cold.map((s) => s.text)).toEqual([
      expect.stringMatching(/^\s*select [\s\S]* from agents a\b/i),
      expect.stringMatching(/insert into calls[\s\S]*insert into jobs/i),
    ]);

    let second: Awaited<ReturnType<typeof trigger>> | undefined;
    const warm = await recordStatements(async () => {
      second = await trigger(t, agent.webhook_id, CALLEE);
    });
    expect(second?.status).toBe(202);
    expect(warm.map((s) => s.text)).toEqual([
      expect.stringMatching(/insert into calls[\s\S]*insert into jobs/i),
    ]);
    // As named prepared statements, under the names written where they run: parsed once per
    // connection, planned once generically.
    expect([...cold, ...warm].map((s) => s.name)).toEqual([
      'agents_webhook_target',
      'calls_insert_queued',
      'calls_insert_queued',
    ]);
  });
});
