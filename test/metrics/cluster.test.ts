/**
 * Under src/cluster.ts (WEB_CONCURRENCY=2, PostgreSQL) a scrape reaches one of the processes, and
 * still counts every process's requests: the primary sums them. Without that, a counter would jump
 * between two processes' values from one scrape to the next.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyPostgresDatabase, postgresAvailable, warnWithoutPostgres } from '../operations/postgres.js';
import { type ServerProcess, startServerProcess } from '../support/server-process.js';
import { parseMetrics, sampleValue } from './prometheus.js';

warnWithoutPostgres('test/metrics/cluster.test.ts');

const ADMIN_TOKEN = 'metrics-cluster-admin-token-0123';
const REQUESTS = 40;

/** A GET on a connection of its own: the cluster hands new connections to its processes in turn. */
function getOnNewConnection(url: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = token ? { authorization: `Bearer ${token}` } : {};
    http
      .get(url, { agent: false, headers }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => {
          body += chunk;
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

describe.skipIf(!postgresAvailable)('metrics across processes', { timeout: 120_000 }, () => {
  let drop: () => Promise<void>;
  let server: ServerProcess;

  beforeAll(async () => {
    const fresh = await emptyPostgresDatabase();
    drop = fresh.drop;
    server = await startServerProcess({
      entry: 'src/cluster.ts',
      env: { DATABASE_URL: fresh.url, ADMIN_TOKEN, WEB_CONCURRENCY: '2', LOG_LEVEL: 'warn' },
    });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await drop?.();
  });

  it('every scrape counts the requests both processes answered', async () => {
    const tenant = await server.request('POST', '/admin/v1/tenants', {
      token: ADMIN_TOKEN,
      body: { name: 'Two Processes' },
    });
    expect(tenant.status, tenant.raw).toBe(201);
    const key = await server.request('POST', `/admin/v1/tenants/${tenant.body.data.id}/api-keys`, {
      token: ADMIN_TOKEN,
      body: { scopes: ['plans:read'] },
    });
    expect(key.status, key.raw).toBe(201);
    // Readiness is one process's; wait until both answer requests (both count /readyz).
    const servingWorkers = async () => {
      const samples = parseMetrics((await getOnNewConnection(`${server.url}/metrics`)).body);
      return new Set(
        samples
          .filter(
            (s) =>
              s.name === 'voiceplane_http_request_duration_seconds_count' && s.labels.route === '/readyz',
          )
          .map((s) => s.labels.worker),
      ).size;
    };
    await expect
      .poll(
        async () => {
          for (let i = 0; i < 4; i++) await getOnNewConnection(`${server.url}/readyz`);
          return servingWorkers();
        },
        { timeout: 30_000, interval: 200 },
      )
      .toBe(2);
    for (let i = 0; i < REQUESTS; i++) {
      expect((await getOnNewConnection(`${server.url}/api/v1/plans`, key.body.data.key)).status).toBe(200);
    }
    // Scrapes go to both processes in turn; each one counts all the requests.
    for (let scrape = 0; scrape < 6; scrape++) {
      const answer = await getOnNewConnection(`${server.url}/metrics`);
      expect(answer.status).toBe(200);
      const samples = parseMetrics(answer.body);
      const counts = samples.filter(
        (sample) =>
          sample.name === 'voiceplane_http_request_duration_seconds_count' &&
          sample.labels.route === '/api/v1/plans' &&
          sample.labels.status_code === '200',
      );
      // One series per process, labelled with its worker id; together, every request.
      expect(new Set(counts.map((sample) => sample.labels.worker)).size).toBe(2);
      expect(counts.reduce((sum, sample) => sum + sample.value, 0)).toBe(REQUESTS);
      expect(sampleValue(samples, 'voiceplane_database_up')).toBe(1);
    }
  });
});
