/**
 * The console's cookies, all HttpOnly at path /console: the session, the one-time flash message
 * (redirect-after-post), and a secret kept for its result page only (`keepForOnce`).
 */

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Flash } from '../web/forms.js';
import { onceCookie } from '../web/once-cookie.js';

export const SESSION_COOKIE = 'vp_console';
export const FLASH_COOKIE = 'vp_flash';

/** Secure when the request came over https (directly or behind a trusted proxy). */
export const cookieOptions = (maxAgeSeconds: number) => ({
  path: '/console',
  httpOnly: true,
  sameSite: 'lax' as const,
  secure: 'auto' as const,
  maxAge: maxAgeSeconds,
});

export function setFlash(reply: FastifyReply, flash: Flash): void {
  reply.setCookie(FLASH_COOKIE, JSON.stringify(flash), cookieOptions(60));
}

/** What a CSRF token is bound to: the session, so a token of one session is refused in another. */
export function csrfUserInfo(request: FastifyRequest): string {
  return request.consoleSession?.sessionId ?? 'signed-out';
}

/** 303 to `url` (a console path) with a message shown once on the next page. */
export function redirectWithFlash(
  reply: FastifyReply,
  url: string,
  message: string,
  kind: Flash['kind'] = 'success',
) {
  setFlash(reply, { kind, message });
  return reply.code(303).redirect(url);
}

/** Reads and clears the flash the previous request left. */
export function takeFlash(request: FastifyRequest, reply: FastifyReply): Flash | undefined {
  const text = request.cookies[FLASH_COOKIE];
  if (!text) return undefined;
  reply.clearCookie(FLASH_COOKIE, { path: '/console' });
  try {
    const value = JSON.parse(text) as Flash;
    if ((value.kind === 'success' || value.kind === 'error') && typeof value.message === 'string') {
      return { kind: value.kind, message: value.message.slice(0, 500) };
    }
  } catch {}
  return undefined;
}

/** Only a path inside the console is a place to go back to after sign-in. */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/console(\/[^/\\]|$|\?)/.test(next) && !next.includes('//')
    ? next
    : '/console';
}

export const { keepForOnce, takeOnce } = onceCookie({
  cookie: 'vp_once',
  context: 'console-once',
  sessionIdOf: (request) => request.consoleSession?.sessionId,
  cookieOptions,
});
