/**
 * The client portal under test: the real app (with the portal mounted unless src/app.ts already
 * mounts it), agencies with a brand, users with a plan, minutes, agents and calls, and a client
 * that talks to the portal as a browser would (cookies at their paths, the CSRF token of the last
 * page, any Host). Browser helpers write screenshots under test-results/portal/ (git-ignored).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import {
  createPlan,
  createTenant,
  createUser,
  startTestApp,
  type TestApp,
  type TestAppOptions,
  type TestTenant,
} from '../support/app.js';

export const USER_PASSWORD = 'correct horse';
const SCREENSHOTS = path.resolve(import.meta.dirname, '../../test-results/portal');

/** The app with its portal (src/app.ts mounts it under /portal). */
export function startPortalApp(options: TestAppOptions = {}): Promise<TestApp> {
  return startTestApp(options);
}

export interface Agency {
  tenant: TestTenant;
  slug: string;
  base: string;
}

let agencyCounter = 0;

/** A tenant with a brand (slug, name, colour, support email, logo when given). */
export async function createAgency(
  t: TestApp,
  brand: {
    name: string;
    color?: string;
    supportEmail?: string | null;
    logoUrl?: string | null;
    slug?: string;
  },
): Promise<Agency> {
  agencyCounter++;
  const tenant = await createTenant(t, { name: `${brand.name} Ltd` });
  const slug = brand.slug ?? `${brand.name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${agencyCounter}`;
  await t.services.branding.update(tenant.id, {
    slug,
    brand_name: brand.name,
    primary_color: brand.color ?? '#0f766e',
    support_email: brand.supportEmail === undefined ? `help@${slug}.example` : brand.supportEmail,
    logo_url: brand.logoUrl ?? null,
  });
  return { tenant, slug, base: `/portal/${slug}` };
}

export interface Client {
  id: string;
  email: string;
  password: string;
}

/** A user of the agency, subscribed to an agency plan of `includedMinutes` (granted at once). */
export async function createClient(
  t: TestApp,
  agency: Agency,
  options: { name?: string; includedMinutes?: number; planName?: string } = {},
): Promise<Client> {
  const user = await createUser(agency.tenant, {
    name: options.name ?? 'Grace Hopper',
    password: USER_PASSWORD,
  });
  if (options.includedMinutes !== 0) {
    const plan = await createPlan(t, agency.tenant.id, {
      name: options.planName ?? 'Growth',
      included_minutes: options.includedMinutes ?? 500,
      monthly_price: 4900,
    });
    const subscribed = await agency.tenant.request('POST', '/api/v1/subscriptions', {
      user_id: user.id,
      plan_id: plan.id,
    });
    if (subscribed.status !== 201) throw new Error(`subscription: ${subscribed.raw}`);
  }
  return { id: user.id, email: user.email, password: USER_PASSWORD };
}

export async function createAgent(
  t: TestApp,
  agency: Agency,
  userId: string,
  options: { name?: string; publish?: boolean } = {},
) {
  const created = await t.admin('POST', `/admin/v1/tenants/${agency.tenant.id}/agents`, {
    user_id: userId,
    name: options.name ?? 'Front desk',
    phone_number: '+14155550100',
    prompt: 'You are the front desk of a dental practice. Book {name} in for a check-up.',
    welcome_message: 'Hello {name}, this is the front desk.',
  });
  if (created.status !== 201) throw new Error(`agent: ${created.raw}`);
  if (options.publish === false) return created.body.data;
  const published = await t.admin('POST', `/admin/v1/agents/${created.body.data.id}/publish`);
  if (published.status !== 200) throw new Error(`publish: ${published.raw}`);
  return published.body.data;
}

