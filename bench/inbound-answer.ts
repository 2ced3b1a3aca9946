/**
 * inbound_answer: how fast the service answers Vapi's `assistant-request` (an inbound call ringing
 * one of the tenant's numbers) under load. Vapi waits 7.5 s at most; the answer is one indexed read
 * of the number with its agent, owner, wallet and cap, the published version (cached), and one
 * statement storing the call with its timeline entry and its backstop job.
 *
 * The route exists only with TELEPHONY=vapi, so a second service process runs with it, on the same
 * PostgreSQL database as the benchmark service (PostgreSQL only: the embedded store admits one
 * process), its Vapi API a stub in this process that holds one number. The number is imported for
 * the benchmark tenant and answered by the benchmark agent; each request is a new call
 * (`message.call.id`), so each answer stores a call. Job workers are off in that process: the
 * backstop jobs of the stored calls are not the subject.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { freePort } from '../test/support/server-process.js';
import { CALL_START_RATE } from './call-pipeline.js';
import { ADMIN_TOKEN, serviceEnv } from './environment.js';
import { DIST_SERVER, RESULTS_DIR } from './harness.js';
import { type RequestShape, runLoad } from './load.js';
import { startProcess } from './processes.js';
import { send } from './requests.js';
import type { CompoundResult, ScenarioRun } from './scenario-types.js';

/** The number rung: the benchmark agent's caller ID. */
export const INBOUND_NUMBER = '+14155550199';
const SERVER_SECRET = `bench-vapi-secret-${crypto.randomBytes(8).toString('hex')}`;

