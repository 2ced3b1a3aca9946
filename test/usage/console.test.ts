/**
 * The console's usage page and its CSV over plain HTTP: a viewer sees every user's month, the
 * totals and the margin ("not metered" without a wallet, retail − wholesale with one); the CSV
 * escapes quotes and commas and guards cells a spreadsheet would run as formulas; a bad month is a
 * 422 page beside its field; signed out, nothing.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { csvCell, toCsv } from '../../src/core/csv.js';
import { type ConsoleFixture, startConsole } from '../console/helpers.js';
import { type ConsoleClient, consoleClient } from '../console/http.js';
import { createPlan, createUser } from '../support/app.js';
import { adjust } from './helpers.js';

describe('csv cells', () => {
  it.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['=1+1', "'=1+1"],
    ['+1+1', "'+1+1"],
    ['-2+3', "'-2+3"],
    ['-1', '-1'],
    ['+14155550100', '+14155550100'],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['=HYPERLINK("http://x", "y")', `"'=HYPERLINK(""http://x"", ""y"")"`],
  ])('%j is written %s', (value, written) => {
    expect(csvCell(value)).toBe(written);
  });

  it('writes numbers as numbers (a negative balance stays one) and null as empty', () => {
    expect(toCsv([['a', -30, null, 0]])).toBe('a,-30,,0\r\n');
  });
});

describe('the usage page', () => {
  const clock = new ManualClock('2026-03-03T10:00:00.000Z');
  let f: ConsoleFixture;
  let viewer: ConsoleClient;
  let userId: string;
  const NAME = '=SUM(A1), "boss"';

  beforeAll(async () => {
    f = await startConsole({ clock });

    const plan = await createPlan(f.t, f.tenant.id, {
      name: 'Agency',
      provider: 'agency',
      included_minutes: 100,
      overage_rate: 0.12,
      topup_rate: 0.1,
    });
    userId = (await createUser(f.tenant, { name: NAME })).id;
    await createUser(f.tenant, { name: 'Quiet Customer' });
    const sub = await f.tenant.request('POST', '/api/v1/subscriptions', {
      user_id: userId,
      plan_id: plan.id,
    });
    expect(sub.status).toBe(201);
    const topUp = await f.tenant.request('POST', `/api/v1/users/${userId}/top-ups`, { minutes: 20 });
    expect(topUp.status).toBe(201);
    expect(await adjust(f.t, userId, -150)).toBe(-30);
    clock.set('2026-04-03T10:00:01.000Z');
    await f.t.services.jobRunner.drain();
    // Signed in after the clock moved, so the session is fresh.
    const member = await f.addMember('viewer');
    viewer = consoleClient(f.t);
    expect((await viewer.signIn(member.email, member.password)).status).toBe(303);
  });
  afterAll(() => f?.close());

  it('shows every user’s month and says wholesale is not metered without a wallet', async () => {
    const page = await viewer.get('/console/usage?period=2026-04');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<h1>Usage</h1>');
    expect(page.body).toContain('href="/console/usage" aria-current="page"');
    expect(page.body).toContain('<label for="period">Month (UTC)</label>');
    expect(page.body).toContain('value="2026-04"');
    expect(page.body).toContain('Quiet Customer');
    // The user's name is escaped in HTML, never markup.
    expect(page.body).toContain('=SUM(A1), &quot;boss&quot;');
    expect(page.body).toContain('$3.60');
    expect(page.body).toContain('Wholesale not metered');
    expect(page.body).toContain('href="/console/usage.csv?period=2026-04"');

    const march = await viewer.get('/console/usage?period=2026-03');
    expect(march.body).toContain('$2.00');
    expect(march.body).not.toContain('$3.60');
  });

  it('shows the margin per currency once the agency has a wallet', async () => {
    const db = f.t.services.database.db;
    const at = new Date('2026-04-10T00:00:00.000Z');
    await sql`INSERT INTO tenant_wallets (tenant_id, balance_minutes, wholesale_rate, currency, created_at, updated_at)
              VALUES (${f.tenant.id}, 1000, 0.05, 'usd', ${at}, ${at})`.execute(db);
    await sql`INSERT INTO wallet_ledger (id, tenant_id, minutes, wholesale_rate, reason, reference, user_id, created_at)
              VALUES ('wled_usage_test_1', ${f.tenant.id}, -40, 0.05, 'call', 'call:usage-test-1', ${userId}, ${at}),
                     ('wled_usage_test_2', ${f.tenant.id}, 500, 0.05, 'credit', 'credit:usage-test', NULL, ${at})`.execute(
      db,
    );
    const page = await viewer.get('/console/usage?period=2026-04');
    expect(page.body).not.toContain('Wholesale not metered');
    // Retail $3.60 (overage) − wholesale 40 × $0.05 = $1.60.
    const margin = /<th scope="row">USD<\/th>([\s\S]*?)<\/tr>/.exec(page.body)?.[1] ?? '';
    expect(margin).toContain('$3.60');
    expect(margin).toContain('$2.00');
    expect(margin).toContain('$1.60');
  });

  it('exports the month as CSV, escaped and guarded against formulas', async () => {
    const csv = await viewer.get('/console/usage.csv?period=2026-03');
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe('attachment; filename="usage-2026-03.csv"');
    const lines = csv.body.split('\r\n');
    expect(lines[0]).toBe(
      'user_id,email,name,period,included_minutes,used_minutes,topped_up_minutes,overage_minutes,adjustment_minutes,' +
        'balance_minutes,calls_completed,calls_no_answer,calls_failed,currency,top_ups_amount,overage_amount,total_amount',
    );
    const row = lines.find((line) => line.startsWith(`${userId},`));
    expect(row).toContain(`,"'=SUM(A1), ""boss""",2026-03,100,0,20,0,-150,-30,0,0,0,usd,200,0,200`);
  });

  it('refuses a month that is not one beside the field, and shows nothing signed out', async () => {
    const bad = await viewer.get('/console/usage?period=2026-13');
    expect(bad.status).toBe(422);
    expect(bad.body).toContain('id="period-error"');
    expect((await viewer.get('/console/usage.csv?period=nope')).status).toBe(422);

    const stranger = consoleClient(f.t);
    const page = await stranger.get('/console/usage');
    expect(page.status).not.toBe(200);
    expect(page.body).not.toContain('Quiet Customer');
  });
});
