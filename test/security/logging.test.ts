/**
 * Logs: structured JSON lines, the request id on every request line, and no secret ever written.
 * Requests carrying each kind of secret — API keys, passwords, session tokens, webhook ids, SMTP
 * passwords — are driven through success, refusal and a provoked 500, background jobs included
 * (a welcome email to an SMTP server that is down), at the most verbose level; then every
 * captured line is searched for each secret.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJobRunner, type JobRunner } from '../../src/core/jobs/runner.js';
import { loggerOptions } from '../../src/core/observability/logging.js';
import {
  ADMIN_TOKEN,
  createTenant,
  startTestApp,
  type TestApp,
  type TestResponse,
  type TestTenant,
} from '../support/app.js';
import { withoutRateLimits } from './routes.js';

const SMTP_PASSWORD = 'SmtpPassw0rdNeverLogged';
const USER_PASSWORD = 'UserPassw0rdNeverLogged';
const SHORT_PASSWORD = 'Sh0rtPw';
const WRONG_PASSWORD = 'WrongPassw0rdNeverLogged';
/** Personal data sent in query strings: never logged, not even percent-encoded. */
const SEARCHED_EMAIL = 'zebulon.searched@example.com';
const SEARCHED_NAME = 'Zebulon Quartermaine';

let t: TestApp;
let tenant: TestTenant;
let jobs: JobRunner;
const responses: TestResponse[] = [];
/** Every secret the requests carried; none may appear in any log line. */
const secrets = new Set<string>([SMTP_PASSWORD, USER_PASSWORD, SHORT_PASSWORD, WRONG_PASSWORD, ADMIN_TOKEN]);

async function record(response: Promise<TestResponse>): Promise<TestResponse> {
  const answer = await response;
  responses.push(answer);
  return answer;
}

