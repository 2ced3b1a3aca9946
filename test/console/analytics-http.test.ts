/**
 * The business numbers of the console over HTTP: calls analytics over a chosen range (totals,
 * answer rate, minutes, outcomes and ended reasons per day, per agent; one tenant only; a range
 * refused field by field), and the overview's revenue of the month and recent activity.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { agentFixture } from '../calls/helpers.js';
import { createPlan, createTenant, createUser } from '../support/app.js';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { type ConsoleClient, consoleClient } from './http.js';

const clock = new ManualClock(new Date('2026-11-20T09:00:00Z'));
let f: ConsoleFixture;
let owner: ConsoleClient;

/** Places calls to these numbers (0000: no answer, 9999: fails) and lets them end (60 s each). */
async function placeCalls(tenant: ConsoleFixture['tenant'], agentId: string, phones: string[]) {
  for (const phone of phones) {
    const placed = await tenant.request('POST', '/api/v1/calls', { agent_id: agentId, phone });
    expect(placed.status, placed.raw).toBe(202);
  }
  await f.t.services.jobRunner.drain();
  clock.advance(61_000);
  await f.t.services.jobRunner.drain();
}

const stat = (page: string, label: string) =>
  new RegExp(`${label}</p><p class="stat-value">([^<]+)<`).exec(page)?.[1];

let firstAgent: { id: string; name: string };
let secondAgent: { id: string; name: string };

beforeAll(async () => {
  f = await startConsole({ clock, env: { SIMULATED_CALL_SECONDS: '60' } });
  const one = await agentFixture(f.t, { tenant: f.tenant, credits: 1000, agent: { name: 'Front desk' } });
  const two = await agentFixture(f.t, { tenant: f.tenant, credits: 1000, agent: { name: 'Renewals' } });
  firstAgent = { id: one.agent.id, name: 'Front desk' };
  secondAgent = { id: two.agent.id, name: 'Renewals' };
  // Nov 20: two answered, one not answered, one failed; Nov 22: one answered by each agent.
  await placeCalls(f.tenant, firstAgent.id, ['+14155551001', '+14155551002', '+14155550000', '+14155559999']);
  clock.advance(2 * 24 * 3600_000);
  await placeCalls(f.tenant, firstAgent.id, ['+14155551003']);
  await placeCalls(f.tenant, secondAgent.id, ['+14155551004']);
  // Another agency's calls count for it alone.
  const other = await agentFixture(f.t, { credits: 1000 });
  await placeCalls(other.tenant, other.agent.id, ['+14155551005', '+14155551006']);
  // Signed in once the calls are over: a console session ends after an hour without a request.
  owner = consoleClient(f.t);
  await owner.signIn(f.owner.email, f.owner.password);
});
afterAll(() => f?.close());

