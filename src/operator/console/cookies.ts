/** The operator console's cookies, all HttpOnly at path /operator: the session and the one-time flash. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SecretBox } from '../../core/security/secrets.js';
import type { Flash } from '../../web/forms.js';

export const OPERATOR_PATH = '/operator';
export const SESSION_COOKIE = 'vp_operator';
const FLASH_COOKIE = 'vp_operator_flash';

/** Secure when the request came over https (directly or behind a trusted proxy). */
export const cookieOptions = (maxAgeSeconds: number) => ({
  path: OPERATOR_PATH,
  httpOnly: true,
  sameSite: 'lax' as const,
  secure: 'auto' as const,
  maxAge: maxAgeSeconds,
});

/** What a CSRF token is bound to: the session, so a token of one session is refused in another. */
export function csrfUserInfo(request: FastifyRequest): string {
  return request.operatorSession?.sessionId ?? 'signed-out';
}

export function setFlash(reply: FastifyReply, flash: Flash): void {
  reply.setCookie(FLASH_COOKIE, JSON.stringify(flash), cookieOptions(60));
}

/** 303 to `url` (an operator console path) with a message shown once on the next page. */
export function redirectWithFlash(
  reply: FastifyReply,
  url: string,
  message: string,
  kind: Flash['kind'] = 'success',
) {
  setFlash(reply, { kind, message });
  return reply.code(303).redirect(url);
}

export function takeFlash(request: FastifyRequest, reply: FastifyReply): Flash | undefined {
  const text = request.cookies[FLASH_COOKIE];
  if (!text) return undefined;
  reply.clearCookie(FLASH_COOKIE, { path: OPERATOR_PATH });
  try {
    const value = JSON.parse(text) as Flash;
    if ((value.kind === 'success' || value.kind === 'error') && typeof value.message === 'string') {
      return { kind: value.kind, message: value.message.slice(0, 500) };
    }
  } catch {}
  return undefined;
}

/** Only a path inside the operator console is a place to go back to after sign-in. */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/operator(\/[^/\\]|$|\?)/.test(next) && !next.includes('//')
    ? next
    : OPERATOR_PATH;
}

const ONCE_COOKIE = 'vp_operator_once';
/** Time enough to follow the redirect; a page not reached by then shows nothing. */
const ONCE_SECONDS = 300;
const onceContext = (request: FastifyRequest, path: string) =>
  `operator-once:${request.operatorSession?.sessionId ?? 'none'}:${path}`;

/**
 * Keeps a secret (an invitation link) for the next GET of `path` by this session only, sealed in a
 * cookie, so the POST answers with a redirect: the secret is in no POST response a refresh resends.
 */
export function keepForOnce(
  request: FastifyRequest,
  reply: FastifyReply,
  secrets: SecretBox,
  path: string,
  value: unknown,
): void {
  const sealed = secrets.seal(JSON.stringify(value), onceContext(request, path));
  reply.setCookie(ONCE_COOKIE, sealed, { ...cookieOptions(ONCE_SECONDS), path });
}

/** What `keepForOnce` left for this page, taken away; undefined on a second visit. */
export function takeOnce<Value>(
  request: FastifyRequest,
  reply: FastifyReply,
  secrets: SecretBox,
  path: string,
): Value | undefined {
  const sealed = request.cookies[ONCE_COOKIE];
  if (!sealed) return undefined;
  reply.clearCookie(ONCE_COOKIE, { path });
  try {
    return JSON.parse(secrets.open(sealed, onceContext(request, path))) as Value;
  } catch {
    return undefined;
  }
}