beforeAll(async () => {
  t = await startTestApp({
    env: { LOG_LEVEL: 'trace' },
    adapters: withoutRateLimits,
    extraRoutes: {
      // A route with a bug: it throws while the request carries a key and a password.
      partner: [
        async (app) => {
          app.post('/test-only/boom', { config: { scope: 'users:read' } }, async () => {
            throw new Error('unexpected failure in a handler');
          });
        },
      ],
    },
  });
  // Background work logs into the same captured stream (src/server.ts passes its logger too), and
  // retries at once so the failed deliveries' log lines appear within the test.
  jobs = createJobRunner({
    db: t.services.database.db,
    clock: t.services.clock,
    handlers: t.services.jobHandlers,
    backoffBaseMs: 0,
    logger: pino(loggerOptions('trace'), {
      write: (line: string) => void t?.logs.push(...line.split('\n').filter(Boolean)),
    }),
  });
  tenant = await createTenant(t);
  secrets.add(tenant.key);

  // SMTP settings with a password, on create and on update; the outbox then fails to deliver.
  const mailTenant = await record(
    t.admin('POST', '/admin/v1/tenants', {
      name: 'Mail Agency',
      email: { smtp_url: `smtp://mailer:${SMTP_PASSWORD}@127.0.0.1:1`, from: 'Mail <noreply@example.com>' },
    }),
  );
  expect(mailTenant.status, mailTenant.raw).toBe(201);
  await record(
    t.admin('PATCH', `/admin/v1/tenants/${tenant.id}`, {
      email: { smtp_url: `smtps://mailer:${SMTP_PASSWORD}@127.0.0.1:1`, from: 'noreply@example.com' },
    }),
  );
  await record(
    t.admin('PATCH', `/admin/v1/tenants/${tenant.id}`, {
      email: { smtp_url: `ftp://x:${SMTP_PASSWORD}@h`, from: 'x' },
    }),
  );

  // Passwords: a created user, a refused short one, a sign-in that works, one that does not.
  const email = `logs.${Date.now()}@example.com`;
  const created = await record(
    tenant.request('POST', '/api/v1/users', { email, name: 'Log Tester', password: USER_PASSWORD }),
  );
  expect(created.status, created.raw).toBe(201);
  await record(
    tenant.request('POST', '/api/v1/users', { email: `x${email}`, name: 'Short', password: SHORT_PASSWORD }),
  );
  await record(
    tenant.request('POST', '/api/v1/users', { email: 42, name: 'Typed', password: { value: USER_PASSWORD } }),
  );
  await record(
    tenant.request('POST', '/api/v1/users', {
      email: `y${email}`,
      name: 'Extra',
      password: USER_PASSWORD,
      token: tenant.key,
    }),
  );
  const signIn = (password: string) =>
    record(
      t.inject({
        method: 'POST',
        url: '/auth/v1/sessions',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ tenant_id: tenant.id, email, password }),
      }),
    );
  const session = await signIn(USER_PASSWORD);
  expect(session.status, session.raw).toBe(201);
  secrets.add(session.body.data.token);
  await signIn(WRONG_PASSWORD);

  // Session tokens: valid, then revoked by deleting the user.
  const me = () =>
    record(
      t.inject({
        method: 'GET',
        url: '/auth/v1/me',
        headers: { authorization: `Bearer ${session.body.data.token}` },
      }),
    );
  expect((await me()).status).toBe(200);

  // API keys: issued, used, refused for scope, revoked, then refused.
  const issued = await record(
    t.admin('POST', `/admin/v1/tenants/${tenant.id}/api-keys`, { scopes: ['plans:read'] }),
  );
  secrets.add(issued.body.data.key);
  await record(t.partner(issued.body.data.key, 'GET', '/api/v1/plans'));
  await record(t.partner(issued.body.data.key, 'GET', '/api/v1/users'));
  await record(t.admin('DELETE', `/admin/v1/api-keys/${issued.body.data.id}`));
  await record(t.partner(issued.body.data.key, 'GET', '/api/v1/plans'));
  await record(t.partner(tenant.key, 'GET', `/api/v1/users?limit=1000`));
  // Personal data in query strings: searches, and parameters no route declares.
  await record(
    tenant.request('GET', `/api/v1/users?search=${encodeURIComponent(SEARCHED_EMAIL)}&limit=5&sort_by=name`),
  );
  await record(
    tenant.request(
      'GET',
      `/api/v1/users?search=${encodeURIComponent(SEARCHED_NAME)}&email=${SEARCHED_EMAIL}&status=active`,
    ),
  );
  await record(tenant.request('GET', `/api/v1/users/${created.body.data.id}?q=${SEARCHED_EMAIL}`));
  await record(t.partner(ADMIN_TOKEN, 'GET', '/api/v1/users'));
  await record(t.partner(tenant.key, 'GET', '/admin/v1/tenants/x'));

  // A 500: the handler throws while the request carries a key and a password.
  const boom = await record(
    tenant.request('POST', '/api/v1/test-only/boom', { password: USER_PASSWORD, key: tenant.key }),
  );
  expect(boom.status).toBe(500);
  expect(boom.body.error.code).toBe('internal_error');

  // Webhook ids: the URL is the credential (docs/design-choices.md).
  const agent = await record(
    t.admin('POST', `/admin/v1/tenants/${tenant.id}/agents`, {
      user_id: created.body.data.id,
      name: 'Logger',
      phone_number: '+14155550100',
      prompt: 'Hello {name}',
      welcome_message: 'Hi',
    }),
  );
  if (agent.status === 201) {
    const webhookId: string = agent.body.data.webhook_id;
    secrets.add(webhookId);
    const trigger = (id: string, body: unknown) =>
      record(
        t.inject({
          method: 'POST',
          url: `/webhooks/agents/${id}/trigger?from=logs`,
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        }),
      );
    await trigger(webhookId, { phone: '+14155550123', name: 'Ada' });
    await trigger(webhookId, { phone: 'nope' });
    await record(t.admin('POST', `/admin/v1/agents/${agent.body.data.id}/publish`));
    await record(t.admin('POST', `/admin/v1/users/${created.body.data.id}/credits`, { minutes: 5 }));
    await trigger(webhookId, { phone: '+14155550123', name: 'Ada', password: USER_PASSWORD });
    const rotated = await record(t.admin('POST', `/admin/v1/agents/${agent.body.data.id}/rotate-webhook`));
    if (rotated.status === 200) secrets.add(rotated.body.data.webhook_id);
    await trigger(webhookId, { phone: '+14155550123', name: 'Ada' });
    await record(t.admin('GET', `/admin/v1/agents/${agent.body.data.id}`));
  }

  // Background work: the welcome email (SMTP down) and the call run, fail and retry.
  await jobs.drain();

  // The user is deleted: its session is revoked.
  await record(tenant.request('DELETE', `/api/v1/users/${created.body.data.id}`));
  expect((await me()).status).toBe(401);
  await jobs.drain();
}, 60_000);

