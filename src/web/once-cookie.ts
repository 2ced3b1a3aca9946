/**
 * A value shown once after a redirect (a form's result, an invitation link): the POST seals it in
 * a cookie bound to the signed-in session and the page it is for, and redirects; the next GET of
 * that page takes it and clears the cookie. A secret is then in no POST response a refresh resends.
 * Each console (agency, operator) binds its own cookie name, session and cookie options.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SecretBox } from '../core/security/secrets.js';

/** Time enough to follow the redirect; a page not reached by then shows nothing. */
const ONCE_SECONDS = 300;

export function onceCookie(options: {
  cookie: string;
  /** Names the console in the sealing context, so one console's cookie never opens in another. */
  context: string;
  sessionIdOf: (request: FastifyRequest) => string | undefined;
  cookieOptions: (maxAgeSeconds: number) => Record<string, unknown>;
}) {
  const contextOf = (request: FastifyRequest, path: string) =>
    `${options.context}:${options.sessionIdOf(request) ?? 'none'}:${path}`;
  return {
    /** Keeps `value` for the next GET of `path` by this session only (then it is gone). */
    keepForOnce(
      request: FastifyRequest,
      reply: FastifyReply,
      secrets: SecretBox,
      path: string,
      value: unknown,
    ): void {
      const sealed = secrets.seal(JSON.stringify(value), contextOf(request, path));
      reply.setCookie(options.cookie, sealed, { ...options.cookieOptions(ONCE_SECONDS), path });
    },
    /** What `keepForOnce` left for this page, taken away; undefined on a second visit. */
    takeOnce<Value>(
      request: FastifyRequest,
      reply: FastifyReply,
      secrets: SecretBox,
      path: string,
    ): Value | undefined {
      const sealed = request.cookies[options.cookie];
      if (!sealed) return undefined;
      reply.clearCookie(options.cookie, { path });
      try {
        return JSON.parse(secrets.open(sealed, contextOf(request, path))) as Value;
      } catch {
        return undefined;
      }
    },
  };
}
