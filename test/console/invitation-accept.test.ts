/**
 * Accepting an invitation is a public POST: a link that cannot be accepted (guessed, used,
 * revoked) is refused before any password is hashed, and the address's sign-in bucket counts
 * every attempt that does not succeed (429 once it is empty).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { passwordHashesStarted as hashes } from '../../src/core/security/passwords.js';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { consoleClient } from './http.js';

let f: ConsoleFixture;

beforeAll(async () => {
  f = await startConsole();
});
afterAll(async () => {
  await f?.close();
});

describe('accepting an invitation', () => {
  it('hashes no password for a link that cannot be accepted', async () => {
    const owner = consoleClient(f.t);
    expect((await owner.signIn(f.owner.email, f.owner.password)).status).toBe(303);
    const invited = await owner.post('/console/members/invitations', {
      email: 'joiner@northwind.example',
      role: 'viewer',
    });
    const link = /\/console\/invitations\/vpi_[A-Za-z0-9]+/.exec(invited.body)![0];

    const before = hashes();
    const guess = consoleClient(f.t);
    const bogus = await guess.post(`/console/invitations/vpi_${'x'.repeat(40)}`, {
      name: 'Guesser',
      password: 'a good password',
    });
    expect(bogus.status).toBe(404);
    expect(bogus.body).toContain('not valid any more');
    expect(hashes()).toBe(before);

    const invitee = consoleClient(f.t);
    expect((await invitee.get(link)).status).toBe(200);
    expect((await invitee.post(link, { name: 'Joiner', password: 'a good password' })).status).toBe(303);
    expect(hashes()).toBe(before + 1);
    const reused = await consoleClient(f.t).post(link, { name: 'Again', password: 'a good password' });
    expect(reused.status).toBe(404);
    expect(hashes()).toBe(before + 1);
  });

  it("answers 429 once the address's sign-in bucket is empty", async () => {
    const guess = consoleClient(f.t);
    const burst = f.t.services.rateLimits.policies.signInIp.burst;
    const statuses: number[] = [];
    for (let i = 0; i <= burst; i++) {
      const answer = await guess.post(`/console/invitations/vpi_guess${i}`, {
        name: 'Guesser',
        password: 'a good password',
      });
      statuses.push(answer.status);
      if (answer.status === 429) break;
    }
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.slice(0, -1).every((status) => status === 404)).toBe(true);
    expect(statuses.length).toBeLessThanOrEqual(burst + 1);
  });
});
