/** Requests of the user-session surface (/auth/v1), shared by the session tests. */
import type { TestApp, TestResponse } from '../support/app.js';

const json = { 'content-type': 'application/json' };

export function sessionClient(t: TestApp) {
  return {
    signIn: (tenantId: string, email: string, password: string): Promise<TestResponse> =>
      t.inject({
        method: 'POST',
        url: '/auth/v1/sessions',
        headers: json,
        payload: JSON.stringify({ tenant_id: tenantId, email, password }),
      }),
    me: (token: string): Promise<TestResponse> =>
      t.inject({ method: 'GET', url: '/auth/v1/me', headers: { authorization: `Bearer ${token}` } }),
    signOut: (token?: string): Promise<TestResponse> =>
      t.inject({
        method: 'DELETE',
        url: '/auth/v1/sessions',
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      }),
    requestReset: (tenantId: string, email: string, ip?: string): Promise<TestResponse> =>
      t.inject({
        method: 'POST',
        url: '/auth/v1/password-resets',
        headers: json,
        payload: JSON.stringify({ tenant_id: tenantId, email }),
        ...(ip ? { remoteAddress: ip } : {}),
      }),
    confirmReset: (token: string, password: string): Promise<TestResponse> =>
      t.inject({
        method: 'POST',
        url: '/auth/v1/password-resets/confirm',
        headers: json,
        payload: JSON.stringify({ token, password }),
      }),
  };
}
