/**
 * An invitation link is a credential (whoever holds it joins the agency): the request logs keep
 * the route and its prefix only, never the token, whether the link is valid or not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { consoleClient } from './http.js';

let f: ConsoleFixture;

beforeAll(async () => {
  f = await startConsole();
});
afterAll(async () => {
  await f?.close();
});

describe('request logs of invitation links', () => {
  it('never contain the token', async () => {
    const owner = consoleClient(f.t);
    expect((await owner.signIn(f.owner.email, f.owner.password)).status).toBe(303);
    const invited = await owner.post('/console/members/invitations', {
      email: 'logged@northwind.example',
      role: 'viewer',
    });
    const link = /\/console\/invitations\/(vpi_[A-Za-z0-9]+)/.exec(invited.body);
    expect(link).not.toBeNull();
    const token = link![1];
    const invitee = consoleClient(f.t);
    expect((await invitee.get(`/console/invitations/${token}`)).status).toBe(200);
    expect(
      (await invitee.post(`/console/invitations/${token}`, { name: 'Logged', password: 'x' })).status,
    ).toBe(422);
    expect((await invitee.get('/console/invitations/not-a-vpi-token-but-secret')).status).toBe(404);
    const logs = f.t.logs.join('\n');
    expect(logs).toContain('/console/invitations/vpi_…');
    expect(logs).not.toContain(token);
    expect(logs).not.toContain(token.slice(4, 20));
    expect(logs).not.toContain('not-a-vpi-token-but-secret');
  });
});