afterAll(() => t?.close());

describe('logs', () => {
  it('are JSON lines with a level, a time and a message', () => {
    expect(t.logs.length).toBeGreaterThan(responses.length);
    for (const line of t.logs) {
      const entry = JSON.parse(line);
      expect(typeof entry.level, line).toBe('number');
      expect(typeof entry.time, line).toBe('number');
      expect(typeof entry.msg, line).toBe('string');
    }
  });

  it('carry the request id on every request line, the same as the X-Request-Id answered', () => {
    const entries = t.logs.map((line) => JSON.parse(line));
    const requestLines = entries.filter((e) => e.req || e.res || e.responseTime !== undefined || e.err);
    expect(requestLines.length).toBeGreaterThanOrEqual(responses.length * 2);
    for (const entry of requestLines.filter((e) => !e.jobId))
      expect(entry.reqId, JSON.stringify(entry)).toMatch(/^req_/);
    const logged = new Set(entries.map((e) => e.reqId));
    for (const response of responses) expect(logged).toContain(response.headers['x-request-id']);
  });

  it('record the 500 with its request id and the error, without the request', () => {
    const failure = t.logs
      .map((line) => JSON.parse(line))
      .find((e) => e.level === 50 && e.err?.message === 'unexpected failure in a handler');
    expect(failure, 'the 500 is logged').toBeDefined();
    expect(failure.reqId).toMatch(/^req_/);
    expect(responses.some((r) => r.headers['x-request-id'] === failure.reqId && r.status === 500)).toBe(true);
  });

  it('include the failures of background work', () => {
    const jobs = t.logs.map((line) => JSON.parse(line)).filter((e) => e.jobId !== undefined);
    expect(jobs.some((e) => e.queue?.startsWith('emails'))).toBe(true);
  });

  it('never contain a secret', () => {
    const all = t.logs.join('\n');
    expect(secrets.size).toBeGreaterThanOrEqual(8);
    for (const secret of secrets) {
      expect(all.includes(secret), `a log line contains ${secret.slice(0, 8)}…`).toBe(false);
      // Not even the random part of a key or token, nor the base64 of a basic-auth header.
      const random = secret.replace(/^[a-z]+_(live_|test_)?/, '');
      if (random.length >= 16)
        expect(all.includes(random), `a log line contains the random part of ${secret.slice(0, 8)}…`).toBe(
          false,
        );
    }
    expect(all).not.toMatch(/"authorization"/i);
    expect(all).not.toMatch(/"password"\s*:\s*"(?!\[redacted\])/);
  });

  it('name the route pattern, and keep no personal data from query strings', () => {
    const all = t.logs.join('\n');
    for (const term of [SEARCHED_EMAIL, encodeURIComponent(SEARCHED_EMAIL), 'Quartermaine', 'zebulon']) {
      expect(all.toLowerCase().includes(term.toLowerCase()), `a log line contains ${term}`).toBe(false);
    }
    const requests = t.logs.map((line) => JSON.parse(line)).filter((e) => e.req);
    const searches = requests.filter((e) => e.req.url.includes('search='));
    expect(searches.map((e) => [e.req.route, e.req.url])).toEqual([
      ['/api/v1/users', '/api/v1/users?search=[redacted]&limit=5&sort_by=name'],
      ['/api/v1/users', '/api/v1/users?search=[redacted]&email=[redacted]&status=active'],
    ]);
    const routes = new Set(requests.map((e) => e.req.route));
    expect(routes).toContain('/api/v1/users/:id');
    expect(routes).toContain('/admin/v1/tenants/:id/api-keys');
    if (all.includes('/webhooks/agents/'))
      expect(routes).toContain('/webhooks/agents/:agentWebhookId/trigger');
  });

  it('shorten webhook ids in URLs and keep SMTP passwords out of answers too', () => {
    const all = t.logs.join('\n');
    if (all.includes('/webhooks/agents/')) expect(all).toMatch(/\/webhooks\/agents\/webh_\w{4}…\/trigger/);
    for (const response of responses) expect(response.raw).not.toContain(SMTP_PASSWORD);
  });
});
