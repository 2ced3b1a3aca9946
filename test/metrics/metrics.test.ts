/**
 * GET /metrics as an operator's Prometheus sees it: request latency by route pattern and status
 * (never the values in a path), job queue depth and the oldest due job's age, calls by status,
 * event deliveries by outcome, rate-limit refusals; METRICS_TOKEN guarding the scrape; a database
 * that does not answer costing only its own gauges.
 */
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { loadConfig } from '../../src/core/config/config.js';
import { openDatabase } from '../../src/core/db/database.js';
import { migrate } from '../../src/core/db/migrate.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { createMetricsService } from '../../src/metrics/service.js';
import { agentFixture, trigger } from '../calls/helpers.js';
import { type Receiver, startReceiver } from '../events/helpers.js';
import { emptyPostgresDatabase, postgresAvailable } from '../operations/postgres.js';
import { createTenant, startTestApp, type TestApp } from '../support/app.js';
import { freePort as closedPort } from '../support/server-process.js';
import { startTcpProxy } from '../support/tcp-proxy.js';
import { parseMetrics, type Sample, sampleValue } from './prometheus.js';

const DISPATCH = 'calls.dispatch';

describe('GET /metrics', () => {
  let t: TestApp;
  let receiver: Receiver | undefined;
  const clock = new ManualClock('2026-03-10T12:00:00.000Z');

  beforeAll(async () => {
    t = await startTestApp({
      clock,
      env: {
        SIMULATED_CALL_SECONDS: '0',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        // A bucket of 2 refilled once a second: four requests at once find two tokens, however slow the machine.
        RATE_LIMIT_WEBHOOK_PER_SECOND: '1',
        RATE_LIMIT_WEBHOOK_BURST: '2',
      },
    });
  });
  afterAll(async () => {
    await receiver?.close();
    await t.close();
  });

  async function scrape(): Promise<Sample[]> {
    const response = await t.inject({ method: 'GET', url: '/metrics' });
    expect(response.status, response.raw).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseMetrics(response.raw);
  }

  const requests = (samples: Sample[], method: string, route: string, status: number) =>
    sampleValue(samples, 'voiceplane_http_request_duration_seconds_count', {
      method,
      route,
      status_code: String(status),
    }) ?? 0;

  it('times each answer by route pattern and status, never by the values in the path', async () => {
    const tenant = await createTenant(t);
    const before = await scrape();
    for (let i = 0; i < 3; i++) expect((await tenant.request('GET', '/api/v1/plans')).status).toBe(200);
    const missing = await tenant.request('GET', '/api/v1/users/usr_doesnotexist0000');
    expect(missing.status).toBe(404);
    expect((await t.inject({ method: 'GET', url: '/no/such/page' })).status).toBe(404);

    const response = await t.inject({ method: 'GET', url: '/metrics' });
    const after = parseMetrics(response.raw);
    expect(requests(after, 'GET', '/api/v1/plans', 200) - requests(before, 'GET', '/api/v1/plans', 200)).toBe(
      3,
    );
    expect(
      requests(after, 'GET', '/api/v1/users/:id', 404) - requests(before, 'GET', '/api/v1/users/:id', 404),
    ).toBe(1);
    expect(requests(after, 'GET', 'unmatched', 404) - requests(before, 'GET', 'unmatched', 404)).toBe(1);
    expect(response.raw).not.toContain('usr_doesnotexist0000');
    expect(response.raw).not.toContain('/no/such/page');
    // The histogram's buckets are cumulative and end with every answer.
    const labels = { method: 'GET', route: '/api/v1/plans', status_code: '200' };
    expect(
      sampleValue(after, 'voiceplane_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' }),
    ).toBe(requests(after, 'GET', '/api/v1/plans', 200));
    // Node's own metrics come with it.
    expect(sampleValue(after, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(sampleValue(after, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  });

  it('shows the dispatch backlog and its age, calls by status, and calls ended by outcome', async () => {
    const { agent } = await agentFixture(t, { credits: 10 });
    const idle = await scrape();
    expect(sampleValue(idle, 'voiceplane_database_up')).toBe(1);
    // Every queue this service runs is reported, empty or not.
    expect(sampleValue(idle, 'voiceplane_jobs', { queue: DISPATCH, state: 'due' })).toBe(0);
    expect(sampleValue(idle, 'voiceplane_job_oldest_due_age_seconds', { queue: DISPATCH })).toBe(0);
    const completedBefore = sampleValue(idle, 'voiceplane_calls_ended_total', { status: 'completed' }) ?? 0;

    for (const phone of ['+14155550101', '+14155550102']) {
      const response = await trigger(t, agent.webhook_id, { phone, name: 'Ada', product: 'solar panels' });
      expect(response.status, response.raw).toBe(202);
    }
    clock.advance(45_000);
    const waiting = await scrape();
    expect(sampleValue(waiting, 'voiceplane_jobs', { queue: DISPATCH, state: 'due' })).toBe(2);
    expect(sampleValue(waiting, 'voiceplane_job_oldest_due_age_seconds', { queue: DISPATCH })).toBe(45);
    expect(sampleValue(waiting, 'voiceplane_calls', { status: 'queued' })).toBe(2);

    await t.services.jobRunner.drain();
    const done = await scrape();
    expect(sampleValue(done, 'voiceplane_jobs', { queue: DISPATCH, state: 'due' })).toBe(0);
    expect(sampleValue(done, 'voiceplane_calls', { status: 'queued' })).toBe(0);
    expect(sampleValue(done, 'voiceplane_calls', { status: 'in_progress' })).toBe(0);
    expect(sampleValue(done, 'voiceplane_calls_ended_total', { status: 'completed' })).toBe(
      completedBefore + 2,
    );
  });

  it('counts event delivery attempts by outcome', async () => {
    const { tenant, agent } = await agentFixture(t, { credits: 10 });
    receiver = await startReceiver();
    const endpoint = await tenant.request('POST', '/api/v1/webhook-endpoints', {
      url: receiver.url,
      events: ['call.queued'],
    });
    expect(endpoint.status, endpoint.raw).toBe(201);
    receiver.secret = endpoint.body.data.secret;
    const outcome = (samples: Sample[], name: string) =>
      sampleValue(samples, 'voiceplane_event_delivery_attempts_total', { outcome: name }) ?? 0;
    const before = await scrape();

    expect(
      (await trigger(t, agent.webhook_id, { phone: '+14155550103', name: 'Ada', product: 'solar panels' }))
        .status,
    ).toBe(202);
    await t.services.jobRunner.drain();
    receiver.answer = () => 500;
    expect(
      (await trigger(t, agent.webhook_id, { phone: '+14155550104', name: 'Ada', product: 'solar panels' }))
        .status,
    ).toBe(202);
    await t.services.jobRunner.drain();

    const after = await scrape();
    expect(outcome(after, 'succeeded') - outcome(before, 'succeeded')).toBe(1);
    expect(outcome(after, 'retrying') - outcome(before, 'retrying')).toBe(1);
    expect(outcome(after, 'failed') - outcome(before, 'failed')).toBe(0);
  });

  it('counts rate-limit refusals by the limit that refused', async () => {
    const { agent } = await agentFixture(t, { credits: 10 });
    const refused = (samples: Sample[]) =>
      sampleValue(samples, 'voiceplane_rate_limit_refusals_total', { limit: 'webhook' }) ?? 0;
    const before = await scrape();
    const answers = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        trigger(t, agent.webhook_id, { phone: `+1415555020${i}`, name: 'Ada', product: 'solar panels' }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([202, 202, 429, 429]);
    const after = await scrape();
    expect(refused(after) - refused(before)).toBe(2);
    expect(sampleValue(after, 'voiceplane_rate_limit_refusals_total', { limit: 'api_key' })).toBe(0);
  });

  it('answers with the process metrics and voiceplane_database_up 0 when the database does not answer', async () => {
    // A server that refuses connections: the scrape's reads fail as they do when the database is down.
    const unreachable = new Kysely<any>({
      dialect: new PostgresDialect({
        pool: new pg.Pool({ host: '127.0.0.1', port: await closedPort(), max: 1 }),
      }),
    });
    try {
      const service = createMetricsService({
        db: unreachable,
        clock,
        metrics: t.services.metrics,
        queues: [DISPATCH],
      });
      const samples = parseMetrics((await service.scrape()).body);
      expect(sampleValue(samples, 'voiceplane_database_up')).toBe(0);
      expect(sampleValue(samples, 'voiceplane_jobs', { queue: DISPATCH, state: 'due' })).toBeUndefined();
      expect(sampleValue(samples, 'voiceplane_calls', { status: 'queued' })).toBeUndefined();
      expect(sampleValue(samples, 'process_cpu_seconds_total')).toBeGreaterThan(0);
      expect(sampleValue(samples, 'voiceplane_calls_ended_total', { status: 'completed' })).toBeDefined();
    } finally {
      await unreachable.destroy();
    }
  });
});

describe.skipIf(!postgresAvailable)('a database that stalls', () => {
  it('costs a scrape its database gauges only: it answers within the deadline with voiceplane_database_up 0', async () => {
    const fresh = await emptyPostgresDatabase();
    const migrated = await openDatabase({ databaseUrl: fresh.url, dataDir: '', poolSize: 1 });
    await migrate(migrated);
    await migrated.close();
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
    const throughProxy = new URL(fresh.url);
    throughProxy.port = String(proxy.port);
    const stalled = new Kysely<any>({
      dialect: new PostgresDialect({
        pool: new pg.Pool({ connectionString: throughProxy.toString(), max: 1 }),
      }),
    });
    try {
      const service = createMetricsService({
        db: stalled,
        clock: new ManualClock('2026-03-10T12:00:00.000Z'),
        metrics: createMetrics(),
        queues: [DISPATCH],
        databaseDeadlineMs: 500,
      });
      expect(sampleValue(parseMetrics((await service.scrape()).body), 'voiceplane_database_up')).toBe(1);
      proxy.pause();
      // Scrapes while the database stalls: each answers, with the process metrics and up 0.
      for (const scrape of await Promise.all([service.scrape(), service.scrape(), service.scrape()])) {
        const samples = parseMetrics(scrape.body);
        expect(sampleValue(samples, 'voiceplane_database_up')).toBe(0);
        expect(sampleValue(samples, 'process_cpu_seconds_total')).toBeGreaterThan(0);
      }
      proxy.resume();
      await expect
        .poll(async () => sampleValue(parseMetrics((await service.scrape()).body), 'voiceplane_database_up'))
        .toBe(1);
    } finally {
      proxy.resume();
      await stalled.destroy();
      await proxy.close();
      await fresh.drop();
    }
  });
});

describe('METRICS_TOKEN', () => {
  const TOKEN = 'metrics-token-0123456789abcdef';
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ env: { METRICS_TOKEN: TOKEN } });
  });
  afterAll(() => t.close());

  it('refuses a scrape without the token, or with another, in the envelope with a bearer challenge', async () => {
    for (const headers of [
      {},
      { authorization: 'Bearer not-the-metrics-token-000' },
      { authorization: `Bearer ${t.config.adminToken}` },
    ]) {
      const response = await t.inject({ method: 'GET', url: '/metrics', headers });
      expect(response.status).toBe(401);
      expect(response.body.error.code).toBe('authentication_failed');
      expect(response.body.request_id).toBe(response.headers['x-request-id']);
      expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="voiceplane"/);
      expect(response.raw).not.toContain('voiceplane_http_request_duration_seconds');
    }
  });

  it('answers the scrape that carries it', async () => {
    const response = await t.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(response.status).toBe(200);
    expect(sampleValue(parseMetrics(response.raw), 'voiceplane_database_up')).toBe(1);
  });

  it('is refused at start-up when shorter than 16 characters', () => {
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN/);
  });
});
