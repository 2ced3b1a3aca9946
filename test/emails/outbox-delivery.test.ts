/**
 * The outbox under failure: SMTP outages, give-up after the back-off schedule, permanent
 * rejections that do not hold up other emails, several workers, a worker that dies between the
 * send and its acknowledgement, and POST /users while the SMTP server hangs.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createJobRunner } from '../../src/core/jobs/runner.js';
import { EMAIL_QUEUE, MAX_SEND_ATTEMPTS } from '../../src/emails/service.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createEmailTenant, emailJobs, operatorEmails, outboxRows, postUser } from './helpers.js';
import { createSmtpServer, freePort, type ReceivedMessage } from './smtp.js';

const HOUR = 60 * 60_000;
const PASSWORD = 'outb0x-Pa55word!';

let t: TestApp;
const clock = new ManualClock('2026-11-21T10:00:00.000Z');

beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(async () => {
  await t?.close();
});

function countByMessageId(messages: ReceivedMessage[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of messages)
    counts.set(m.headers['message-id'], (counts.get(m.headers['message-id']) ?? 0) + 1);
  return counts;
}

/** Moves the clock until every queued email job of the tenant is due, and runs the queue. */
async function runRetries(tenantId: string): Promise<number> {
  const queued = (await emailJobs(t, tenantId)).filter((j) => j.status === 'queued');
  expect(queued.length).toBeGreaterThan(0);
  const latest = Math.max(...queued.map((j) => j.run_at.getTime()));
  const delay = latest - clock.now().getTime();
  if (delay > 0) clock.advance(delay);
  await t.services.jobRunner.drain();
  return delay;
}

describe('SMTP outage', () => {
  it('answers 201 while the server is down, then delivers each email exactly once when it is back', async () => {
    const smtp = await createSmtpServer(); // not listening yet
    const tenant = await createEmailTenant(
      t,
      { smtp_url: smtp.url(), from: 'outage@acme.example' },
      'Outage',
    );
    const users = [];
    for (let i = 0; i < 4; i++) users.push(await postUser(tenant));

    await t.services.jobRunner.drain();
    let rows = await outboxRows(t, tenant.id);
    expect(rows).toHaveLength(4);
    for (const row of rows) {
      expect(row).toMatchObject({ status: 'pending', attempts: 1 });
      expect(row.last_error).toMatch(/ECONNREFUSED|ECONNECTION|connect/i);
    }

    // Still down at the second attempt.
    expect(await runRetries(tenant.id)).toBeGreaterThanOrEqual(30_000);
    expect((await outboxRows(t, tenant.id)).every((r) => r.attempts === 2 && r.status === 'pending')).toBe(
      true,
    );

    await smtp.start();
    try {
      await runRetries(tenant.id);
      rows = await outboxRows(t, tenant.id);
      expect(rows.map((r) => r.status)).toEqual(['sent', 'sent', 'sent', 'sent']);
      expect(rows.every((r) => r.attempts === 3 && r.last_error === null)).toBe(true);

      // Nothing more goes out, however long the worker keeps running.
      clock.advance(6 * HOUR);
      await t.services.jobRunner.drain();
      const counts = countByMessageId(smtp.messages);
      expect(counts.size).toBe(4);
      expect([...counts.values()]).toEqual([1, 1, 1, 1]);
      expect(new Set(smtp.messages.flatMap((m) => m.envelope.to))).toEqual(
        new Set(users.map((u) => u.email)),
      );
      expect((await emailJobs(t, tenant.id)).every((j) => j.status === 'done')).toBe(true);
    } finally {
      await smtp.stop();
    }
  });

  it('retries with exponential back-off for more than an hour, then ends failed with the reason', async () => {
    const port = await freePort(); // nothing listens there
    const tenant = await createEmailTenant(
      t,
      { smtp_url: `smtp://127.0.0.1:${port}`, from: 'down@acme.example' },
      'Down',
    );
    await postUser(tenant);
    await t.services.jobRunner.drain();
    const delays: number[] = [];
    for (let attempt = 2; attempt <= MAX_SEND_ATTEMPTS; attempt++) delays.push(await runRetries(tenant.id));

    // Each wait is longer than the one before until the cap, and together they span over an hour.
    for (let i = 1; i < delays.length; i++) expect(delays[i]).toBeGreaterThanOrEqual(delays[i - 1] * 0.9);
    expect(delays[0]).toBeGreaterThanOrEqual(30_000);
    expect(delays.reduce((a, b) => a + b, 0)).toBeGreaterThan(HOUR);

    const [row] = await outboxRows(t, tenant.id);
    expect(row.status).toBe('failed');
    expect(row.attempts).toBe(MAX_SEND_ATTEMPTS);
    expect(row.last_error).toMatch(
      new RegExp(`^gave up after ${MAX_SEND_ATTEMPTS} attempts: .*(ECONNREFUSED|ECONNECTION|connect)`, 'i'),
    );
    const [job] = await emailJobs(t, tenant.id);
    expect(job.status).toBe('failed');

    clock.advance(24 * HOUR);
    await t.services.jobRunner.drain();
    expect((await outboxRows(t, tenant.id))[0].attempts).toBe(MAX_SEND_ATTEMPTS);
  });
});

