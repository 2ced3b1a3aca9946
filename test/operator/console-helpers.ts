/**
 * The operator console over plain HTTP (app.inject) with a cookie jar, and staff accounts made
 * through the staff service with a known password and TOTP secret. Each sign-in of an account
 * needs a TOTP time step not used before: `signIn` tries the current step, then the next ones.
 */
import { base32Decode, totpCode } from '../../src/core/security/totp.js';
import type { StaffRole } from '../../src/staff/schemas.js';
import { csrfTokenIn, type PageResponse } from '../console/http.js';
import type { TestApp } from '../support/app.js';

export const STAFF_PASSWORD = 'staff password 123';

export interface TestStaff {
  id: string;
  email: string;
  password: string;
  secret: string;
  role: StaffRole;
}

let counter = 0;
export async function addStaff(t: TestApp, role: StaffRole, email?: string): Promise<TestStaff> {
  counter++;
  const chosen = email ?? `${role}${counter}-${Date.now()}@platform.example`;
  const { staff, totp } = await t.services.staff.create({ email: chosen, password: STAFF_PASSWORD, role });
  return { id: staff.id, email: chosen, password: STAFF_PASSWORD, secret: totp.secret, role };
}

/** The code of the time step `offset` steps from now. */
export function codeOf(secret: string, offset = 0, at = new Date()): string {
  return totpCode(base32Decode(secret) as Buffer, new Date(at.getTime() + offset * 30_000));
}

export interface OperatorClient {
  get(url: string): Promise<PageResponse>;
  post(url: string, fields: Record<string, string>, options?: { withCsrf?: boolean }): Promise<PageResponse>;
  signIn(staff: TestStaff, code?: string): Promise<PageResponse>;
  cookies: Map<string, string>;
}

export function operatorClient(t: TestApp, extraHeaders: Record<string, string> = {}): OperatorClient {
  const cookies = new Map<string, string>();
  let csrf: string | undefined;
  const remember = (headers: PageResponse['headers']) => {
    const set = headers['set-cookie'];
    for (const line of Array.isArray(set) ? set : set ? [String(set)] : []) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(line) || value === '') cookies.delete(name);
      else cookies.set(name, value);
    }
  };
  async function send(method: 'GET' | 'POST', url: string, payload?: string): Promise<PageResponse> {
    const response = await t.app.inject({
      method,
      url,
      headers: {
        ...extraHeaders,
        ...(cookies.size ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {}),
        ...(payload !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      payload,
    });
    remember(response.headers);
    const page = { status: response.statusCode, headers: response.headers, body: response.body };
    csrf = csrfTokenIn(page.body) ?? csrf;
    return page;
  }
  const client: OperatorClient = {
    cookies,
    get: (url) => send('GET', url),
    async post(url, fields, options = {}) {
      const form = new URLSearchParams(fields);
      if (options.withCsrf !== false) {
        if (!csrf) await send('GET', '/operator/sign-in');
        form.set('_csrf', csrf ?? '');
      }
      return send('POST', url, form.toString());
    },
    async signIn(staff, code) {
      await send('GET', '/operator/sign-in');
      let answer: PageResponse | undefined;
      for (const offset of code === undefined ? [-1, 0, 1] : [0]) {
        answer = await client.post('/operator/sign-in', {
          email: staff.email,
          password: staff.password,
          code: code ?? codeOf(staff.secret, offset),
        });
        if (answer.status === 303) break;
      }
      if (answer?.status === 303) await send('GET', '/operator/tenants');
      return answer as PageResponse;
    },
  };
  return client;
}
