/**
 * The web security every page surface (the console, the portal, the operator console) shares,
 * from well-kept plugins: @fastify/cookie and @fastify/formbody (plain HTML forms only: a JSON body,
 * with its numbers, arrays and objects, is refused with 415), @fastify/helmet (a strict Content
 * Security Policy: scripts and styles only from this origin, no framing) and
 * @fastify/csrf-protection (a token in every form, bound to the visitor's session, checked on
 * every POST by `checkCsrf`).
 *
 * Registered in two steps so a surface can add an onRequest hook between them: helmet's hook runs
 * after the hooks registered before it (the portal finds the brand's logo origin there first).
 */
import type { IncomingMessage } from 'node:http';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

const FORM_BODY_LIMIT = 256 * 1024;

/** Cookies and url-encoded forms; JSON bodies refused. */
export async function acceptFormsOnly(app: FastifyInstance): Promise<void> {
  await app.register(cookie);
  app.removeContentTypeParser('application/json');
  await app.register(formbody, { bodyLimit: FORM_BODY_LIMIT });
}

export interface PageProtection {
  /** The CSRF cookie's name and path (each surface keeps its own). */
  csrfCookie: string;
  cookiePath: string;
  /** The key that signs CSRF tokens (derived from the service's secrets, per surface). */
  hmacKey: string;
  /** What a CSRF token is bound to (the visitor's session), so one session's token fails in another. */
  csrfUserInfo: (request: FastifyRequest) => string;
  /** A further image source per request (the portal's brand logo origin). */
  imageSourceOf?: (request: IncomingMessage) => string;
}

/** The Content-Security-Policy and the CSRF tokens. */
export async function protectPages(app: FastifyInstance, options: PageProtection): Promise<void> {
  const imgSrc = ["'self'", 'data:', ...(options.imageSourceOf ? [options.imageSourceOf] : [])];
  await app.register(helmet, {
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc,
        // Call recordings: the simulator's from this origin, a voice engine's from its own https host.
        mediaSrc: ["'self'", 'https:'],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        upgradeInsecureRequests: null,
      },
    },
    // A page served over plain http (the embedded default on localhost, tests) must not turn into
    // https; TLS in front of a deployment (or a custom domain) sets HSTS itself.
    hsts: false,
  });
  await app.register(csrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: options.csrfCookie,
    cookieOpts: {
      path: options.cookiePath,
      httpOnly: true,
      sameSite: 'strict',
      secure: 'auto',
      signed: false,
    },
    getUserInfo: options.csrfUserInfo,
    csrfOpts: { hmacKey: options.hmacKey },
  });
}

/** Refuses (throws the plugin's 403) a POST whose CSRF token is missing or not this session's. */
export function checkCsrf(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  return new Promise((resolve, reject) => {
    app.csrfProtection(request, reply, (error?: Error) => (error ? reject(error) : resolve()));
  });
}
