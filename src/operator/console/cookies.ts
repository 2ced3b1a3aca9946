/** The operator console's cookies, all HttpOnly at path /operator: the session and the one-time flash. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Flash } from '../../web/forms.js';
import { onceCookie } from '../../web/once-cookie.js';

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

export const { keepForOnce, takeOnce } = onceCookie({
  cookie: 'vp_operator_once',
  context: 'operator-once',
  sessionIdOf: (request) => request.operatorSession?.sessionId,
  cookieOptions,
});
