/**
 * The default buckets come from the environment (RATE_LIMIT_PARTNER_* / RATE_LIMIT_WEBHOOK_*):
 * the real rate-limit feature, as installed, applies the configured numbers, and tenants without
 * numbers of their own show the configured partner default.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config/config.js';
import { createTenant, startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({
    env: {
      RATE_LIMIT_PARTNER_PER_SECOND: '2',
      RATE_LIMIT_PARTNER_BURST: '5',
      RATE_LIMIT_WEBHOOK_PER_SECOND: '1',
      RATE_LIMIT_WEBHOOK_BURST: '3',
    },
    extraRoutes: {
      root: [
        async (app) => {
          app.post(
            '/rl-webhook/:agentWebhookId',
            { config: { rateLimit: 'webhook' } },
            async (_request, reply) => reply.code(202).send({ queued: true }),
          );
        },
      ],
    },
  });
});
afterAll(() => t.close());

describe('configured default limits', () => {
  it('defaults to docs/design-choices.md and rejects nonsense naming the variable', () => {
    expect(loadConfig({}).rateLimits).toEqual({
      partner: { perSecond: 100, burst: 200 },
      webhook: { perSecond: 10, burst: 20 },
    });
    expect(() => loadConfig({ RATE_LIMIT_WEBHOOK_BURST: '0' })).toThrow(/RATE_LIMIT_WEBHOOK_BURST/);
    expect(() => loadConfig({ RATE_LIMIT_PARTNER_PER_SECOND: 'fast' })).toThrow(
      /RATE_LIMIT_PARTNER_PER_SECOND/,
    );
  });

  it('the partner bucket per key uses the configured burst', async () => {
    const tenant = await createTenant(t, { scopes: ['plans:read'] });
    const first = await tenant.request('GET', '/api/v1/plans');
    expect(first.status).toBe(200);
    expect(first.headers['ratelimit-limit']).toBe('5');
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await tenant.request('GET', '/api/v1/plans')).status);
    expect(statuses).toContain(429);
  });

  it('the webhook bucket per id uses the configured burst', async () => {
    const response = await t.inject({ method: 'POST', url: '/rl-webhook/webh_configured', payload: {} });
    expect(response.status).toBe(202);
    expect(response.headers['ratelimit-limit']).toBe('3');
  });

  it('a tenant without its own numbers shows the configured partner default', async () => {
    const tenant = await t.admin('POST', '/admin/v1/tenants', { name: 'Defaults' });
    expect(tenant.body.data.rate_limit).toEqual({ requests_per_second: 2, burst: 5 });
  });
});
