/**
 * The audit scope of HTTP requests: every request runs in one (its IP, user agent and request id);
 * the surfaces' authentication names the actor (`actAs`), and the services' `recordAudit` reads it.
 *
 * A write route that answers success to an actor without having recorded an entry is logged at
 * error level (`audit entry missing`): the write-route test turns that into a failure, so a new
 * route cannot forget the audit log. A write route that changes nothing the log is about (signing
 * in, sending a test email) says so with `config: { audit: false }`.
 */
import type { FastifyInstance } from 'fastify';
import { type AuditScope, runInAuditScope } from './context.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: this POST/PUT/PATCH/DELETE records no audit entry (it changes no audited object). */
    audit?: false;
  }
  interface FastifyRequest {
    auditScope?: AuditScope;
  }
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** True for a route whose successful answers must have recorded an audit entry. */
export function isAuditedWrite(method: string, config: { audit?: false } | undefined): boolean {
  return WRITE_METHODS.has(method) && config?.audit !== false;
}

/** A write route as registered: its method, its URL and whether it owes an entry. */
export interface WriteRoute {
  method: string;
  url: string;
  audited: boolean;
}

const writeRoutesOfApp = new WeakMap<FastifyInstance, WriteRoute[]>();

/** Every POST/PUT/PATCH/DELETE route registered after `registerAuditScope` (the route test walks them). */
export function writeRoutes(app: FastifyInstance): readonly WriteRoute[] {
  return writeRoutesOfApp.get(app) ?? [];
}

export function registerAuditScope(app: FastifyInstance): void {
  const routes: WriteRoute[] = [];
  writeRoutesOfApp.set(app, routes);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (!WRITE_METHODS.has(method)) continue;
      routes.push({ method, url: route.url, audited: isAuditedWrite(method, route.config) });
    }
  });
  app.addHook('onRequest', (request, _reply, done) => {
    const userAgent = request.headers['user-agent'];
    const scope: AuditScope = {
      ip: request.ip ?? null,
      userAgent: typeof userAgent === 'string' ? userAgent : null,
      requestId: request.id,
      recorded: 0,
    };
    request.auditScope = scope;
    runInAuditScope(scope, done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const scope = request.auditScope;
    if (
      scope?.actor &&
      scope.recorded === 0 &&
      !scope.unchanged &&
      reply.statusCode < 400 &&
      reply.getHeader('idempotent-replayed') === undefined &&
      isAuditedWrite(request.method, request.routeOptions.config)
    ) {
      request.log.error(
        { audit_missing: `${request.method} ${request.routeOptions.url}` },
        'audit entry missing: a write answered success without recording an audit event',
      );
    }
    done();
  });
}
