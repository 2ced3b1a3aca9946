/**
 * `voiceplane seed demo`: the server's first-start demo, on demand and on either engine. What it
 * prints works (the key on the partner API, the owner in the console), and it seeds only an empty
 * database: a second run is refused and changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleClient } from '../console/http.js';
import type { TestApp } from '../support/app.js';
import {
  type CliDatabase,
  cliDatabase,
  jsonOf,
  partnerRequest,
  tenantCount,
  voiceplane,
} from './cli-process.js';

let db: CliDatabase;
beforeAll(async () => {
  db = await cliDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe('seed demo', { timeout: 120_000 }, () => {
  it('creates the demo tenant; its key and owner work (--json)', async () => {
    const { data } = jsonOf(await voiceplane(['seed', 'demo', '--json'], { env: db.env }));
    expect(data).toMatchObject({
      tenant_id: expect.stringMatching(/^ten_/),
      api_key: expect.stringMatching(/^vp_test_/),
      user: { id: expect.stringMatching(/^usr_/), email: 'demo.user@example.com', password: 'demo-password' },
      agent: {
        id: expect.stringMatching(/^agt_/),
        webhook_url: expect.stringMatching(/\/webhooks\/agents\/webh_\w+\/trigger$/),
      },
      phone_number: '+14155550199',
      owner: {
        email: 'owner@demo-agency.example',
        password: expect.any(String),
        sign_in_url: 'http://127.0.0.1:3000/console/sign-in',
      },
    });
    await db.withApp(async ({ app }) => {
      const plans = await partnerRequest(app, data.api_key, '/api/v1/plans');
      expect(plans.status).toBe(200);
      expect(plans.body.data).toHaveLength(4);
      const client = consoleClient({ app } as TestApp);
      expect((await client.signIn(data.owner.email, data.owner.password)).status).toBe(303);
      expect((await client.get('/console')).body).toContain('Demo Agency');
      // The demo number answers: its inbound agent is the demo agent, which takes the call.
      const number = await partnerRequest(app, data.api_key, '/api/v1/phone-numbers/%2B14155550199');
      expect(number.body.data).toMatchObject({ inbound_agent_id: data.agent.id, label: 'Demo front desk' });
      expect((await client.get('/console/phone-numbers')).body).toContain('Demo front desk');
    });
  });

  it('refuses a database that already holds tenants, and changes nothing (exit 1)', async () => {
    const again = await voiceplane(['seed', 'demo'], { env: db.env });
    expect(again).toEqual({
      code: 1,
      stdout: '',
      stderr: 'The database already holds tenants: the demo is seeded only into an empty database.\n',
    });
    expect(await tenantCount(db)).toBe(1);
  });
});
