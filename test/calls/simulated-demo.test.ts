/**
 * The simulator as a faithful demo (docs/engines.md, "The simulator"): a scripted conversation
 * from the rendered welcome message and prompt, a playable recording at an unguessable URL, an
 * analysis of the configured types with `call.analyzed`, and the voicemail and transfer paths
 * chosen by the callee number's last digits.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { type AgentFixture, agentFixture, balanceOf } from './helpers.js';

const TRANSFER_NUMBER = '+14155550142';
const config = (voicemail: 'hang_up' | 'leave_message') => ({
  voicemail: { action: voicemail, message: 'Hi {name}, Acme here about {product}.' },
  transfer: [{ phone_number: TRANSFER_NUMBER, description: 'The callee asks for a person.' }],
  analysis: {
    summary: true,
    success_criteria: 'The callee agreed to a visit.',
    data: [
      { name: 'budget', type: 'number', description: 'The budget.' },
      { name: 'booked', type: 'boolean', description: 'Whether a visit was booked.' },
      { name: 'tier', type: 'enum', description: 'The tier.', values: ['gold', 'silver'] },
      { name: 'notes', type: 'string', description: 'Anything else.' },
    ],
  },
});

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { SIMULATED_CALL_SECONDS: '61' } });
});
afterAll(async () => {
  await t?.close();
});

async function call(fixture: AgentFixture, phone: string) {
  const placed = await fixture.tenant.request('POST', '/api/v1/calls', {
    agent_id: fixture.agent.id,
    phone,
    name: 'Ada',
    context: { product: 'solar panels' },
  });
  expect(placed.status, placed.raw).toBe(202);
  await t.services.jobRunner.drain();
  return (await fixture.tenant.request('GET', `/api/v1/calls/${placed.body.data.id}`)).body.data;
}

describe('the simulator', () => {
  it('speaks a scripted conversation, serves its recording, fills the analysis and sends call.analyzed', async () => {
    const fixture = await agentFixture(t, { credits: 10, agent: { config: config('hang_up') } });
    const answered = await call(fixture, '+14155550123');
    expect(answered).toMatchObject({
      status: 'completed',
      answered_by: 'human',
      transferred_to: null,
      billed_minutes: 2,
      analysis: {
        successful: true,
        data: { budget: 1, booked: true, tier: 'gold', notes: 'Simulated notes' },
      },
    });
    const lines = answered.transcript.split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(5);
    expect(lines[0]).toBe('Agent: Hello Ada, this is Acme.');
    expect(lines[2]).toBe('Agent: Call Ada about solar panels.');
    expect(lines.filter((line: string) => line.startsWith('Customer: ')).length).toBeGreaterThanOrEqual(2);
    expect(answered.analysis.summary).toContain('Ada');

    const url = new URL(answered.recording_url);
    expect(url.pathname).toMatch(/^\/simulator\/recordings\/[0-9A-Za-z]{32}\.wav$/);
    const recording = await t.app.inject({ method: 'GET', url: url.pathname });
    expect(recording.statusCode).toBe(200);
    expect(recording.headers['content-type']).toBe('audio/wav');
    const wav = recording.rawPayload;
    expect(wav.subarray(0, 4).toString('ascii')).toBe('RIFF');
    expect(wav.subarray(8, 12).toString('ascii')).toBe('WAVE');
    expect(wav.readUInt32LE(40)).toBe(wav.length - 44);
    // Another token, or a guess, is not found.
    const guessed = await t.app.inject({ method: 'GET', url: `/simulator/recordings/${'a'.repeat(32)}.wav` });
    expect(guessed.statusCode).toBe(404);

    const events = await fixture.tenant.request('GET', '/api/v1/events?limit=100');
    const analyzed = events.body.data.find(
      (e: any) => e.type === 'call.analyzed' && e.data.object.id === answered.id,
    );
    expect(analyzed.data.object.analysis).toEqual(answered.analysis);
  });

  it('takes voicemail (8888) by the agent’s setting and transfers (7777) to the first transfer target', async () => {
    const hangUp = await agentFixture(t, { credits: 10, agent: { config: config('hang_up') } });
    expect(await call(hangUp, '+14155558888')).toMatchObject({
      status: 'no_answer',
      ended_reason: 'voicemail',
      answered_by: 'voicemail',
      billed_minutes: 0,
      transcript: null,
    });
    expect(await balanceOf(t, hangUp.userId)).toBe(10);

    const leave = await agentFixture(t, { credits: 10, agent: { config: config('leave_message') } });
    const voicemail = await call(leave, '+14155558888');
    expect(voicemail).toMatchObject({
      status: 'completed',
      ended_reason: 'voicemail',
      answered_by: 'voicemail',
      billed_minutes: 2,
    });
    expect(voicemail.transcript).toContain('Agent: Hi Ada, Acme here about solar panels.');

    const transferred = await call(leave, '+14155557777');
    expect(transferred).toMatchObject({
      status: 'completed',
      ended_reason: 'transferred',
      answered_by: 'human',
      transferred_to: TRANSFER_NUMBER,
    });
  });

  it('shows calls placed before outcomes existed as unknown, without analysis', async () => {
    const fixture = await agentFixture(t, { credits: 10 });
    const answered = await call(fixture, '+14155550123');
    await t.services.database.db
      .updateTable('calls')
      .set({ answered_by: null, analysis: null })
      .where('id', '=', answered.id)
      .execute();
    const shown = (await fixture.tenant.request('GET', `/api/v1/calls/${answered.id}`)).body.data;
    expect(shown).toMatchObject({
      answered_by: 'unknown',
      analysis: { summary: null, successful: null, data: null },
      transferred_to: null,
    });
  });
});

describe('the simulator’s tool calls', () => {
  let app: TestApp;
  let server: http.Server;
  const bodies: any[] = [];
  beforeAll(async () => {
    server = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        bodies.push(JSON.parse(body));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    live = await startTestApp({
      clock,
      env: { WEBHOOK_ALLOW_PRIVATE: 'true', SIMULATED_REALTIME: 'true', SIMULATED_CALL_SECONDS: '30' },
    });
  });
  afterAll(async () => {
    await app?.close();
    await live?.close();
    await new Promise((resolve) => server?.close(resolve));
  });
  let live: TestApp;
  const clock = new ManualClock('2026-11-21T10:00:00.000Z');
  const toolOf = (url: string) => ({
    name: 'check_stock',
    description: 'Checks the stock.',
    parameters: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
    url,
    timeout_seconds: 5,
  });

  it('in real time, calls the tools halfway through the call: after the answer on the timeline, before the end', async () => {
    const fixture = await agentFixture(live, { credits: 10 });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tool`;
    await sql`UPDATE agent_versions SET config = ${JSON.stringify({ tools: [toolOf(url)] })}::jsonb WHERE agent_id = ${fixture.agent.id}`.execute(
      live.services.database.db,
    );
    expect((await fixture.tenant.request('POST', '/api/v1/tools-secret/rotate')).status).toBe(200);
    const placed = await fixture.tenant.request('POST', '/api/v1/calls', {
      agent_id: fixture.agent.id,
      phone: '+14155550123',
    });
    const timeline = async () =>
      (await fixture.tenant.request('GET', `/api/v1/calls/${placed.body.data.id}`)).body.data.events.map(
        (event: { status: string }) => event.status,
      );
    await live.services.jobRunner.drain();
    expect(await timeline()).toEqual(['queued', 'dialing', 'in_progress']);
    clock.advance(15_000);
    await live.services.jobRunner.drain();
    // The tools run beside the call (an engine calls them during the conversation), not in its job.
    await expect
      .poll(timeline, { timeout: 5_000 })
      .toEqual(['queued', 'dialing', 'in_progress', 'tool_call']);
    clock.advance(15_000);
    await live.services.jobRunner.drain();
    expect(await timeline()).toEqual(['queued', 'dialing', 'in_progress', 'tool_call', 'completed']);
  });

  it('calls each configured tool once, with arguments valid for its schema, on the timeline', async () => {
    const fixture = await agentFixture(app, { credits: 10 });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tool`;
    const parameters = {
      type: 'object',
      properties: {
        date: { type: 'string', format: 'date' },
        seats: { type: 'integer', minimum: 2 },
        kind: { type: 'string', enum: ['visit', 'call'] },
      },
      required: ['date', 'seats', 'kind'],
    };
    const tools = [
      { name: 'book_visit', description: 'Books a visit.', parameters, url, timeout_seconds: 5 },
      {
        name: 'check_stock',
        description: 'Stock.',
        parameters: { type: 'object', properties: {} },
        url,
        timeout_seconds: 5,
      },
    ];
    await sql`UPDATE agent_versions SET config = ${JSON.stringify({ tools })}::jsonb WHERE agent_id = ${fixture.agent.id}`.execute(
      app.services.database.db,
    );
    expect((await fixture.tenant.request('POST', '/api/v1/tools-secret/rotate')).status).toBe(200);
    const placed = await fixture.tenant.request('POST', '/api/v1/calls', {
      agent_id: fixture.agent.id,
      phone: '+14155550123',
    });
    await app.services.jobRunner.drain();
    const read = async () =>
      (await fixture.tenant.request('GET', `/api/v1/calls/${placed.body.data.id}`)).body.data;
    const toolEntries = async () =>
      (await read()).events.filter((event: { status: string }) => event.status === 'tool_call').length;
    await expect.poll(toolEntries, { timeout: 5_000 }).toBe(2);
    const call = await read();
    expect(call.status).toBe('completed');
    const received = bodies.filter((body) => body.call_id === call.id);
    expect(received.map((body) => body.tool).sort()).toEqual(['book_visit', 'check_stock']);
    expect(received.find((body) => body.tool === 'book_visit').arguments).toEqual({
      date: '2030-01-15',
      seats: 2,
      kind: 'visit',
    });
    const entries = call.events.filter((event: { status: string }) => event.status === 'tool_call');
    expect(entries.map((entry: any) => entry.detail.outcome)).toEqual(['succeeded', 'succeeded']);
  });
});
