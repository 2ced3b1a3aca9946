/**
 * The scenarios: what each request is, which process answers it, and what its ratio compares
 * against (reads to baseline_db_read, writes to baseline_db_write).
 */
import { randomBase62 } from '../src/core/ids.js';
import type { RequestShape } from './load.js';
import type { ScenarioName } from './options.js';
import { BENCH_PASSWORD, type BenchFixture, pick, SEARCH_TERMS } from './seed.js';

export interface ScenarioContext {
  fixture: BenchFixture;
  /** Path of the benchmark agent's call-trigger webhook, when agents exist. */
  webhookPath?: string;
  /** Why the webhook scenario cannot run, when it cannot. */
  webhookUnavailable?: string;
}

export interface Scenario {
  name: ScenarioName;
  /** Which process answers: the bare baseline server or the service. */
  target: 'baseline' | 'service';
  /** The baseline the ratio is computed against; undefined for the baselines themselves. */
  ratioTo?: 'baseline_db_read' | 'baseline_db_write';
  /** What it measures (printed in bench/README.md). */
  measures: string;
  /** Reason the scenario cannot run yet (checked before the probe request). */
  unavailable?(context: ScenarioContext): string | undefined;
  request(context: ScenarioContext): RequestShape | (() => RequestShape);
}

const json = () => ({ 'content-type': 'application/json' });
const bearer = (context: ScenarioContext) => ({ authorization: `Bearer ${context.fixture.apiKey}` });

let userCounter = 0;

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
    name: 'plans_list',
    target: 'service',
    ratioTo: 'baseline_db_read',
    measures: 'GET /api/v1/plans (20 plans, one page): API-key auth + one list query',
    request: (context) => ({ method: 'GET', path: '/api/v1/plans', headers: bearer(context) }),
  },
  {
    name: 'users_search',
    target: 'service',
    ratioTo: 'baseline_db_read',
    measures: `GET /api/v1/users?search=<3 letters>&limit=100 over the seeded users (terms: ${SEARCH_TERMS.join(', ')})`,
    request: (context) => {
      const headers = bearer(context);
      return () => ({ method: 'GET', path: `/api/v1/users?search=${pick(SEARCH_TERMS)}&limit=100`, headers });
    },
  },
  {
    name: 'users_create',
    target: 'service',
    ratioTo: 'baseline_db_write',
    measures: 'POST /api/v1/users with a fresh Idempotency-Key and email each: scrypt hash + one transaction',
    request: (context) => {
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
    },
  },
  {
    name: 'subscription_get',
    target: 'service',
    ratioTo: 'baseline_db_read',
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
    request: (context) => () => ({
      method: 'POST',
      path: context.webhookPath!,
      headers: json(),
      // Numbers ending 0000/9999 make the simulator not answer / fail; these always answer.
      body: JSON.stringify({
        name: 'Bench Callee',
        phone: `+1415555${1000 + Math.floor(Math.random() * 7999)}`,
        company: 'Bench Co',
      }),
    }),
  },
];