describe('calls analytics', () => {
  it('shows the last 30 days by default: calls, answer rate, average and total minutes', async () => {
    const page = await owner.get('/console/analytics');
    expect(page.status).toBe(200);
    expect(page.body).toContain('value="2026-10-24"'); // from: 29 days before today (Nov 22)
    expect(page.body).toContain('value="2026-11-22"');
    expect(stat(page.body, 'Calls')).toBe('6');
    expect(stat(page.body, 'Answer rate')).toBe('66.7%'); // 4 answered of 6 ended
    expect(stat(page.body, 'Average call')).toBe('1.0 min');
    expect(stat(page.body, 'Minutes billed')).toBe('4');
    expect(page.body).toContain('href="/console/analytics"');
    expect(page.body).toContain('aria-current="page"');
  });

  it('gives outcomes and ended reasons per day, with a table beside each chart', async () => {
    const page = (await owner.get('/console/analytics?from=2026-11-20&to=2026-11-22')).body;
    expect(page).toContain('aria-label="Calls per day by outcome, 2026-11-20 to 2026-11-22: 6 in all"');
    // Day, calls, completed, no answer, failed, not ended, minutes.
    const row = (cells: string[]) =>
      `<th scope="row">${cells[0]}</th>${cells
        .slice(1)
        .map((cell) => `<td class="numeric">${cell}</td>`)
        .join('')}`;
    expect(page).toContain(row(['2026-11-20', '4', '2', '1', '1', '0', '2']));
    expect(page).toContain(row(['2026-11-21', '0', '0', '0', '0', '0', '0']));
    expect(page).toContain(row(['2026-11-22', '2', '2', '0', '0', '0', '2']));
    expect(page).toContain('Why calls ended');
    const data = await f.t.services.insights.calls(f.tenant.id, { from: '2026-11-20', to: '2026-11-22' });
    // Each day's reasons add up to its calls, and the page shows the same reasons.
    for (const [i, day] of data.reasonDays.entries()) {
      const calls = data.days[i].completed + data.days[i].no_answer + data.days[i].failed + data.days[i].open;
      expect(day.counts.reduce((a, b) => a + b, 0) + day.other).toBe(calls);
    }
    expect(data.reasons.length).toBeGreaterThan(1);
    for (const reason of data.reasons)
      expect(page).toContain(`<th scope="col" class="numeric">${reason}</th>`);
  });

  it('breaks the range down per agent, busiest first', async () => {
    const page = (await owner.get('/console/analytics?from=2026-11-20&to=2026-11-22')).body;
    const first = page.indexOf(`<a href="/console/agents/${firstAgent.id}">Front desk</a>`);
    const second = page.indexOf(`<a href="/console/agents/${secondAgent.id}">Renewals</a>`);
    expect(first).toBeGreaterThan(-1);
    expect(second).toBeGreaterThan(first);
    const data = await f.t.services.insights.calls(f.tenant.id, { from: '2026-11-20', to: '2026-11-22' });
    expect(data.agents.map((a) => [a.name, a.calls, a.answered, a.ended, a.minutes])).toEqual([
      ['Front desk', 5, 3, 5, 3],
      ['Renewals', 1, 1, 1, 1],
    ]);
    expect(data.agents[0].answerRate).toBeCloseTo(0.6);
  });

  it('counts only the chosen days', async () => {
    const page = (await owner.get('/console/analytics?from=2026-11-21&to=2026-11-22')).body;
    expect(stat(page, 'Calls')).toBe('2');
    expect(stat(page, 'Answer rate')).toBe('100.0%');
    const empty = (await owner.get('/console/analytics?from=2026-01-01&to=2026-01-31')).body;
    expect(stat(empty, 'Calls')).toBe('0');
    expect(empty).toContain('No calls in this range');
  });

  it('refuses a range it cannot read, naming the field in words', async () => {
    const notADate = await owner.get('/console/analytics?from=2026-02-30&to=yesterday');
    expect(notADate.status).toBe(422);
    expect(notADate.body).toContain('From (UTC) must be a date, YYYY-MM-DD (e.g. 2026-11-01).');
    expect(notADate.body).toContain('To (UTC), included must be a date, YYYY-MM-DD');
    expect(notADate.body).toContain('value="2026-02-30"'); // what was typed stays in the form
    const backwards = await owner.get('/console/analytics?from=2026-11-22&to=2026-11-01');
    expect(backwards.status).toBe(422);
    expect(backwards.body).toContain('From (UTC) must be on or before the end date.');
    const tooLong = await owner.get('/console/analytics?from=2024-01-01&to=2026-11-01');
    expect(tooLong.status).toBe(422);
    expect(tooLong.body).toContain('From (UTC) must be at most 366 days before the end date.');
  });

  it('is read by a viewer too', async () => {
    const viewer = await f.addMember('viewer');
    const client = consoleClient(f.t);
    await client.signIn(viewer.email, viewer.password);
    const page = await client.get('/console/analytics');
    expect(page.status).toBe(200);
    expect(stat(page.body, 'Calls')).toBe('6');
  });
});

describe('the overview’s revenue and recent activity', () => {
  it('adds subscriptions, top-ups and overage billed this month, and the latest events in words', async () => {
    const tenant = await createTenant(f.t, { name: 'Revenue agency' });
    const member = await f.t.admin('POST', `/admin/v1/tenants/${tenant.id}/members`, {
      email: `rev-${Date.now()}@example.com`,
      password: 'owner password 123',
    });
    expect(member.status).toBe(201);
    const client = consoleClient(f.t);
    await client.signIn(member.body.data.email, 'owner password 123');
    const before = (await client.get('/console')).body;
    expect(stat(before, 'Billed this month')).toBe('$0.00');
    expect(before).toContain('Nothing billed yet this month.');

    const plan = await createPlan(f.t, tenant.id, { monthly_price: 2900, topup_rate: 0.1 });
    const user = await createUser(tenant, { name: 'Grace Hopper' });
    const subscribed = await tenant.request('POST', '/api/v1/subscriptions', {
      user_id: user.id,
      plan_id: plan.id,
    });
    expect(subscribed.status, subscribed.raw).toBe(201);
    const topUp = await tenant.request('POST', `/api/v1/users/${user.id}/top-ups`, { minutes: 100 });
    expect(topUp.status, topUp.raw).toBe(201);

    const page = (await client.get('/console')).body;
    // $29.00 for the period that started, $10.00 for 100 minutes at $0.10.
    expect(stat(page, 'Billed this month')).toBe('$39.00');
    expect(page).toContain(
      '<td class="numeric">$29.00</td>\n    <td class="numeric">$10.00</td>\n    <td class="numeric">$0.00</td>\n    <td class="numeric"><strong>$39.00</strong></td>',
    );
    expect(page).toContain(`User <a href="/console/users/${user.id}">Grace Hopper</a> created`);
    expect(page).toContain(
      `Subscription <a href="/console/subscriptions/${subscribed.body.data.id}">${subscribed.body.data.id}</a> created`,
    );
    // Another agency's revenue and events stay out.
    const own = (await owner.get('/console')).body;
    expect(own).not.toContain('Grace Hopper');
    expect(stat(own, 'Billed this month')).toBe('$0.00');
    expect(own).toContain('Call to <a href="/console/calls/');
  });

  it('lists at most the ten latest events, newest first', async () => {
    const events = await f.t.services.events.recent(f.tenant.id, 10);
    expect(events).toHaveLength(10);
    const times = events.map((e) => e.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    const page = (await owner.get('/console')).body;
    expect(page.match(/<li><span>/g)?.length).toBe(10);
  });
});
