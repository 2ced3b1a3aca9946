/**
 * The lists at the scale agencies reach: a tenant with 1,000,000 calls and 100,000 users
 * (bench/seed-calls.ts), each list offered at LIST_RATE req/s evenly spaced (open loop,
 * bench/paced.ts), a random page of the first ten each request, 100 items a page. Target: p99 <
 * LIST_P99_MS for each (bench/report.ts).
 */
import type { RequestShape } from './load.js';
import type { Scenario, ScenarioContext } from './scenario-types.js';
import { CALLS_LIST_CALLS, LIST_AGENTS, pick } from './seed.js';

/** Requests per second offered to each list scenario. */
export const LIST_RATE = 100;
/** The target for each list's p99 at LIST_RATE, in milliseconds. */
export const LIST_P99_MS = 50;

const page = () => 1 + Math.floor(Math.random() * 10);
const DAY_MS = 24 * 3600_000;

function calls(context: ScenarioContext, filter: () => string): () => RequestShape {
  const headers = { authorization: `Bearer ${context.fixture.apiKey}` };
  return () => ({ method: 'GET', path: `/api/v1/calls?${filter()}&limit=100&page=${page()}`, headers });
}

const noCalls = (context: ScenarioContext) => (context.fixture.listAgentId ? undefined : 'no calls seeded');
const perAgent = (CALLS_LIST_CALLS / LIST_AGENTS).toLocaleString('en-US');
const all = CALLS_LIST_CALLS.toLocaleString('en-US');

/** A one-day window inside the seeded calls (86,400 of them: more than a total counts exactly). */
function dayWindow(context: ScenarioContext): string {
  const first = Date.parse(context.fixture.firstCallAt ?? '');
  const last = Date.parse(context.fixture.lastCallAt ?? '');
  const from = first + Math.random() * Math.max(0, last - first - DAY_MS);
  return `created_after=${new Date(from).toISOString()}&created_before=${new Date(from + DAY_MS).toISOString()}`;
}

export const LIST_SCENARIOS: Scenario[] = [
  {
    name: 'calls_list',
    target: 'service',
    overallRate: LIST_RATE,
    measures: `GET /api/v1/calls?agent_id=…: a page of one agent's ${perAgent} calls among the tenant's ${all}`,
    unavailable: noCalls,
    request: (context) => calls(context, () => `agent_id=${context.fixture.listAgentId}`),
  },
  {
    name: 'calls_list_status',
    target: 'service',
    overallRate: LIST_RATE,
    measures: `GET /api/v1/calls?status=completed|no_answer|failed (70, 15, 15 % of ${all})`,
    unavailable: noCalls,
    request: (context) => calls(context, () => `status=${pick(['completed', 'no_answer', 'failed'])}`),
  },
  {
    name: 'calls_list_range',
    target: 'service',
    overallRate: LIST_RATE,
    measures: `GET /api/v1/calls?created_after=…&created_before=…: a random day (86,400 of ${all} calls)`,
    unavailable: noCalls,
    request: (context) => calls(context, () => dayWindow(context)),
  },
  {
    name: 'calls_list_direction',
    target: 'service',
    overallRate: LIST_RATE,
    measures: `GET /api/v1/calls?direction=inbound|outbound (20, 80 % of ${all})`,
    unavailable: noCalls,
    request: (context) => calls(context, () => `direction=${pick(['inbound', 'outbound'])}`),
  },
  {
    name: 'users_list',
    target: 'service',
    overallRate: LIST_RATE,
    measures: 'GET /api/v1/users?limit=100&page=1..10, one in three with status=active|blocked',
    request: (context) => {
      const headers = { authorization: `Bearer ${context.fixture.apiKey}` };
      return () => {
        const status = pick(['', '', '', '', '&status=active', '&status=blocked']);
        return { method: 'GET', path: `/api/v1/users?limit=100&page=${page()}${status}`, headers };
      };
    },
  },
];