/** Vapi's API as far as the import asks it: the list of numbers, and the number's update. */
async function startVapiStub(numberId: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'GET' && req.url?.startsWith('/phone-number')) {
        res.end(JSON.stringify([{ id: numberId, number: INBOUND_NUMBER, provider: 'twilio' }]));
      } else if (req.method === 'PATCH' && req.url === `/phone-number/${numberId}`) {
        res.end(JSON.stringify({ id: numberId, number: INBOUND_NUMBER, provider: 'twilio' }));
      } else {
        res.statusCode = 404;
        res.end(JSON.stringify({ message: 'Not Found', statusCode: 404 }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** One assistant-request for a new inbound call to the number. */
function assistantRequest(numberId: string): () => RequestShape {
  const headers = { authorization: `Bearer ${SERVER_SECRET}`, 'content-type': 'application/json' };
  return () => ({
    method: 'POST',
    path: '/engines/vapi/server-messages',
    headers,
    body: JSON.stringify({
      message: {
        type: 'assistant-request',
        timestamp: Date.now(),
        call: {
          id: crypto.randomUUID(),
          type: 'inboundPhoneCall',
          status: 'ringing',
          phoneNumberId: numberId,
          customer: { number: `+1415555${1000 + Math.floor(Math.random() * 7999)}` },
        },
        phoneNumber: { number: INBOUND_NUMBER, provider: 'twilio' },
      },
    }),
  });
}

export function inboundAnswerUnavailable(context: ScenarioRun['context']): string | undefined {
  if (!context.agentId) return context.webhookUnavailable ?? 'no agent';
  if (!context.databaseUrl) {
    return 'PostgreSQL only: the Vapi route runs in a second process on the same database, which the embedded store cannot share';
  }
  return undefined;
}

/** inbound_under_load: assistant-requests offered per second beside CALL_START_RATE triggers/s. */
export const INBOUND_LOADED_RATE = 20;
export const INBOUND_P99_MS = 100;

/**
 * inbound_answer (closed loop, alone) or, with `triggers`, inbound_under_load: assistant-requests
 * at INBOUND_LOADED_RATE (open loop) while the benchmark service takes CALL_START_RATE call
 * triggers per second and dispatches them, for the same seconds.
 */
export async function runInboundAnswer(
  run: ScenarioRun,
  triggers?: () => RequestShape,
): Promise<CompoundResult> {
  const { context, options } = run;
  const numberId = crypto.randomUUID();
  const vapi = await startVapiStub(numberId);
  const port = await freePort();
  const service = await startProcess({
    name: 'service-vapi',
    args: [DIST_SERVER],
    env: serviceEnv(options, 'postgres', context.databaseUrl as string, port, {
      TELEPHONY: 'vapi',
      VAPI_API_KEY: 'bench-vapi-key',
      VAPI_API_BASE: vapi.url,
      VAPI_SERVER_SECRET: SERVER_SECRET,
      VAPI_SERVER_CREDENTIAL_ID: 'bench-credential',
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      WORKERS: '0',
    }),
    port,
    readyPath: '/readyz',
    logFile: `${RESULTS_DIR}/service-vapi-postgres.log`,
  });
  try {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const imported = await send(service.baseUrl, {
      method: 'POST',
      path: '/admin/v1/phone-numbers',
      headers: admin,
      body: JSON.stringify({ phone_number: INBOUND_NUMBER, tenant_id: context.fixture.tenantId }),
    });
    if (imported.status !== 201 && imported.status !== 409) {
      throw new Error(`importing the number answered ${imported.status}: ${imported.body.slice(0, 200)}`);
    }
    // The benchmark key has no agents scope: the inbound agent is set in the database, as the
    // partner's PATCH /api/v1/phone-numbers/{number} would.
    const client = new pg.Client({ connectionString: context.databaseUrl });
    await client.connect();
    try {
      await client.query('UPDATE phone_numbers SET inbound_agent_id = $1 WHERE phone_number = $2', [
        context.agentId,
        INBOUND_NUMBER,
      ]);
    } finally {
      await client.end();
    }
    const started = new Date();
    const inbound = {
      baseUrl: service.baseUrl,
      connections: options.connections,
      ...(triggers ? { overallRate: INBOUND_LOADED_RATE, openLoop: options.openLoop } : {}),
      request: assistantRequest(numberId),
      cpuSeconds: () => service.cpuSeconds(),
    };
    // Beside the triggers: warmed up alone first, then measured while the triggers run.
    if (triggers && options.warmup > 0) await runLoad({ ...inbound, duration: options.warmup, warmup: 0 });
    const answers = runLoad({
      ...inbound,
      duration: options.duration,
      warmup: triggers ? 0 : options.warmup,
    });
    const background = triggers
      ? runLoad({
          baseUrl: run.baseUrl,
          connections: options.connections,
          duration: options.duration,
          warmup: 0,
          overallRate: CALL_START_RATE,
          openLoop: options.openLoop,
          request: triggers,
        })
      : undefined;
    const [load, triggered] = await Promise.all([answers, background]);
    // Each answer stored a call: answered (dialing) or declined (failed). All should be answered.
    const counted = new pg.Client({ connectionString: context.databaseUrl });
    await counted.connect();
    const stored = await counted
      .query<{ status: string; n: string }>(
        `SELECT status, count(*) AS n FROM calls
         WHERE direction = 'inbound' AND to_number = $1 AND created_at >= $2 GROUP BY status`,
        [INBOUND_NUMBER, started],
      )
      .finally(() => counted.end());
    const calls = Object.fromEntries(stored.rows.map((row) => [row.status, Number(row.n)]));
    const baseline = run.results.get('baseline_db_write');
    return {
      load,
      ratio: baseline && baseline.rps > 0 ? Math.round((load.rps / baseline.rps) * 100) / 100 : null,
      details: {
        vapi_answer_limit_ms: 7500,
        process: 'second service, TELEPHONY=vapi, WORKERS=0',
        inbound_calls_by_status: calls,
        ...(triggered
          ? { beside: { triggers_offered_per_s: CALL_START_RATE, triggers_accepted_per_s: triggered.rps } }
          : {}),
      },
    };
  } finally {
    await service.stop();
    await vapi.close();
  }
}
