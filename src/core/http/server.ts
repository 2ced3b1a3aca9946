/**
 * The Node HTTP server under Fastify, with deliberate limits on slow and numerous clients
 * (README, "Slow clients"). Left to Node and Fastify, a server waits 60 s for headers, never
 * gives up on a body that trickles in (Fastify turns Node's request timeout off), and accepts
 * connections without bound.
 */
import http from 'node:http';
import type { FastifyServerFactory } from 'fastify';
import type { HttpLimits } from '../config/config.js';

/** Request line and headers together (Node's default, stated so the 431 answer can name it). */
export const MAX_HEADER_BYTES = 16 * 1024;

/**
 * Node checks the headers and request timeouts of every open connection on this interval
 * (30 s by default, which would stretch a 10 s headers timeout to up to 40 s).
 */
function checkingIntervalMs(limits: HttpLimits): number {
  return Math.max(25, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4)));
}

/** Fastify's `serverFactory` option: an HTTP/1.1 server with these limits. */
export function httpServerFactory(limits: HttpLimits): FastifyServerFactory {
  return (handler) => {
    const server = http.createServer(
      {
        headersTimeout: limits.headersTimeoutMs,
        requestTimeout: limits.requestTimeoutMs,
        connectionsCheckingInterval: checkingIntervalMs(limits),
        maxHeaderSize: MAX_HEADER_BYTES,
      },
      handler,
    );
    server.keepAliveTimeout = limits.keepAliveTimeoutMs;
    server.maxConnections = limits.maxConnections;
    return server;
  };
}
