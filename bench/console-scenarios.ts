/**
 * The agency console at scale: the pages an agency's staff open most (overview, calls, users,
 * analytics) on the tenant of the lists at scale (1,000,000 calls, 100,000 users), signed in as an
 * owner. Offered at CONSOLE_RATE req/s each, evenly spaced; target p99 < CONSOLE_P99_MS (the
 * time from the request's due moment to its last byte, an upper bound on the server's time).
 */
import { ADMIN_TOKEN } from './environment.js';
import type { RequestShape } from './load.js';
import type { Scenario, ScenarioContext } from './scenario-types.js';
import type { BenchFixture } from './seed.js';

/** Requests per second offered to each console page: staff at work, not a crawler. */
export const CONSOLE_RATE = 20;
export const CONSOLE_P99_MS = 100;
const MEMBER_PASSWORD = 'bench console password';

/** `name=value; …` from a response's Set-Cookie lines, added to `jar`. */
function remember(jar: Map<string, string>, response: Response): void {
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const eq = pair.indexOf('=');
    jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
  }
}

/**
 * Adds an owner to the bench tenant through the operator API and signs in as it through the
 * console's own form; the session's Cookie header, or why it could not.
 */
export async function signInConsole(
  baseUrl: string,
  fixture: BenchFixture,
): Promise<{ cookie?: string; unavailable?: string }> {
  const email = `bench.owner.${Date.now()}@bench.example`;
  const created = await fetch(`${baseUrl}/admin/v1/tenants/${fixture.tenantId}/members`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: MEMBER_PASSWORD, role: 'owner', name: 'Bench Owner' }),
  });
  if (created.status !== 201)
    return { unavailable: `member not created: ${created.status} ${await created.text()}` };
  const jar = new Map<string, string>();
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const form = await fetch(`${baseUrl}/console/sign-in`);
  remember(jar, form);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
  const signedIn = await fetch(`${baseUrl}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email, password: MEMBER_PASSWORD, next: '/console', _csrf: csrf }).toString(),
  });
  remember(jar, signedIn);
  if (signedIn.status !== 303 || !jar.has('vp_console'))
    return { unavailable: `console sign-in answered ${signedIn.status}` };
  return { cookie: cookie() };
}

const page = () => 1 + Math.floor(Math.random() * 10);

function consolePage(path: () => string) {
  return (context: ScenarioContext): (() => RequestShape) => {
    const headers = { cookie: context.consoleCookie ?? '' };
    return () => ({ method: 'GET', path: path(), headers });
  };
}

const unavailable = (context: ScenarioContext) =>
  context.consoleCookie ? undefined : (context.consoleUnavailable ?? 'no console session');

export const CONSOLE_SCENARIOS: Scenario[] = [
  {
    name: 'console_overview',
    target: 'service',
    overallRate: CONSOLE_RATE,
    measures: 'GET /console: the overview (stats, recent calls, panels) of the tenant at scale',
    unavailable,
    request: consolePage(() => '/console'),
  },
  {
    name: 'console_calls',
    target: 'service',
    overallRate: CONSOLE_RATE,
    measures: 'GET /console/calls?page=1..10: the calls page over 1,000,000 calls',
    unavailable,
    request: consolePage(() => `/console/calls?page=${page()}`),
  },
  {
    name: 'console_users',
    target: 'service',
    overallRate: CONSOLE_RATE,
    measures: 'GET /console/users?page=1..10: the users page over 100,000 users',
    unavailable,
    request: consolePage(() => `/console/users?page=${page()}`),
  },
  {
    name: 'console_analytics',
    target: 'service',
    overallRate: CONSOLE_RATE,
    measures: 'GET /console/analytics: the default range of the analytics page over 1,000,000 calls',
    unavailable,
    request: consolePage(() => '/console/analytics'),
  },
];