describe('permanent failures', () => {
  it('a refused recipient and an authentication failure end failed at once, without holding up other emails', async () => {
    const smtp = await createSmtpServer({
      users: { mailer: PASSWORD },
      rejectRecipient: (address) => address.startsWith('nobody'),
    });
    await smtp.start();
    try {
      const good = await createEmailTenant(
        t,
        { smtp_url: smtp.url('mailer', PASSWORD), from: 'good@acme.example' },
        'Good',
      );
      const wrongPassword = 'wr0ng-Pa55word!';
      const badAuth = await createEmailTenant(
        t,
        { smtp_url: smtp.url('mailer', wrongPassword), from: 'bad@acme.example' },
        'Bad credentials',
      );
      const before = await postUser(good, { email: 'before@client.example' });
      const refused = await postUser(good, { email: 'nobody@client.example' });
      const unauthenticated = await postUser(badAuth, { email: 'victim@client.example' });
      const after = await postUser(good, { email: 'after@client.example' });

      await t.services.jobRunner.drain();

      const delivered = smtp.messages.flatMap((m) => m.envelope.to);
      expect(delivered).toEqual(expect.arrayContaining([before.email, after.email]));
      expect(delivered).not.toContain(refused.email);
      expect(delivered).not.toContain(unauthenticated.email);

      const goodRows = await outboxRows(t, good.id);
      expect(goodRows.find((r) => r.user_id === refused.id)).toMatchObject({ status: 'failed', attempts: 1 });
      expect(goodRows.find((r) => r.user_id === refused.id)!.last_error).toMatch(
        /550 .*nobody@client\.example/,
      );
      expect(
        goodRows
          .filter((r) => r.status === 'sent')
          .map((r) => r.user_id)
          .sort(),
      ).toEqual([after.id, before.id].sort());

      const [authRow] = await outboxRows(t, badAuth.id);
      expect(authRow).toMatchObject({ user_id: unauthenticated.id, status: 'failed', attempts: 1 });
      expect(authRow.last_error).toMatch(/EAUTH.*535/);
      expect(smtp.logins.some((l) => l.pass === wrongPassword)).toBe(true); // the server did see it…

      // …but it appears in no answer, stored reason or log line.
      const listed = await t.admin('GET', `/admin/v1/tenants/${badAuth.id}/emails`);
      expect(listed.body.data[0]).toMatchObject({ status: 'failed', attempts: 1 });
      expect(listed.body.data[0].last_error).toMatch(/535/);
      const jobs = await emailJobs(t, badAuth.id);
      expect(jobs.map((j) => j.status)).toEqual(['failed']);
      for (const text of [listed.raw, authRow.last_error!, jobs[0].last_error!, t.logs.join('\n')]) {
        expect(text).not.toContain(wrongPassword);
        expect(text).not.toContain(encodeURIComponent(wrongPassword));
        expect(text).not.toContain(PASSWORD);
      }

      // Permanent failures are not retried later.
      const count = smtp.messages.length;
      clock.advance(6 * HOUR);
      await t.services.jobRunner.drain();
      expect(smtp.messages.length).toBe(count);
      expect((await outboxRows(t, badAuth.id))[0].attempts).toBe(1);
    } finally {
      await smtp.stop();
    }
  });
});

