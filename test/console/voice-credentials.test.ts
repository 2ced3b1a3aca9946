/**
 * What the voice pages show of credentials and links: an agent's webhook URL (it places calls) is
 * whole with Copy and Rotate for admins and owners, masked to its last four characters for
 * viewers; a call's recording is a player and a link only for an http(s) URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordingPlayer } from '../../src/web/call-outcome.js';
import { createUser } from '../support/app.js';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { type ConsoleClient, consoleClient } from './http.js';

let f: ConsoleFixture;
let agent: any;

async function signedIn(role: 'admin' | 'viewer'): Promise<ConsoleClient> {
  const member = await f.addMember(role);
  const client = consoleClient(f.t);
  expect((await client.signIn(member.email, member.password)).status).toBe(303);
  return client;
}

beforeAll(async () => {
  f = await startConsole();
  const user = await createUser(f.tenant);
  const created = await f.tenant.request('POST', '/api/v1/agents', {
    user_id: user.id,
    name: 'Credential agent',
    phone_number: '+14155550100',
    prompt: 'Call {name}.',
    welcome_message: 'Hello {name}.',
  });
  expect(created.status).toBe(201);
  agent = created.body.data;
});
afterAll(async () => {
  await f?.close();
});

describe('the agent webhook URL', () => {
  it('is masked for a viewer, with neither Copy nor Rotate', async () => {
    const viewer = await signedIn('viewer');
    const page = await viewer.get(`/console/agents/${agent.id}`);
    expect(page.status).toBe(200);
    expect(page.body).not.toContain(agent.webhook_url);
    const id = /webh_[0-9A-Za-z]+/.exec(agent.webhook_url)?.[0] as string;
    expect(id).toBeDefined();
    expect(page.body).not.toContain(id);
    expect(page.body).toContain(`webh_…${id.slice(-4)}`);
    expect(page.body).not.toContain('data-copy="webhook-url"');
    expect(page.body).not.toContain('Rotate URL');
  });

  it('is whole, with Copy and Rotate, for an admin', async () => {
    const admin = await signedIn('admin');
    const page = await admin.get(`/console/agents/${agent.id}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain(agent.webhook_url);
    expect(page.body).toContain('data-copy="webhook-url"');
    expect(page.body).toContain('Rotate URL');
  });
});

describe('a call recording', () => {
  it.each(['https://recordings.example/a.mp3', 'http://recordings.example/a.mp3'])(
    '%s is a player and a link',
    (url) => {
      const markup = String(recordingPlayer(url));
      expect(markup).toContain(`<a class="subtle" href="${url}"`);
      expect(markup).toContain(`<audio controls preload="none" src="${url}"`);
    },
  );

  it.each([
    'javascript:alert(1)',
    'JavaScript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:x',
    'not a url',
  ])('%s is plain text, never an href nor a source', (url) => {
    const markup = String(recordingPlayer(url));
    expect(markup).not.toContain('href=');
    expect(markup).not.toContain('src=');
    expect(markup).toContain('Recording');
  });
});