/** Places a call through the agent's webhook and waits until the job runner has ended it. */
export async function placeCall(
  t: TestApp,
  agent: { webhook_id: string },
  phone: string,
  name = 'Ada Lovelace',
) {
  const triggered = await t.inject({
    method: 'POST',
    url: `/webhooks/agents/${agent.webhook_id}/trigger`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ phone, name }),
  });
  if (triggered.status !== 202) throw new Error(`trigger: ${triggered.raw}`);
  const id = triggered.body.data.id as string;
  for (let i = 0; i < 200; i++) {
    const call = await t.admin('GET', `/admin/v1/calls/${id}`);
    if (['completed', 'no_answer', 'failed'].includes(call.body.data.status)) return id;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`call ${id} did not end`);
}

/** Adds a custom domain row (verified or not) the way a verification would leave it. */
export async function addDomain(t: TestApp, tenantId: string, hostname: string, verified: boolean) {
  await t.services.database.db
    .insertInto('tenant_domains')
    .values({
      id: `dom_${hostname.replace(/\W/g, '')}${Date.now()}`,
      tenant_id: tenantId,
      hostname,
      verification_token: 'token',
      verified_at: verified ? new Date() : null,
      checked_at: null,
      check_problem: null,
      created_at: new Date(),
    })
    .execute();
  t.services.branding.forget();
}

export interface PageResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

export const csrfTokenIn = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1];

/** A browser's worth of cookies for one host, sent by path as a browser would. */
export function portalClient(t: TestApp, host = 'voiceplane.test') {
  const cookies = new Map<string, { value: string; path: string }>();
  let csrf: string | undefined;

  const matches = (cookiePath: string, url: string) => {
    const requestPath = url.split('?')[0] ?? '/';
    return (
      requestPath === cookiePath ||
      requestPath.startsWith(cookiePath.endsWith('/') ? cookiePath : `${cookiePath}/`)
    );
  };
  function remember(headers: PageResponse['headers']) {
    const set = headers['set-cookie'];
    for (const line of Array.isArray(set) ? set : set ? [String(set)] : []) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const cookiePath =
        attributes
          .map((a) => a.trim())
          .find((a) => /^path=/i.test(a))
          ?.slice(5) ?? '/';
      const key = `${name}@${cookiePath}`;
      if (/Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(line) || value === '') cookies.delete(key);
      else cookies.set(key, { value, path: cookiePath });
    }
  }
  const cookieHeader = (url: string) =>
    [...cookies]
      .filter(([, cookie]) => matches(cookie.path, url))
      .map(([key, cookie]) => `${key.split('@')[0]}=${cookie.value}`)
      .join('; ');

  async function send(
    method: 'GET' | 'POST',
    url: string,
    payload?: string,
    headers: Record<string, string> = {},
  ) {
    const cookie = cookieHeader(url);
    const response = await t.app.inject({
      method,
      url,
      headers: {
        host,
        ...(cookie ? { cookie } : {}),
        ...(payload !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...headers,
      },
      payload,
    });
    remember(response.headers);
    const page: PageResponse = {
      status: response.statusCode,
      headers: response.headers,
      body: response.body,
    };
    csrf = csrfTokenIn(page.body) ?? csrf;
    return page;
  }

  const client = {
    cookies,
    get: (url: string) => send('GET', url),
    async post(url: string, fields: Record<string, string>, options: { csrf?: string | false } = {}) {
      const form = new URLSearchParams(fields);
      if (options.csrf !== false) form.set('_csrf', options.csrf ?? csrf ?? '');
      return send('POST', url, form.toString());
    },
    /** Signs in on the portal at `base`; then holds a CSRF token bound to the new session. */
    async signIn(base: string, email: string, password: string) {
      await send('GET', `${base}/sign-in`);
      const answer = await client.post(`${base}/sign-in`, { email, password });
      if (answer.status === 303) await send('GET', base);
      return answer;
    },
    sessionCookie: () => [...cookies].find(([key]) => key.startsWith('portal_session@'))?.[1].value,
    csrfToken: () => csrf,
  };
  return client;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}
