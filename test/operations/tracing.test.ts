/**
 * OpenTelemetry traces as an OTLP/HTTP collector receives them from a running server
 * (OTEL_EXPORTER_OTLP_ENDPOINT set): a request continues the caller's trace (`traceparent`), its
 * span is named by the route's pattern with the status, its database queries are its children, a
 * background job run is a trace of its own with its queries under it, and nothing identifies a
 * trigger URL's credential.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratedDataDir } from '../support/databases.js';
import { type ServerProcess, startServerProcess } from '../support/server-process.js';

const ADMIN_TOKEN = 'tracing-admin-token-0123456789';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  service: unknown;
}

const spans: ReceivedSpan[] = [];
let collector: http.Server;
let server: ServerProcess;
let dataDir: string | undefined;

const attributeValue = (value: Record<string, unknown>) =>
  value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : value.boolValue);
const attributesOf = (list: { key: string; value: Record<string, unknown> }[] = []) =>
  Object.fromEntries(list.map((entry) => [entry.key, attributeValue(entry.value)]));

async function waitForSpan(predicate: (span: ReceivedSpan) => boolean): Promise<ReceivedSpan> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const found = spans.find(predicate);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no such span among ${spans.map((span) => span.name).join(', ')}`);
}

beforeAll(async () => {
  collector = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces' && request.headers['content-type']?.includes('json')) {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        for (const resourceSpans of body.resourceSpans ?? []) {
          const service = attributesOf(resourceSpans.resource?.attributes)['service.name'];
          for (const scope of resourceSpans.scopeSpans ?? [])
            for (const span of scope.spans ?? [])
              spans.push({ ...span, attributes: attributesOf(span.attributes), service });
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  dataDir = await migratedDataDir('tracing-');
  server = await startServerProcess({
    env: {
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_SERVICE_NAME: 'voiceplane-under-test',
    },
  });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  await new Promise<void>((resolve) => collector.close(() => resolve()));
});

describe('OpenTelemetry traces', { timeout: 60_000 }, () => {
  it("continues the caller's trace with a server span named by the route, its queries beneath it", async () => {
    const tenant = await server.request('POST', '/admin/v1/tenants', {
      token: ADMIN_TOKEN,
      body: { name: 'Traced' },
    });
    expect(tenant.status, tenant.raw).toBe(201);
    const answer = await server.request('GET', `/admin/v1/tenants/${tenant.body.data.id}`, {
      token: ADMIN_TOKEN,
      headers: { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
    });
    expect(answer.status).toBe(200);

    const request = await waitForSpan((span) => span.traceId === TRACE_ID && span.kind === 2);
    expect(request).toMatchObject({
      name: 'GET /admin/v1/tenants/:id',
      parentSpanId: CALLER_SPAN,
      service: 'voiceplane-under-test',
    });
    expect(request.attributes).toMatchObject({
      'http.route': '/admin/v1/tenants/:id',
      'http.request.method': 'GET',
      'http.response.status_code': 200,
      'http.request_id': answer.headers.get('x-request-id'),
    });
    const query = await waitForSpan((span) => span.parentSpanId === request.spanId);
    expect(query.traceId).toBe(TRACE_ID);
    expect(query.kind).toBe(3);
    expect(query.attributes['db.system.name']).toBe('postgresql');
    expect(String(query.attributes['db.query.text'])).toMatch(/tenants/);
    // Placeholders, never the values.
    expect(String(query.attributes['db.query.text'])).not.toContain(tenant.body.data.id);
  });

  it('traces each background job run as a trace of its own, its queries beneath it', async () => {
    // The maintenance jobs run as the server starts.
    const job = await waitForSpan((span) => span.name === 'job maintenance.vacuum');
    expect(job.parentSpanId || undefined).toBeUndefined();
    expect(job.kind).toBe(5);
    expect(job.attributes['messaging.destination.name']).toBe('maintenance.vacuum');
    await waitForSpan((span) => span.parentSpanId === job.spanId && span.traceId === job.traceId);
  });

  it('traces no query outside a request or a job: an idle process sends no trace of its own', async () => {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const roots = spans.filter((span) => span.kind === 3 && !span.parentSpanId);
    expect(roots.map((span) => span.name)).toEqual([]);
  });

  it('records the route pattern of a trigger, never the URL that is its credential', async () => {
    const webhookId = 'whk_thisisthecredential0000';
    await server.request('POST', `/webhooks/agents/${webhookId}/trigger`, {
      body: { phone: '+14155550100' },
    });
    const trigger = await waitForSpan(
      (span) => span.name === 'POST /webhooks/agents/:agentWebhookId/trigger',
    );
    expect(trigger.attributes['http.response.status_code']).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(spans)).not.toContain(webhookId);
  });
});
