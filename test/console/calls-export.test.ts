/**
 * The calls list as CSV: the calls page links the export with its filters; the file holds every
 * matching call of the member's tenant once, newest first, across batch boundaries (ties on
 * created_at to the microsecond included), none of another tenant's, and a cell a spreadsheet
 * would run as a formula is defused.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, createUser } from '../support/app.js';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { consoleClient } from './http.js';

const CALLS = 2_203;

let f: ConsoleFixture;
let userId: string;

async function seedCalls(tenantId: string, userId: string, agentId: string, count: number, salt: string) {
  // Three calls share each created_at (to the microsecond); every fourth was not answered.
  await sql`
    INSERT INTO calls (id, tenant_id, agent_id, agent_version, user_id, from_number, to_number, name, email,
                       context, prompt, welcome_message, status, created_at, started_at, ended_at,
                       duration_seconds, updated_at, attempts, billed_minutes, ended_reason)
    SELECT 'call_' || md5(${salt} || g), ${tenantId}, ${agentId}, 1, ${userId},
           '+14155550100', '+1415' || lpad(g::text, 7, '0'),
           CASE WHEN g = 7 THEN '=HYPERLINK("http://evil.example")' ELSE 'Callee ' || g END, NULL,
           '{}'::jsonb, 'Prompt', 'Hello', CASE WHEN g % 4 = 0 THEN 'no_answer' ELSE 'completed' END,
           '2026-11-01T10:00:00.123456Z'::timestamptz + (g / 3) * interval '1 second',
           NULL, NULL, CASE WHEN g % 4 = 0 THEN 0 ELSE 60 END,
           '2026-11-01T10:00:00Z'::timestamptz, 1, CASE WHEN g % 4 = 0 THEN 0 ELSE 1 END,
           CASE WHEN g % 4 = 0 THEN 'no_answer' ELSE 'completed' END
    FROM generate_series(1, ${count}::int) g`.execute(f.t.services.database.db);
}

async function agentFor(tenantId: string, userId: string): Promise<string> {
  const created = await f.t.admin('POST', `/admin/v1/tenants/${tenantId}/agents`, {
    user_id: userId,
    name: 'Front desk',
    phone_number: '+14155550100',
    prompt: 'You call {name}.',
    welcome_message: 'Hello {name}.',
  });
  expect(created.status, created.raw).toBe(201);
  return created.body.data.id;
}

beforeAll(async () => {
  f = await startConsole();
  const user = await createUser(f.tenant, { name: 'Ada Lovelace' });
  userId = user.id;
  await seedCalls(f.tenant.id, user.id, await agentFor(f.tenant.id, user.id), CALLS, 'a');
  const other = await createTenant(f.t, { name: 'Other Agency' });
  const otherUser = await createUser(other, { name: 'Eve' });
  await seedCalls(other.id, otherUser.id, await agentFor(other.id, otherUser.id), 5, 'b');
}, 180_000);
afterAll(() => f?.close());

function parse(csv: string): string[][] {
  return csv
    .trimEnd()
    .split('\r\n')
    .map((line) => line.split(','));
}

describe('GET /console/calls.csv', () => {
  it('exports every call of the tenant once, newest first, and none of another tenant', async () => {
    const client = consoleClient(f.t);
    await client.signIn(f.owner.email, f.owner.password);
    const page = await client.get('/console/calls');
    expect(page.body).toContain('href="/console/calls.csv" download>Export CSV</a>');

    const csv = await client.get('/console/calls.csv');
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe('attachment; filename="calls.csv"');
    const [header, ...rows] = parse(csv.body);
    expect(header).toEqual([
      'id',
      'created_at',
      'agent_id',
      'user_id',
      'to',
      'name',
      'status',
      'ended_reason',
      'answered_by',
      'duration_seconds',
      'billed_minutes',
      'started_at',
      'ended_at',
    ]);
    expect(rows).toHaveLength(CALLS);
    expect(new Set(rows.map((row) => row[0])).size).toBe(CALLS);
    const created = rows.map((row) => row[1]);
    expect([...created].sort().reverse()).toEqual(created);
    expect(rows.some((row) => row[4] === '+14150000001')).toBe(true);
    expect(rows.every((row) => row[3] === userId)).toBe(true);
    expect(csv.body).toContain(`"'=HYPERLINK(""http://evil.example"")"`);
  });

  it('keeps the filters of the list', async () => {
    const client = consoleClient(f.t);
    await client.signIn(f.owner.email, f.owner.password);
    const page = await client.get('/console/calls?status=no_answer&created_after=2026-11-01T10%3A05');
    expect(page.body).toContain(
      'href="/console/calls.csv?status=no_answer&amp;created_after=2026-11-01T10%3A05" download',
    );
    const csv = await client.get('/console/calls.csv?status=no_answer&created_after=2026-11-01T10%3A05');
    const rows = parse(csv.body).slice(1);
    // Every fourth call was not answered; those created after 10:05 are the calls from g = 900 on.
    const expected = Array.from({ length: CALLS }, (_, i) => i + 1).filter(
      (g) => g % 4 === 0 && Math.floor(g / 3) >= 300,
    ).length;
    expect(rows).toHaveLength(expected);
    expect(rows.every((row) => row[6] === 'no_answer')).toBe(true);

    const refused = await client.get('/console/calls.csv?status=exploded');
    expect(refused.status).toBe(422);
  });
});
