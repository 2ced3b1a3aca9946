/**
 * Calls placed together share one guarded statement (src/calls/placement.ts): a call the database
 * refuses for its data must fail alone, and its neighbours in the batch must still be stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findWebhookTarget } from '../../src/agents/repository.js';
import type { TriggerInput } from '../../src/calls/input.js';
import { createCallPlacement } from '../../src/calls/placement.js';
import { cacheable } from '../../src/calls/webhook-targets.js';
import { systemClock } from '../../src/core/clock.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { agentFixture, getCall } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const callee = (name: string, phone: string): TriggerInput => ({
  phone,
  name,
  email: null,
  context: { product: 'solar' },
  templateValues: { name, phone, product: 'solar' },
});

describe('a shared statement', () => {
  it('stores the good calls of a batch when the database refuses one for its data, and fails only that one', async () => {
    const { agent } = await agentFixture(t);
    const db = t.services.database.db;
    const found = await findWebhookTarget(db, agent.webhook_id);
    if (!found) throw new Error('the fixture agent has no webhook target');
    const target = cacheable(found);
    const placement = createCallPlacement({
      db,
      clock: systemClock,
      idempotency: t.services.idempotency,
      engine: 'simulated',
    });
    // Input checks refuse a NUL character long before this point; here it stands for any value
    // PostgreSQL refuses (SQLSTATE class 22) that slipped past them.
    const inputs = [
      callee('Ada Lovelace', '+14155550211'),
      callee('Bad\u0000Name', '+14155550212'),
      callee('Grace Hopper', '+14155550213'),
    ];
    const outcomes = await Promise.allSettled(
      inputs.map((input) => placement.insert(db, agent.webhook_id, target, input)),
    );

    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const refused = outcomes[1] as PromiseRejectedResult;
    expect(String(refused.reason.code)).toMatch(/^22/);
    for (const index of [0, 2]) {
      const queued = (outcomes[index] as PromiseFulfilledResult<{ id: string } | undefined>).value;
      expect(queued).toBeDefined();
      const call = await getCall(t, queued?.id as string);
      expect(call).toMatchObject({ name: inputs[index].name, to: inputs[index].phone, status: 'queued' });
    }
    const stored = await db.selectFrom('calls').select('name').where('agent_id', '=', agent.id).execute();
    expect(stored.map((row) => row.name).sort()).toEqual(['Ada Lovelace', 'Grace Hopper']);
  });
});
