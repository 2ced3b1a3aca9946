/**
 * The agency console surface (`/console`, docs/console.md): server-rendered pages for a tenant's
 * members. Everything a page shows or changes goes through the same services as the API.
 *
 * Well-kept plugins do the web security, scoped to this surface only: @fastify/cookie (the session
 * and flash cookies), @fastify/formbody (plain HTML forms), @fastify/csrf-protection (a token in
 * every form, bound to the session, checked on every POST), @fastify/helmet (a strict Content
 * Security Policy: scripts and styles only from this origin; no framing). Each route says who may
 * use it through `config.consoleAccess`: 'public' (sign-in pages), 'second-factor' (a session
 * still owing its TOTP code), or a least role; by default GET needs a viewer and POST an admin.
 */
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Role } from '../members/schemas.js';
import { roleAllows } from '../members/service.js';
import type { Services } from '../services.js';
import { assetRoutes } from './assets.js';
import { csrfUserInfo, SESSION_COOKIE } from './cookies.js';
import { checkParameters, takeFlash } from './forms.js';
import { pageErrorHandler } from './page-errors.js';
import { errorPage } from './sign-in.js';

export type ConsoleAccess = 'public' | 'second-factor' | Role;

declare module 'fastify' {
  interface FastifyContextConfig {
    consoleAccess?: ConsoleAccess;
  }
}

/** Pages of one capability: registered under /console with the services they call. */
export type ConsolePages = FastifyPluginAsync<{ services: Services }>;

function accessOf(request: FastifyRequest): ConsoleAccess {
  const declared = request.routeOptions.config?.consoleAccess;
  if (declared) return declared;
  return request.method === 'GET' || request.method === 'HEAD' ? 'viewer' : 'admin';
}

export async function consoleSurface(
  app: FastifyInstance,
  options: { services: Services; pages: ConsolePages[] },
) {
  const { services } = options;
  await app.register(cookie);
  // Plain HTML forms only: a JSON body (with its numbers, arrays and objects) is refused with 415.
  app.removeContentTypeParser('application/json');
  await app.register(formbody, { bodyLimit: 256 * 1024 });
  await app.register(helmet, {
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        upgradeInsecureRequests: null,
      },
    },
    // A page served over plain http (the embedded default on localhost) must not turn into https.
    hsts: false,
  });
  await app.register(csrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: 'vp_csrf',
    cookieOpts: { path: '/console', httpOnly: true, sameSite: 'strict', secure: 'auto', signed: false },
    getUserInfo: csrfUserInfo,
    csrfOpts: { hmacKey: services.secrets.deriveKey('console-csrf').toString('base64') },
  });

  app.decorateRequest('consoleSession', null);
  app.decorateRequest('consoleFlash', undefined);

  app.addHook('onRequest', async (request, reply) => {
    // The stylesheet and script are the same for everyone: no session lookup for them.
    if (request.url.startsWith('/console/assets/')) return;
    request.consoleSession = await services.members.authenticate(request.cookies[SESSION_COOKIE]);
    if (request.method === 'GET') request.consoleFlash = takeFlash(request, reply);
  });

  app.addHook('preHandler', async (request, reply) => {
    const access = accessOf(request);
    if (request.method !== 'GET' && request.method !== 'HEAD') await checkCsrf(app, request, reply);
    if (reply.sent || access === 'public') return;
    const session = request.consoleSession;
    if (!session) return refuseSignedOut(request, reply);
    if (session.awaitingTotp) {
      if (access !== 'second-factor') return reply.code(303).redirect('/console/sign-in/two-factor');
      return;
    }
    if (access !== 'second-factor' && !roleAllows(session.role, access)) {
      return errorPage(reply, 403, `Your role (${session.role}) cannot do this; ask an owner of the agency.`);
    }
    checkParameters(request);
  });

  app.setErrorHandler(
    pageErrorHandler({
      surface: 'console',
      csrfRefused: 'This form has expired or did not come from the console. Reload the page and try again.',
      page: errorPage,
    }),
  );
  app.setNotFoundHandler((_request, reply) => errorPage(reply, 404, 'There is no such page in the console.'));

  await app.register(assetRoutes);
  for (const pages of options.pages) await app.register(pages, { services });
}

function checkCsrf(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  return new Promise((resolve, reject) => {
    app.csrfProtection(request, reply, (error?: Error) => (error ? reject(error) : resolve()));
  });
}

function refuseSignedOut(request: FastifyRequest, reply: FastifyReply) {
  if (request.method === 'GET') {
    return reply.code(303).redirect(`/console/sign-in?next=${encodeURIComponent(request.url)}`);
  }
  return errorPage(reply, 401, 'Your session has ended. Sign in again to continue.');
}