describe('exactly once', () => {
  it('several workers draining the same queue deliver each email once', async () => {
    const smtp = await createSmtpServer();
    await smtp.start();
    try {
      const tenant = await createEmailTenant(
        t,
        { smtp_url: smtp.url(), from: 'crowd@acme.example' },
        'Crowd',
      );
      for (let i = 0; i < 8; i++) await postUser(tenant);
      const db = t.services.database.db;
      const workers = [0, 1, 2].map(() =>
        createJobRunner({ db, clock, handlers: t.services.jobHandlers, batchSize: 2 }),
      );
      await Promise.all([...workers.map((w) => w.drain()), t.services.jobRunner.drain()]);
      const counts = countByMessageId(smtp.messages);
      expect(counts.size).toBe(8);
      expect([...counts.values()].every((n) => n === 1)).toBe(true);
      expect((await outboxRows(t, tenant.id)).every((r) => r.status === 'sent' && r.attempts === 1)).toBe(
        true,
      );
    } finally {
      await smtp.stop();
    }
  });

  it('a worker that dies after sending, before acknowledging its job, does not make the email go out twice', async () => {
    const smtp = await createSmtpServer();
    await smtp.start();
    try {
      const tenant = await createEmailTenant(
        t,
        { smtp_url: smtp.url(), from: 'crash@acme.example' },
        'Crash',
      );
      const user = await postUser(tenant);
      // This worker runs the real handler, then hangs forever: its job stays `running` under a
      // lease that nobody will renew, as after a process crash.
      const doomed = createJobRunner({
        db: t.services.database.db,
        clock,
        handlers: {
          [EMAIL_QUEUE]: async (job) => {
            await t.services.jobHandlers[EMAIL_QUEUE](job);
            await new Promise(() => {});
          },
        },
      });
      void doomed.runOnce();
      await expect
        .poll(async () => (await outboxRows(t, tenant.id))[0]?.status, { timeout: 10_000 })
        .toBe('sent');
      expect((await emailJobs(t, tenant.id))[0].status).toBe('running');

      // The lease runs out; another worker takes the job over and finds the email already sent.
      clock.advance(2 * 60_000);
      expect(await t.services.jobRunner.drain()).toBe(1);
      expect((await emailJobs(t, tenant.id))[0].status).toBe('done');
      expect(smtp.messages.filter((m) => m.envelope.to.includes(user.email))).toHaveLength(1);
      expect((await outboxRows(t, tenant.id))[0].attempts).toBe(1);
    } finally {
      await smtp.stop();
    }
  });

  it('keeps the same Message-ID on every attempt, so a repeat the server already took is recognisable', async () => {
    let refuseOnce = true;
    const smtp = await createSmtpServer({
      // The server reads the whole message, then answers 451: the client must try again.
      afterData: () => {
        if (!refuseOnce) return undefined;
        refuseOnce = false;
        return { code: 451, message: 'Local error in processing, try again later' };
      },
    });
    await smtp.start();
    try {
      const tenant = await createEmailTenant(
        t,
        { smtp_url: smtp.url(), from: 'again@acme.example' },
        'Again',
      );
      const user = await postUser(tenant);
      await t.services.jobRunner.drain();
      let [row] = await outboxRows(t, tenant.id);
      expect(row).toMatchObject({ status: 'pending', attempts: 1 });
      expect(row.last_error).toMatch(/451/);
      await runRetries(tenant.id);
      [row] = await outboxRows(t, tenant.id);
      expect(row).toMatchObject({ status: 'sent', attempts: 2 });
      const received = smtp.messages.filter((m) => m.envelope.to.includes(user.email));
      expect(received).toHaveLength(2);
      expect(received[0].headers['message-id']).toBe(row.message_id);
      expect(received[1].headers['message-id']).toBe(row.message_id);
      expect(received[1].text).toBe(received[0].text);
    } finally {
      await smtp.stop();
    }
  });
});

describe('POST /users and SMTP', () => {
  it('answers 201 while the running worker is stuck on an SMTP server that never answers', async () => {
    // Accepts connections and never sends the SMTP greeting.
    const sockets = new Set<net.Socket>();
    const blackhole = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
    const { port } = blackhole.address() as net.AddressInfo;
    const tenant = await createEmailTenant(
      t,
      { smtp_url: `smtp://127.0.0.1:${port}`, from: 'slow@acme.example' },
      'Slow',
    );
    t.services.jobRunner.start();
    try {
      await postUser(tenant);
      await expect.poll(() => sockets.size, { timeout: 10_000 }).toBeGreaterThan(0);

      // A delivery is in progress and hanging; user creation goes on regardless.
      const second = await tenant.request('POST', '/api/v1/users', {
        email: 'while-hanging@client.example',
        name: 'While Hanging',
        password: 'correct horse battery',
      });
      expect(second.status).toBe(201);
      const rows = await outboxRows(t, tenant.id);
      expect(rows).toHaveLength(2);
      expect(rows.every((r) => r.status === 'pending')).toBe(true);
      expect(rows[0].sent_at).toBeNull();
    } finally {
      for (const socket of sockets) socket.destroy();
      await t.services.jobRunner.stop();
      await new Promise<void>((resolve) => blackhole.close(() => resolve()));
    }
    const listed = await operatorEmails(t, tenant.id);
    expect(listed.data.every((e) => e.status === 'pending')).toBe(true);
  });
});
