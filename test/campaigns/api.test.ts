/**
 * Campaign API: creation with per-row refusals and line numbers, all-or-nothing storage, the
 * Idempotency-Key, the state machine's 409s, recipients paging, and CSV uploads (multipart).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCsv, recipientsFromCsv } from '../../src/campaigns/csv.js';
import { normalizePhone } from '../../src/campaigns/intake.js';
import { ManualClock } from '../../src/core/clock.js';
import { agentFixture } from '../calls/helpers.js';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.js';

const clock = new ManualClock('2026-05-04T15:00:00.000Z');
let t: TestApp;
let tenant: TestTenant;
let agentId: string;
beforeAll(async () => {
  t = await startTestApp({ clock });
  const fixture = await agentFixture(t);
  tenant = fixture.tenant;
  agentId = fixture.agent.id;
});
afterAll(() => t.close());

const rowCount = async () =>
  Number(
    (
      await t.services.database.db
        .selectFrom('campaign_recipients')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
const campaignCount = async () =>
  Number(
    (
      await t.services.database.db
        .selectFrom('campaigns')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

function form(fields: Record<string, string>, csv: string, boundary = 'XyZ123boundary') {
  const parts = Object.entries(fields).map(
    ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  parts.push(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="list.csv"\r\nContent-Type: text/csv\r\n\r\n${csv}\r\n`,
  );
  return {
    payload: `${parts.join('')}--${boundary}--\r\n`,
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

describe('create', () => {
  it('stores the good rows and refuses the others by reason, with their lines', async () => {
    await tenant.request('POST', '/api/v1/do-not-call', { phone_number: '+14155550777' });
    const response = await tenant.request('POST', '/api/v1/campaigns', {
      agent_id: agentId,
      name: 'Spring',
      recipients: [
        { phone: '+1 (415) 555-0101', name: 'Ada' },
        { phone: 'not a number' },
        { phone: '+14155550101' },
        { phone: '+14155550777' },
        { phone: '0044 20 7946 0958', context: { product: 'solar' } },
      ],
    });
    expect(response.status, response.raw).toBe(201);
    expect(response.headers.location).toBe(
      `http://voiceplane.test/api/v1/campaigns/${response.body.data.id}`,
    );
    const data = response.body.data;
    expect(data.id).toMatch(/^cmp_/);
    expect(data).toMatchObject({ status: 'draft', pause_reason: null, started_at: null });
    expect(data.recipients).toMatchObject({ pending: 2, total: 2 });
    expect(data.import).toEqual({
      accepted: 2,
      refused: { invalid_number: 1, do_not_call: 1, duplicate: 1 },
      refusals: [
        { line: 2, phone: 'not a number', reason: 'invalid_number' },
        { line: 3, phone: '+14155550101', reason: 'duplicate' },
        { line: 4, phone: '+14155550777', reason: 'do_not_call' },
      ],
    });
    const list = await tenant.request('GET', `/api/v1/campaigns/${data.id}/recipients`);
    expect(list.body.data.map((r: any) => [r.position, r.line, r.phone])).toEqual([
      [1, 1, '+14155550101'],
      [2, 5, '+442079460958'],
    ]);
    expect(list.body.data[1]).toMatchObject({
      status: 'pending',
      call_id: null,
      outcome: null,
      context: { product: 'solar' },
    });
    expect(list.body.pagination).toMatchObject({ total: 2, page: 1 });
  });

  it('refuses a malformed row with its line and stores nothing at all', async () => {
    const [campaigns, rows] = [await campaignCount(), await rowCount()];
    const response = await tenant.request('POST', '/api/v1/campaigns', {
      agent_id: agentId,
      name: 'Bad',
      recipients: [
        { phone: '+14155550101' },
        {
          phone: '+14155550102',
          context: Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`k${i}`, i])),
        },
      ],
    });
    expect(response.status, response.raw).toBe(422);
    expect(response.body.error.code).toBe('validation_failed');
    expect(response.body.error.details).toEqual([
      { field: 'recipients.1.context', issue: 'line 2: must have at most 200 keys.' },
    ]);
    const unknown = await tenant.request('POST', '/api/v1/campaigns', {
      agent_id: agentId,
      name: 'Bad',
      recipients: [{ phone: '+14155550101', surprise: 1 }],
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error.details).toEqual([
      { field: 'recipients.0.surprise', issue: 'is not a recognised field.' },
    ]);
    expect([await campaignCount(), await rowCount()]).toEqual([campaigns, rows]);
    const other = await tenant.request('POST', '/api/v1/campaigns', {
      agent_id: 'agt_doesnotexist',
      name: 'X',
      recipients: [{ phone: '+14155550101' }],
    });
    expect(other.status).toBe(404);
    // The check order: a malformed row is 422 before the unknown agent's 404, and the unknown campaign's.
    const badRow = { phone: '+14155550101', email: 'not an email' };
    const both = await tenant.request('POST', '/api/v1/campaigns', {
      agent_id: 'agt_doesnotexist',
      name: 'X',
      recipients: [badRow],
    });
    expect(both.status).toBe(422);
    const more = await tenant.request('POST', '/api/v1/campaigns/cmp_doesnotexist/recipients', {
      recipients: [badRow],
    });
    expect(more.status).toBe(422);
    expect([await campaignCount(), await rowCount()]).toEqual([campaigns, rows]);
  });

  it('replays the first answer for the same Idempotency-Key and creates once', async () => {
    const body = { agent_id: agentId, name: 'Once', recipients: [{ phone: '+14155550201' }] };
    const headers = { 'idempotency-key': 'campaign-once' };
    const first = await tenant.request('POST', '/api/v1/campaigns', body, headers);
    const second = await tenant.request('POST', '/api/v1/campaigns', body, headers);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body.data.id).toBe(first.body.data.id);
    const changed = await tenant.request('POST', '/api/v1/campaigns', { ...body, name: 'Twice' }, headers);
    expect(changed.status).toBe(409);
    expect(changed.body.error.code).toBe('idempotency_key_reuse');
  });

  it('adds recipients later, refusing numbers the campaign already holds', async () => {
    const created = await tenant.request('POST', '/api/v1/campaigns', {
      agent_id: agentId,
      name: 'Grow',
      recipients: [{ phone: '+14155550301' }],
    });
    const id = created.body.data.id;
    const added = await tenant.request('POST', `/api/v1/campaigns/${id}/recipients`, {
      recipients: [{ phone: '+14155550301' }, { phone: '+14155550302' }],
    });
    expect(added.status, added.raw).toBe(201);
    expect(added.body.data.import).toMatchObject({ accepted: 1, refused: { duplicate: 1 } });
    expect(added.body.data.recipients.total).toBe(2);
  });
});

describe('state machine', () => {
  it('moves draft → running → paused → running → canceled and refuses illegal moves with 409', async () => {
    const created = await tenant.request('POST', '/api/v1/campaigns', {
      agent_id: agentId,
      name: 'States',
      recipients: [{ phone: '+14155550401' }],
    });
    const id = created.body.data.id;
    const act = (action: string) => tenant.request('POST', `/api/v1/campaigns/${id}/${action}`);
    for (const action of ['pause', 'resume', 'retry']) {
      const refused = await act(action);
      expect(refused.status, action).toBe(409);
      expect(refused.body.error).toMatchObject({ code: 'conflict', details: { status: 'draft' } });
    }
    expect((await act('start')).body.data).toMatchObject({
      status: 'running',
      started_at: clock.now().toISOString(),
    });
    expect((await act('start')).status).toBe(409);
    expect((await act('pause')).body.data).toMatchObject({ status: 'paused', pause_reason: 'manual' });
    expect((await act('pause')).status).toBe(409);
    expect((await act('resume')).body.data).toMatchObject({ status: 'running', pause_reason: null });
    const canceled = await act('cancel');
    expect(canceled.body.data).toMatchObject({ status: 'canceled', recipients: { canceled: 1, pending: 0 } });
    expect(canceled.body.data.finished_at).not.toBeNull();
    for (const action of ['start', 'pause', 'resume', 'cancel', 'retry'])
      expect((await act(action)).status).toBe(409);
    expect(
      (await tenant.request('POST', `/api/v1/campaigns/${id}/recipients`, { recipients: [] })).status,
    ).toBe(409);
  });

  it('a scheduled campaign starts by itself at its time', async () => {
    const created = await tenant.request('POST', '/api/v1/campaigns', {
      agent_id: agentId,
      name: 'Later',
      scheduled_at: '2026-05-04T16:00:00.000Z',
      recipients: [{ phone: '+14155550501' }],
    });
    const id = created.body.data.id;
    expect(created.body.data.status).toBe('scheduled');
    await t.services.jobRunner.drain();
    expect((await tenant.request('GET', `/api/v1/campaigns/${id}`)).body.data.status).toBe('scheduled');
    clock.set('2026-05-04T16:00:00.000Z');
    await t.services.jobRunner.drain();
    // Started at its time; its one call (the simulator's, over at once) ended, and its end told the
    // campaign, which completed without waiting for a tick.
    const started = (await tenant.request('GET', `/api/v1/campaigns/${id}`)).body.data;
    expect(started).toMatchObject({
      status: 'completed',
      started_at: '2026-05-04T16:00:00.000Z',
      finished_at: '2026-05-04T16:00:00.000Z',
    });
    const list = await tenant.request('GET', '/api/v1/campaigns?status=completed');
    expect(list.body.data.map((c: any) => c.id)).toContain(id);
  });
});

describe('CSV', () => {
  it('parses quotes, commas, line breaks in quotes, CRLF and a BOM, with the file’s line numbers', () => {
    const text =
      '\ufeffphone,name,Product\r\n+14155550601,"Lovelace, Ada","say ""hi""\r\nthen"\r\n\r\n+14155550602,Bob,\n';
    expect(parseCsv(text).map((r) => r.line)).toEqual([1, 2, 5]);
    expect(recipientsFromCsv(text)).toEqual([
      {
        line: 2,
        field: 'file',
        phone: '+14155550601',
        name: 'Lovelace, Ada',
        context: { Product: 'say "hi"\r\nthen' },
      },
      { line: 5, field: 'file', phone: '+14155550602', name: 'Bob', context: {} },
    ]);
    expect(() => recipientsFromCsv('name\nAda')).toThrow();
    expect(() => recipientsFromCsv('phone\n"+1415')).toThrow();
    expect(normalizePhone('00 1 415-555.0123')).toBe('+14155550123');
    expect(normalizePhone('4155550123')).toBeUndefined();
  });

  it('creates a campaign from a multipart upload, refusing rows with their lines', async () => {
    const { payload, contentType } = form(
      {
        agent_id: agentId,
        name: 'From CSV',
        max_concurrent_calls: '2',
        retry: '{"max_attempts":2,"delay_minutes":5}',
      },
      'phone,email,plan\n+14155550701,a@example.com,gold\nnope,,\n+14155550701,,\n',
    );
    const response = await t.inject({
      method: 'POST',
      url: '/api/v1/campaigns',
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': contentType },
      payload,
    });
    expect(response.status, response.raw).toBe(201);
    expect(response.body.data).toMatchObject({
      max_concurrent_calls: 2,
      retry: { max_attempts: 2, delay_minutes: 5 },
      import: {
        accepted: 1,
        refusals: [
          { line: 3, phone: 'nope', reason: 'invalid_number' },
          { line: 4, phone: '+14155550701', reason: 'duplicate' },
        ],
      },
    });
    const rows = await tenant.request('GET', `/api/v1/campaigns/${response.body.data.id}/recipients`);
    expect(rows.body.data[0]).toMatchObject({ email: 'a@example.com', context: { plan: 'gold' }, line: 2 });
    const bad = form({ agent_id: agentId, name: 'Bad CSV' }, 'phone,email\n+14155550702,not-an-email\n');
    const refused = await t.inject({
      method: 'POST',
      url: '/api/v1/campaigns',
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': bad.contentType },
      payload: bad.payload,
    });
    expect(refused.status, refused.raw).toBe(422);
    expect(refused.body.error.details[0]).toEqual({
      field: 'file.email',
      issue: 'line 2: must be a valid email address.',
    });
  });

  it('other partner routes still refuse a form with 415', async () => {
    const { payload, contentType } = form({ name: 'x' }, 'phone\n');
    const response = await t.inject({
      method: 'POST',
      url: '/api/v1/users',
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': contentType },
      payload,
    });
    expect(response.status).toBe(415);
  });
});

describe('every offending field at once (422 validation_failed)', () => {
  const fieldsOf = (response: { body: any }) =>
    (response.body.error.details as { field: string }[]).map((detail) => detail.field).sort();

  it('names the schema’s issues, both calling-hours problems and every malformed row together', async () => {
    const [campaigns, rows] = [await campaignCount(), await rowCount()];
    const response = await tenant.request(
      'POST',
      '/api/v1/campaigns',
      {
        agent_id: agentId,
        name: 'x'.repeat(201),
        max_concurrent_calls: 0,
        calling_hours: { timezone: 'Mars/Olympus_Mons', days: [1], start: '09:00', end: '09:00' },
        recipients: [
          { phone: '+14155550901', email: 'not an email' },
          { phone: '+14155550902' },
          { phone: '+14155550903', name: 'y'.repeat(201), email: 'also@not' },
        ],
      },
      { 'Idempotency-Key': 'every-issue-1' },
    );
    expect(response.status, response.raw).toBe(422);
    expect(response.body.error.code).toBe('validation_failed');
    expect(fieldsOf(response)).toEqual(
      [
        'calling_hours.end',
        'calling_hours.timezone',
        'max_concurrent_calls',
        'name',
        'recipients.0.email',
        'recipients.2.email',
        'recipients.2.name',
      ].sort(),
    );
    // Refused before the Idempotency-Key was claimed: the same key still creates once the body is good.
    const good = await tenant.request(
      'POST',
      '/api/v1/campaigns',
      { agent_id: agentId, name: 'Good', recipients: [{ phone: '+14155550904' }] },
      { 'Idempotency-Key': 'every-issue-1' },
    );
    expect(good.status, good.raw).toBe(201);
    expect([await campaignCount(), await rowCount()]).toEqual([campaigns + 1, rows + 1]);
  });

  it('without a schema problem, still names both calling-hours problems and the rows’ together', async () => {
    const response = await tenant.request('POST', '/api/v1/campaigns', {
      agent_id: agentId,
      name: 'Settings',
      calling_hours: { timezone: 'Mars/Olympus_Mons', days: [1], start: '09:00', end: '09:00' },
      recipients: [{ phone: '+14155550905', email: 'not an email' }],
    });
    expect(fieldsOf(response)).toEqual(['calling_hours.end', 'calling_hours.timezone', 'recipients.0.email']);
  });

  it('a CSV upload names the form’s problems, the schema’s and the file’s rows together', async () => {
    const boundary = 'EveryIssue42';
    const field = (name: string, value: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const payload = [
      field('agent_id', agentId),
      field('name', 'CSV'),
      field('name', 'CSV again'),
      field('retry', '{not json'),
      field('max_concurrent_calls', '0'),
      field('calling_hours', '{"timezone":"Mars/Olympus_Mons","days":[1],"start":"09:00","end":"17:00"}'),
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="list.csv"\r\nContent-Type: text/csv\r\n\r\nphone,email\r\n+14155550906,not-an-email\r\n\r\n`,
      `--${boundary}--\r\n`,
    ].join('');
    const response = await t.inject({
      method: 'POST',
      url: '/api/v1/campaigns',
      headers: {
        authorization: `Bearer ${tenant.key}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
      payload,
    });
    expect(response.status, response.raw).toBe(422);
    expect(fieldsOf(response)).toEqual(
      ['calling_hours.timezone', 'file.email', 'max_concurrent_calls', 'name', 'retry'].sort(),
    );
  });

  it('added recipients: the schema’s issues and the rows’ together', async () => {
    const created = await tenant.request('POST', '/api/v1/campaigns', {
      agent_id: agentId,
      name: 'More',
      recipients: [{ phone: '+14155550907' }],
    });
    const response = await tenant.request('POST', `/api/v1/campaigns/${created.body.data.id}/recipients`, {
      recipients: [{ phone: '+14155550908', email: 'nope' }, { phone: 42 }],
    });
    // The row the schema refused is named for its phone; the row it accepted for its email.
    expect(fieldsOf(response)).toEqual(['recipients.0.email', 'recipients.1.phone']);
    const rowsOnly = await tenant.request('POST', `/api/v1/campaigns/${created.body.data.id}/recipients`, {
      recipients: [
        { phone: '+14155550908', email: 'nope' },
        { phone: '+14155550909', name: 'z'.repeat(201) },
      ],
      extra: true,
    });
    expect(fieldsOf(rowsOnly)).toEqual(['extra', 'recipients.0.email', 'recipients.1.name']);
  });
});
