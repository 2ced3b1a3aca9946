/**
 * A request killed mid-way (SIGKILL) must not keep its Idempotency-Key reserved: a retry on
 * another process takes the key over within its wait, resumes where the dead one stopped, and
 * the change still happens once. Two real server processes on one PostgreSQL database, the
 * processor a Stripe-protocol server that holds the dead request's call unanswered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyPostgresDatabase, postgresAvailable, warnWithoutPostgres } from '../operations/postgres.js';
import { planInput } from '../support/app.js';
import { type ServerProcess, startServerProcess } from '../support/server-process.js';
import { type StripeTestServer, startStripeServer } from '../support/stripe-server.js';

warnWithoutPostgres('test/core/idempotency-takeover.test.ts');

const ADMIN_TOKEN = 'takeover-admin-token-0123456789';
const SUBSCRIPTIONS = /^\/v1\/subscriptions$/;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!postgresAvailable)('a crashed request’s Idempotency-Key', { timeout: 120_000 }, () => {
  let drop: () => Promise<void>;
  let stripe: StripeTestServer;
  let doomed: ServerProcess;
  let survivor: ServerProcess;

  beforeAll(async () => {
    const fresh = await emptyPostgresDatabase();
    drop = fresh.drop;
    stripe = await startStripeServer({ now: () => new Date() });
    const env = {
      DATABASE_URL: fresh.url,
      ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
      PROCESSOR: 'stripe',
      STRIPE_SECRET_KEY: stripe.secretKey,
      STRIPE_API_BASE: stripe.url,
      // No reconciliation jobs: the retry alone must finish the dead request's change.
      WORKERS: '0',
    };
    [doomed, survivor] = await Promise.all([startServerProcess({ env }), startServerProcess({ env })]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([doomed?.kill('SIGKILL'), survivor?.stop()]);
    await stripe?.close();
    await drop?.();
  });

  async function ok(method: string, url: string, body: unknown, token = ADMIN_TOKEN) {
    const response = await survivor.request(method, url, { token, body });
    if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${response.raw}`);
    return response.body.data;
  }

  it('is taken over by a retry on another process, and the subscription is created once', async () => {
    const tenant = await ok('POST', '/admin/v1/tenants', { name: 'Takeover Agency' });
    const { key } = await ok('POST', `/admin/v1/tenants/${tenant.id}/api-keys`, {
      scopes: ['users:write', 'subscriptions:read', 'subscriptions:write'],
    });
    const plan = await ok(
      'POST',
      `/admin/v1/tenants/${tenant.id}/plans`,
      planInput({ name: 'Card', provider: 'processor' }),
    );
    const user = await ok(
      'POST',
      '/api/v1/users',
      { email: 'crash@example.com', name: 'Crash', password: 'correct horse' },
      key,
    );
    await ok('PUT', `/admin/v1/users/${user.id}/payment-method`, { token: 'pm_card_visa' });

    // The first attempt reaches the processor, which never answers it; then its process dies.
    stripe.fault({ method: 'POST', path: SUBSCRIPTIONS, mode: 'hang-before', holdMs: 90_000 });
    const subscribe = (server: ServerProcess) =>
      server.request('POST', '/api/v1/subscriptions', {
        token: key,
        body: { user_id: user.id, plan_id: plan.id },
        headers: { 'idempotency-key': 'subscribe-crash-1' },
      });
    const lost = subscribe(doomed).catch(() => 'connection lost');
    while (!stripe.requests.some((r) => r.method === 'POST' && SUBSCRIPTIONS.test(r.path))) await sleep(20);
    await doomed.kill('SIGKILL');
    expect(await lost).toBe('connection lost');

    // The retry waits at most 10 s for the key; the dead owner's lease runs out well before.
    const retry = await subscribe(survivor);
    expect(retry.status, retry.raw).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(stripe.executed('POST', SUBSCRIPTIONS)).toBe(1);

    const again = await subscribe(survivor);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.id).toBe(retry.body.data.id);
    const list = await survivor.request('GET', `/api/v1/subscriptions?user_id=${user.id}`, { token: key });
    expect(list.body.data.map((s: { id: string }) => s.id)).toEqual([retry.body.data.id]);
    expect(stripe.executed('POST', SUBSCRIPTIONS)).toBe(1);
  });
});
