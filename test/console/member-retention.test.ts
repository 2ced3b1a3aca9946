/**
 * The console's sign-in records do not pile up: a recurring maintenance job deletes sessions 7
 * days after they ended (expired or revoked) and invitations 30 days after they expired or were
 * used or revoked, and comes back an hour later.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { MEMBER_PURGE_QUEUE, scheduleMaintenance } from '../../src/maintenance/jobs.js';
import { purgeEndedMemberRecords } from '../../src/members/retention.js';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { consoleClient } from './http.js';

const DAY = 24 * 3_600_000;
const clock = new ManualClock('2026-03-01T12:00:00.000Z');
let f: ConsoleFixture;

beforeAll(async () => {
  f = await startConsole({ clock });
});
afterAll(async () => {
  await f?.close();
});

const db = () => f.t.services.database.db;
const sessionIds = async () =>
  (await db().selectFrom('member_sessions').select('id').orderBy('created_at').execute()).map((r) => r.id);
const invitationEmails = async () =>
  (await db().selectFrom('member_invitations').select('email').orderBy('email').execute()).map(
    (r) => r.email,
  );

/** Runs what is due: the recurring job, scheduled once, comes back an hour after each run. */
const runMaintenance = () => f.t.services.jobRunner.drain();

describe('member session and invitation retention', () => {
  it('deletes sessions a week after they ended and invitations 30 days after they were spent', async () => {
    await scheduleMaintenance(f.t.services);
    await runMaintenance();
    const owner = consoleClient(f.t);
    expect((await owner.signIn(f.owner.email, f.owner.password)).status).toBe(303);
    const invite = (email: string) => owner.post('/console/members/invitations', { email, role: 'viewer' });
    await invite('unused@northwind.example');
    const link = /\/console\/invitations\/vpi_[A-Za-z0-9]+/.exec(
      (await invite('used@northwind.example')).body,
    )![0];
    expect((await consoleClient(f.t).post(link, { name: 'Used', password: 'a good password' })).status).toBe(
      303,
    );
    // A session signed out at once (revoked), and the owner's, which expires after 12 hours.
    const leaving = consoleClient(f.t);
    await leaving.signIn(f.owner.email, f.owner.password);
    await leaving.post('/console/sign-out', {});
    const [ownerSession, joinerSession, revokedSession] = await sessionIds();

    clock.advance(7 * DAY - 3_600_000);
    await runMaintenance();
    expect(await sessionIds()).toEqual([ownerSession, joinerSession, revokedSession]);

    // A week after the sign-out: the revoked session goes; the others expired only 12 hours later.
    clock.advance(2 * 3_600_000);
    const fresh = consoleClient(f.t);
    await fresh.signIn(f.owner.email, f.owner.password);
    await runMaintenance();
    const [freshSession] = (await sessionIds()).filter((id) => ![ownerSession, joinerSession].includes(id));
    expect(await sessionIds()).toEqual([ownerSession, joinerSession, freshSession]);
    clock.advance(DAY / 2);
    await runMaintenance();
    expect(await sessionIds()).toEqual([freshSession]);
    expect(await invitationEmails()).toEqual(['unused@northwind.example', 'used@northwind.example']);

    // 30 days after use, the used invitation goes; the unused one 30 days after its 72-hour expiry.
    clock.advance(23 * DAY);
    await runMaintenance();
    expect(await invitationEmails()).toEqual(['unused@northwind.example']);
    clock.advance(3 * DAY);
    await runMaintenance();
    expect(await invitationEmails()).toEqual([]);

    const next = await db()
      .selectFrom('jobs')
      .select('run_at')
      .where('queue', '=', MEMBER_PURGE_QUEUE)
      .where('status', '=', 'queued')
      .execute();
    expect(next.map((j) => j.run_at.getTime())).toEqual([clock.now().getTime() + 3_600_000]);
  });

  it('purges in bounded batches and says when more are left', async () => {
    const now = clock.now();
    const ended = new Date(now.getTime() - 8 * DAY);
    await db()
      .insertInto('member_sessions')
      .values(
        [1, 2, 3, 4, 5].map((n) => ({
          id: `mses_batch${n}`,
          tenant_id: f.tenant.id,
          member_id: f.owner.id,
          token_hash: `batch-${n}`,
          awaiting_totp: false,
          created_at: ended,
          last_seen_at: ended,
          expires_at: new Date(ended.getTime() + 3_600_000),
          revoked_at: n % 2 ? ended : null,
        })),
      )
      .execute();
    expect(await purgeEndedMemberRecords(db(), { now, batchSize: 2, maxBatches: 2 })).toEqual({
      sessions: 4,
      invitations: 0,
      more: true,
    });
    expect(await purgeEndedMemberRecords(db(), { now, batchSize: 2, maxBatches: 2 })).toEqual({
      sessions: 1,
      invitations: 0,
      more: false,
    });
  });
});
