/**
 * The scenarios: what each request is, which process answers it, and what its ratio compares
 * against (reads to baseline_db_read, writes to baseline_db_write, user creation to
 * baseline_hash). Scenarios that drive more than one load, or read dispatch times from the
 * database, bring their own `run` (bench/compound.ts, bench/call-pipeline.ts, bench/event-delivery.ts).
 */
import { randomBase62 } from '../src/core/ids.js';
import { CALL_START_RATE, runCallPipeline } from './call-pipeline.js';
import { runMixedCreateRead } from './compound.js';
import { CONSOLE_SCENARIOS } from './console-scenarios.js';
import { runEventDelivery } from './event-delivery.js';
import { EVENT_RATE, HANG_MS, runEventLatency } from './event-latency.js';
import { INBOUND_LOADED_RATE, inboundAnswerUnavailable, runInboundAnswer } from './inbound-answer.js';
import { LIST_RATE, LIST_SCENARIOS } from './list-scenarios.js';
import type { RequestShape } from './load.js';
import type { Scenario, ScenarioContext } from './scenario-types.js';
import { BENCH_PASSWORD, pick, SEARCH_TERMS } from './seed.js';

export type { CompoundResult, Scenario, ScenarioContext, ScenarioRun } from './scenario-types.js';

const json = () => ({ 'content-type': 'application/json' });
const bearer = (context: ScenarioContext) => ({ authorization: `Bearer ${context.fixture.apiKey}` });

let userCounter = 0;

/** A fresh user each time (new email and Idempotency-Key): what POST /api/v1/users costs. */
function newUserRequest(context: ScenarioContext): () => RequestShape {
  const run = randomBase62(6).toLowerCase();
  return () => {
    const n = ++userCounter;
    return {
      method: 'POST',
      path: '/api/v1/users',
      headers: { ...bearer(context), ...json(), 'idempotency-key': `bench-${run}-${n}` },
      body: JSON.stringify({
        email: `new.user.${run}.${n}@bench.example`,
        name: `New User ${n}`,
        password: BENCH_PASSWORD,
      }),
    };
  };
}

function searchRequest(context: ScenarioContext): () => RequestShape {
  const headers = bearer(context);
  return () => ({ method: 'GET', path: `/api/v1/users?search=${pick(SEARCH_TERMS)}&limit=100`, headers });
}

export function triggerRequest(context: ScenarioContext): () => RequestShape {
  return () => ({
    method: 'POST',
    path: context.webhookPath!,
    headers: json(),
    // Numbers ending 0000/9999 make the simulator not answer / fail; these always answer.
    body: JSON.stringify({
      name: 'Bench Callee',
      phone: `+1415555${1000 + Math.floor(Math.random() * 7999)}`,
      company: 'Bench Co',
    }),
  });
}

/** POST /api/v1/calls with the benchmark agent: the API's way of placing a call. */
function createCallRequest(context: ScenarioContext): () => RequestShape {
  const headers = { ...bearer(context), ...json() };
  return () => ({
    method: 'POST',
    path: '/api/v1/calls',
    headers,
    body: JSON.stringify({
      agent_id: context.agentId,
      phone: `+1415555${1000 + Math.floor(Math.random() * 7999)}`,
      name: 'Bench Callee',
      context: { company: 'Bench Co' },
    }),
  });
}

const plansRequest = (context: ScenarioContext): RequestShape => ({
  method: 'GET',
  path: '/api/v1/plans',
  headers: bearer(context),
});

/** The open-loop users_search rate: the lists' rate (the target: p99 < 50 ms, bench/list-scenarios.ts). */
export const SEARCH_OPEN_RATE = LIST_RATE;

