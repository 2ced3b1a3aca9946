/**
 * User sessions of a partner's white-label dashboard (/auth/v1): a user signs in with the
 * tenant id, email and password, and the session token (`vps_…`) then authenticates as that user.
 */
import { type Body, type Data, Resource } from './resources.js';
import type { RequestOptions } from './transport.js';

export class Sessions extends Resource {
  /** signIn — not retried (a refused sign-in counts against the account's limit). */
  signIn(body: Body<'signIn'>, options?: RequestOptions): Promise<Data<'signIn'>> {
    return this.data({
      method: 'POST',
      path: '/auth/v1/sessions',
      body,
      options: { ...options, bearer: '' },
    });
  }
  /** getSignedInUser */
  me(sessionToken: string, options?: RequestOptions): Promise<Data<'getSignedInUser'>> {
    return this.data({ method: 'GET', path: '/auth/v1/me', options: { ...options, bearer: sessionToken } });
  }
  /** signOut */
  async signOut(sessionToken: string, options?: RequestOptions): Promise<void> {
    await this.send({
      method: 'DELETE',
      path: '/auth/v1/sessions',
      options: { ...options, bearer: sessionToken },
    });
  }
  /** requestPasswordReset: answers the same whether or not the account exists. */
  async requestPasswordReset(body: Body<'requestPasswordReset'>, options?: RequestOptions): Promise<void> {
    await this.send({
      method: 'POST',
      path: '/auth/v1/password-resets',
      body,
      options: { ...options, bearer: '' },
    });
  }
  /** confirmPasswordReset */
  async confirmPasswordReset(body: Body<'confirmPasswordReset'>, options?: RequestOptions): Promise<void> {
    await this.send({
      method: 'POST',
      path: '/auth/v1/password-resets/confirm',
      body,
      options: { ...options, bearer: '' },
    });
  }
}
