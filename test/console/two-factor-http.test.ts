/**
 * The TOTP step of the console sign-in over plain HTTP: a session awaiting its code opens no page
 * and changes nothing, lives five minutes, ends after five wrong codes (counting a failed sign-in
 * of the member, so the lockout applies), a member's bucket limits the guesses, a code is accepted
 * once, and the accepted code starts a fresh session token (the half-open one ends).
 */
import { TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { type ConsoleClient, consoleClient } from './http.js';

let f: ConsoleFixture;
const clock = new ManualClock('2026-03-02T09:00:10Z');

beforeAll(async () => {
  f = await startConsole({ clock });
});
afterAll(async () => {
  await f?.close();
});

/** A member with TOTP on (through the same service functions as the account page). */
async function memberWithTotp(): Promise<{ id: string; email: string; password: string; totp: TOTP }> {
  const member = await f.addMember('admin');
  const session = {
    sessionId: 'mses_setup',
    memberId: member.id,
    tenantId: f.tenant.id,
    email: member.email,
    totpSecret: null,
  };
  const setup = f.t.services.members.totpSetup(session);
  const totp = new TOTP({ secret: setup.secret, digits: 6, period: 30 });
  await f.t.services.members.enableTotp(session, setup.sealed, codeAt(totp, -30_000));
  return { ...member, totp };
}

/** The code of the period `offsetMs` from the hand-moved now. */
const codeAt = (totp: TOTP, offsetMs = 0) => totp.generate({ timestamp: clock.now().getTime() + offsetMs });
const wrongCode = (totp: TOTP) => String((Number(codeAt(totp)) + 500_000) % 1_000_000).padStart(6, '0');

/** Signed in with the password, on the code page (its CSRF token bound to the half-open session). */
async function awaitingCode(member: { email: string; password: string }): Promise<ConsoleClient> {
  const client = consoleClient(f.t);
  const answer = await client.signIn(member.email, member.password);
  expect(answer.status).toBe(303);
  expect(answer.headers.location).toBe('/console/sign-in/two-factor?next=%2Fconsole');
  expect((await client.get('/console/sign-in/two-factor')).status).toBe(200);
  return client;
}

const memberRow = (id: string) =>
  f.t.services.database.db
    .selectFrom('members')
    .select(['failed_sign_ins', 'locked_until'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

describe('a session awaiting its TOTP code', () => {
  it('opens no page and changes nothing', async () => {
    const member = await memberWithTotp();
    const client = await awaitingCode(member);
    const users = await client.get('/console/users');
    expect(users.status).toBe(303);
    expect(users.headers.location).toBe('/console/sign-in/two-factor');
    const countKeys = async () =>
      Number(
        (
          await f.t.services.database.db
            .selectFrom('api_keys')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('tenant_id', '=', f.tenant.id)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await countKeys();
    const created = await client.post('/console/api-keys', { name: 'Sneaky key' });
    expect(created.status).toBe(303);
    expect(created.headers.location).toBe('/console/sign-in/two-factor');
    expect(await countKeys()).toBe(before);
  });

  it('ends five minutes after the password was accepted', async () => {
    const member = await memberWithTotp();
    const client = await awaitingCode(member);
    clock.advance(4 * 60_000);
    expect(await f.t.services.members.authenticate(client.sessionToken())).not.toBeNull();
    clock.advance(60_000 + 1000);
    expect(await f.t.services.members.authenticate(client.sessionToken())).toBeNull();
    const late = await client.get('/console/sign-in/two-factor');
    expect(late.status).toBe(303);
    expect(late.headers.location).toBe('/console/sign-in?next=%2Fconsole%2Fsign-in%2Ftwo-factor');
    clock.advance(60_000);
  });

  it('takes a right code once, under a fresh session token', async () => {
    const member = await memberWithTotp();
    const client = await awaitingCode(member);
    const halfOpen = client.sessionToken();
    const code = codeAt(member.totp);
    const accepted = await client.post('/console/sign-in/two-factor', { code, next: '/console/members' });
    expect(accepted.status).toBe(303);
    expect(accepted.headers.location).toBe('/console/members');
    expect(client.sessionToken()).toBeDefined();
    expect(client.sessionToken()).not.toBe(halfOpen);
    expect(await f.t.services.members.authenticate(halfOpen)).toBeNull();
    expect((await client.get('/console/members')).status).toBe(200);

    // The same code again (a replay, within its 30 seconds) is refused; the next period's is taken.
    const replay = await awaitingCode(member);
    expect((await replay.post('/console/sign-in/two-factor', { code })).status).toBe(401);
    clock.advance(30_000);
    const next = await replay.post('/console/sign-in/two-factor', { code: codeAt(member.totp) });
    expect(next.status).toBe(303);
    expect((await replay.get('/console')).status).toBe(200);
  });

  it('ends after five wrong codes, counting a failed sign-in of the member', async () => {
    const member = await memberWithTotp();
    const client = await awaitingCode(member);
    const halfOpen = client.sessionToken();
    for (let i = 0; i < 4; i++) {
      const wrong = await client.post('/console/sign-in/two-factor', { code: wrongCode(member.totp) });
      expect(wrong.status).toBe(401);
      expect(wrong.body).toContain('That code is not valid.');
    }
    const fifth = await client.post('/console/sign-in/two-factor', { code: wrongCode(member.totp) });
    expect(fifth.status).toBe(303);
    expect(fifth.headers.location).toBe('/console/sign-in');
    expect(await f.t.services.members.authenticate(halfOpen)).toBeNull();
    expect((await client.get('/console/sign-in')).body).toContain('Too many wrong codes');
    expect((await memberRow(member.id)).failed_sign_ins).toBe(1);

    // The right password alone does not reset the count for a member with TOTP on: the code does.
    const again = await awaitingCode(member);
    expect((await memberRow(member.id)).failed_sign_ins).toBe(1);
    clock.advance(30_000);
    expect((await again.post('/console/sign-in/two-factor', { code: codeAt(member.totp) })).status).toBe(303);
    expect((await memberRow(member.id)).failed_sign_ins).toBe(0);
  });

  it('locks the member when rounds of wrong codes add up to five failed sign-ins', async () => {
    const member = await memberWithTotp();
    await f.t.services.database.db
      .updateTable('members')
      .set({ failed_sign_ins: 4 })
      .where('id', '=', member.id)
      .execute();
    const client = await awaitingCode(member);
    for (let i = 0; i < 5; i++)
      await client.post('/console/sign-in/two-factor', { code: wrongCode(member.totp) });
    const locked = await consoleClient(f.t).signIn(member.email, member.password);
    expect(locked.status).toBe(401);
    expect(locked.body).toContain('locked for 15 minutes');
  });

  it("answers 429 once the member's bucket has taken ten wrong codes", async () => {
    const member = await memberWithTotp();
    const statuses: number[] = [];
    for (let round = 0; round < 3; round++) {
      const client = await awaitingCode(member);
      for (let i = 0; i < 5 && statuses.at(-1) !== 429; i++) {
        statuses.push(
          (await client.post('/console/sign-in/two-factor', { code: wrongCode(member.totp) })).status,
        );
      }
    }
    expect(statuses.slice(0, 10)).toEqual([401, 401, 401, 401, 303, 401, 401, 401, 401, 303]);
    expect(statuses[10]).toBe(429);
  });
});

describe('turning TOTP on when it is on already', () => {
  it('needs a current code of the secret in use, or the secret stays', async () => {
    const member = await memberWithTotp();
    const client = await awaitingCode(member);
    clock.advance(30_000);
    expect((await client.post('/console/sign-in/two-factor', { code: codeAt(member.totp) })).status).toBe(
      303,
    );
    expect((await client.get('/console/account')).status).toBe(200);
    const secretOf = async () =>
      (
        await f.t.services.database.db
          .selectFrom('members')
          .select('totp_secret')
          .where('id', '=', member.id)
          .executeTakeFirstOrThrow()
      ).totp_secret;
    const before = await secretOf();
    // The page offers no set-up while TOTP is on: this is a forged form with a secret of its own.
    const setup = f.t.services.members.totpSetup({
      sessionId: 'mses_other',
      memberId: member.id,
      tenantId: f.tenant.id,
      email: member.email,
      totpSecret: null,
    });
    const other = new TOTP({ secret: setup.secret, digits: 6, period: 30 });
    const forged = await client.post('/console/account/two-factor/enable', {
      setup: setup.sealed,
      code: codeAt(other),
    });
    expect(forged.status).toBe(422);
    expect(await secretOf()).toBe(before);
    const wrongProof = await client.post('/console/account/two-factor/enable', {
      setup: setup.sealed,
      code: codeAt(other),
      current_code: wrongCode(member.totp),
    });
    expect(wrongProof.status).toBe(422);
    expect(await secretOf()).toBe(before);

    const proven = await client.post('/console/account/two-factor/enable', {
      setup: setup.sealed,
      code: codeAt(other),
      current_code: codeAt(member.totp),
    });
    expect(proven.status).toBe(303);
    expect(await secretOf()).not.toBe(before);
  });
});

describe('the lock after five failed sign-ins', () => {
  it('starts the count again once it has run out', async () => {
    const member = await f.addMember('viewer');
    const client = consoleClient(f.t);
    for (let i = 0; i < 5; i++) await client.signIn(member.email, 'wrong password');
    expect((await client.signIn(member.email, member.password)).body).toContain('locked for 15 minutes');
    clock.advance(15 * 60_000 + 1000);
    const once = await client.signIn(member.email, 'wrong password');
    expect(once.status).toBe(401);
    expect(once.body).toContain('The email or password is incorrect.');
    expect((await memberRow(member.id)).failed_sign_ins).toBe(1);
    expect((await client.signIn(member.email, member.password)).status).toBe(303);
  });
});
