/**
 * The SDK's methods for the business the console also runs: editing a user (`users.update`,
 * PATCH /users/{id}), canceling a subscription (`subscriptions.cancel`), and an endpoint's test
 * event, a delivery's request and response, and a resend (`webhookEndpoints.sendTestEvent`,
 * `delivery`, `resendDelivery`), against the real server on a port.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Voiceplane, VoiceplaneError, verifyEvent } from '../../packages/sdk/src/index.js';
import { type Receiver, startReceiver } from '../events/helpers.js';
import { createPlan, createTenant, startTestApp, type TestApp, type TestTenant } from '../support/app.js';

let t: TestApp;
let tenant: TestTenant;
let vp: Voiceplane;
let receiver: Receiver;

beforeAll(async () => {
  t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  tenant = await createTenant(t);
  const baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  vp = new Voiceplane({ apiKey: tenant.key, baseUrl });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

const email = (name: string) => `${name}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;

describe('users and subscriptions', () => {
  it('updates a user’s fields, and raises the field refused', async () => {
    const user = await vp.users.create({ email: email('ada'), name: 'Ada', password: 'correct horse' });
    const updated = await vp.users.update(user.id, { name: 'Ada King', phone: '+14155550123' });
    expect(updated).toMatchObject({
      id: user.id,
      name: 'Ada King',
      phone: '+14155550123',
      email: user.email,
    });
    expect((await vp.users.retrieve(user.id)).name).toBe('Ada King');
    const refused = await vp.users.update(user.id, { phone: '0123' }).catch((error) => error);
    expect(refused).toBeInstanceOf(VoiceplaneError);
    expect(refused).toMatchObject({ status: 422, code: 'validation_failed' });
    expect(JSON.stringify(refused.details)).toContain('phone');
  });

  it('cancels a subscription at the period end; a repeat answers the same subscription', async () => {
    const plan = await createPlan(t, tenant.id, { name: `Cancel ${Date.now()}` });
    const user = await vp.users.create({
      email: email('cancel'),
      name: 'Leaving',
      password: 'correct horse',
    });
    const subscription = await vp.subscriptions.create({ user_id: user.id, plan_id: plan.id });
    const canceled = await vp.subscriptions.cancel(subscription.id);
    expect(canceled).toMatchObject({ id: subscription.id, status: 'active', cancel_at_period_end: true });
    expect(await vp.subscriptions.cancel(subscription.id)).toEqual(canceled);
    const missing = await vp.subscriptions.cancel('sub_doesnotexist0000000000').catch((error) => error);
    expect(missing).toMatchObject({ status: 404, code: 'not_found' });
  });
});

describe('webhook deliveries', () => {
  it('sends a test event, reads its request and response, and resends it', async () => {
    const endpoint = await vp.webhookEndpoints.create({ url: receiver.url, events: ['user.created'] });
    receiver.secret = endpoint.secret;
    const test = await vp.webhookEndpoints.sendTestEvent(endpoint.id);
    expect(test).toMatchObject({ event_type: 'webhook.test', status: 'pending', resent_from: null });
    await t.services.jobRunner.drain();
    const [delivered] = await receiver.waitFor(1);
    const event = verifyEvent({
      payload: delivered.body,
      headers: delivered.headers,
      secret: endpoint.secret,
    });
    expect(event).toMatchObject({ id: test.event_id, type: 'webhook.test' });

    const detail = await vp.webhookEndpoints.delivery(endpoint.id, test.id);
    expect(detail).toMatchObject({ id: test.id, status: 'succeeded', attempts: 1, error: null });
    expect(detail.request?.headers['webhook-id']).toBe(test.event_id);
    expect(detail.request?.body).toBe(delivered.body);
    expect(detail.response?.status).toBe(200);
    expect(detail.response?.body).toHaveLength(4096);

    const resent = await vp.webhookEndpoints.resendDelivery(endpoint.id, test.id);
    expect(resent).toMatchObject({ event_id: test.event_id, resent_from: test.id, status: 'pending' });
    expect(resent.id).not.toBe(test.id);
    await t.services.jobRunner.drain();
    const both = await receiver.waitFor(2);
    expect(both.map((r) => r.headers['webhook-id'])).toEqual([test.event_id, test.event_id]);
  });
});