export const SCENARIOS: Scenario[] = [
  {
    name: 'baseline_static',
    target: 'baseline',
    measures: 'bare Fastify route answering a fixed JSON body: the HTTP ceiling of this machine',
    request: () => ({ method: 'GET', path: '/static' }),
  },
  {
    name: 'baseline_db_read',
    target: 'baseline',
    measures:
      'bare route doing one SELECT … WHERE id = $1 on users through the same driver: the floor of any read',
    request: (context) => () => ({ method: 'GET', path: `/read/${pick(context.fixture.sampleUserIds)}` }),
  },
  {
    name: 'baseline_db_write',
    target: 'baseline',
    measures: 'bare route doing one single-row INSERT in its own transaction (BEGIN, INSERT, COMMIT)',
    request: () => ({ method: 'POST', path: '/write', headers: json(), body: '{"n":1}' }),
  },
  {
    name: 'baseline_hash',
    target: 'baseline',
    measures:
      'bare route computing one Argon2id password hash (m=19456 KiB, t=2, p=1) per request: the floor of user creation',
    request: () => ({
      method: 'POST',
      path: '/hash',
      headers: json(),
      body: JSON.stringify({ password: BENCH_PASSWORD }),
    }),
  },
  {
    name: 'plans_list',
    target: 'service',
    ratioTo: 'baseline_db_read',
    pairedRuns: 3,
    measures: 'GET /api/v1/plans (20 plans, one page): API-key auth + one list query',
    request: plansRequest,
  },
  {
    name: 'users_search',
    target: 'service',
    ratioTo: 'baseline_db_read',
    measures: `GET /api/v1/users?search=<3 letters>&limit=100 over the seeded users (terms: ${SEARCH_TERMS.join(', ')})`,
    request: searchRequest,
  },
  {
    name: 'users_search_open',
    target: 'service',
    ratioTo: 'baseline_db_read',
    overallRate: SEARCH_OPEN_RATE,
    measures: `users_search offered at a fixed ${SEARCH_OPEN_RATE} req/s (open loop, evenly spaced; latency from each request's due time)`,
    request: searchRequest,
  },
  {
    name: 'users_create',
    target: 'service',
    ratioTo: 'baseline_hash',
    measures:
      'POST /api/v1/users with a fresh Idempotency-Key and email each: Argon2id hash + one transaction',
    request: newUserRequest,
  },
  {
    name: 'mixed_create_read',
    target: 'service',
    measures:
      'plans_list at the usual connections, alone and then while users_create keeps the hash pool busy on 8 more: plans_list p99 under the mix over its p99 alone',
    request: plansRequest,
    run: (run) => runMixedCreateRead(run, plansRequest(run.context), newUserRequest(run.context)),
  },
  {
    name: 'subscription_get',
    target: 'service',
    ratioTo: 'baseline_db_read',
    pairedRuns: 3,
    measures: 'GET /api/v1/subscriptions/{id}, a random one of the 1,000 seeded subscriptions',
    unavailable: (context) =>
      context.fixture.subscriptionsError
        ? `subscriptions could not be seeded: ${context.fixture.subscriptionsError}`
        : context.fixture.subscriptionIds.length === 0
          ? 'no subscriptions seeded'
          : undefined,
    request: (context) => {
      const headers = bearer(context);
      return () => ({
        method: 'GET',
        path: `/api/v1/subscriptions/${pick(context.fixture.subscriptionIds)}`,
        headers,
      });
    },
  },
  {
    name: 'webhook_trigger',
    target: 'service',
    ratioTo: 'baseline_db_write',
    measures:
      'POST /webhooks/agents/{id}/trigger: a call row + its dispatch job in one transaction, dispatch workers running',
    unavailable: (context) => (context.webhookPath ? undefined : (context.webhookUnavailable ?? 'no agent')),
    request: triggerRequest,
  },
  ...LIST_SCENARIOS,
  ...CONSOLE_SCENARIOS,
  {
    name: 'calls_create',
    target: 'service',
    ratioTo: 'baseline_db_write',
    measures:
      'POST /api/v1/calls with the benchmark agent: the webhook’s guarded insert plus the read of the call it answers, dispatch workers running',
    unavailable: (context) => (context.agentId ? undefined : (context.webhookUnavailable ?? 'no agent')),
    request: createCallRequest,
  },
  {
    name: 'call_pipeline',
    target: 'service',
    ratioTo: 'baseline_db_write',
    measures:
      'triggers at fixed rates (3 × --duration s each) with dispatch in the same process, calls lasting 0 s: lag from the trigger to the dial, the highest rate with p99 lag < 1 s and a drained backlog',
    unavailable: (context) =>
      !context.webhookPath
        ? (context.webhookUnavailable ?? 'no agent')
        : !context.databaseUrl
          ? 'PostgreSQL only: dispatch times are read from the database, which the embedded service holds'
          : undefined,
    request: triggerRequest,
    run: (run) => runCallPipeline(run, triggerRequest(run.context)),
  },
  {
    name: 'event_delivery',
    target: 'service',
    ratioTo: 'baseline_db_write',
    measures:
      'a backlog of events (baseline_db_write × --duration) delivered by the job runner to a receiver in the bench process answering 200 at once: events delivered per second; p50/p99 from each event to its arrival',
    unavailable: (context) =>
      context.databaseUrl
        ? undefined
        : 'PostgreSQL only: the backlog is written to the database, which the embedded service holds',
    request: (context) => ({ method: 'GET', path: '/api/v1/events?limit=1', headers: bearer(context) }),
    run: (run) => runEventDelivery(run),
  },
  {
    name: 'event_latency',
    target: 'service',
    measures: `${EVENT_RATE} events/s recorded for --duration s: created_at → first arrival at an endpoint answering at once, alone and beside an endpoint answering after ${HANG_MS / 1000} s`,
    unavailable: (context) =>
      context.databaseUrl ? undefined : 'PostgreSQL only: the events are recorded in the database',
    request: (context) => ({ method: 'GET', path: '/api/v1/events?limit=1', headers: bearer(context) }),
    run: (run) => runEventLatency(run),
  },
  {
    name: 'inbound_answer',
    target: 'service',
    ratioTo: 'baseline_db_write',
    measures:
      'POST /engines/vapi/server-messages with an assistant-request for a new inbound call each: who answers the number (one read, the cached published version) and the call stored in one statement, answered with the transient assistant; a second service process with TELEPHONY=vapi on the same database (PostgreSQL only)',
    unavailable: (context) => inboundAnswerUnavailable(context),
    // The probe goes to the benchmark service (simulated: no Vapi route); the run starts its own.
    request: plansRequest,
    run: (run) => runInboundAnswer(run),
  },
  {
    name: 'inbound_under_load',
    target: 'service',
    ratioTo: 'baseline_db_write',
    measures: `inbound_answer offered at ${INBOUND_LOADED_RATE} req/s (open loop) while the benchmark service takes ${CALL_START_RATE} call triggers/s and dispatches them (PostgreSQL only)`,
    unavailable: (context) =>
      inboundAnswerUnavailable(context) ?? (context.webhookPath ? undefined : 'no call-trigger webhook'),
    request: plansRequest,
    run: (run) => runInboundAnswer(run, triggerRequest(run.context)),
  },
];
