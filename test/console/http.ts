/**
 * The console over plain HTTP (app.inject) with a cookie jar: what a browser would send, minus the
 * browser. Each POST carries the CSRF token of a page this client fetched, unless told not to.
 */
import type { TestApp } from '../support/app.js';

export interface PageResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

export interface ConsoleClient {
  get(url: string): Promise<PageResponse>;
  post(
    url: string,
    fields: Record<string, string | string[]>,
    options?: { withCsrf?: boolean },
  ): Promise<PageResponse>;
  signIn(email: string, password: string): Promise<PageResponse>;
  /** The raw session token from the cookie jar. */
  sessionToken(): string | undefined;
  cookies: Map<string, string>;
}

export function csrfTokenIn(html: string): string | undefined {
  return /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
}

export function consoleClient(t: TestApp, extraHeaders: Record<string, string> = {}): ConsoleClient {
  const cookies = new Map<string, string>();
  let csrf: string | undefined;

  function remember(headers: PageResponse['headers']) {
    const set = headers['set-cookie'];
    for (const line of Array.isArray(set) ? set : set ? [String(set)] : []) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(line) || value === '') cookies.delete(name);
      else cookies.set(name, value);
    }
  }

  const cookieHeader = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');

  async function send(method: 'GET' | 'POST', url: string, payload?: string): Promise<PageResponse> {
    const response = await t.app.inject({
      method,
      url,
      headers: {
        ...extraHeaders,
        ...(cookies.size ? { cookie: cookieHeader() } : {}),
        ...(payload !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      payload,
    });
    remember(response.headers);
    const page = { status: response.statusCode, headers: response.headers, body: response.body };
    csrf = csrfTokenIn(page.body) ?? csrf;
    return page;
  }

  const client: ConsoleClient = {
    cookies,
    get: (url) => send('GET', url),
    async post(url, fields, options = {}) {
      const form = new URLSearchParams();
      for (const [name, value] of Object.entries(fields)) {
        for (const v of Array.isArray(value) ? value : [value]) form.append(name, v);
      }
      if (options.withCsrf !== false) {
        if (!csrf) await send('GET', '/console/sign-in');
        form.set('_csrf', csrf ?? '');
      }
      return send('POST', url, form.toString());
    },
    async signIn(email, password) {
      await send('GET', '/console/sign-in');
      const answer = await client.post('/console/sign-in', { email, password });
      // The token of the signed-out page is bound to no session: fetch one bound to the new session.
      if (answer.status === 303 && cookies.has('vp_console')) await send('GET', '/console');
      return answer;
    },
    sessionToken: () => cookies.get('vp_console'),
  };
  return client;
}
