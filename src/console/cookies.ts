/** The console's cookies: the session and the one-time flash message. Both HttpOnly, path /console. */
import type { FastifyReply, FastifyRequest } from 'fastify';

/** A one-time message shown on the next page (after a redirect). */
export interface Flash {
  kind: 'success' | 'error';
  message: string;
}

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
