/**
 * The POST of a delivery attempt, over keep-alive connections: opening a TCP (and TLS) connection
 * per event cost more than the rest of the attempt. Each endpoint has its own agents, one per set
 * of addresses the SSRF guard checked at an attempt, and an agent's `lookup` answers only that set:
 * a socket is opened only to an address checked for this endpoint, and reused only by an attempt
 * whose own check gave the same set (a name that now resolves elsewhere, or to a refused address,
 * gets another agent, or no request at all). Per endpoint, not per host: two endpoints on one host
 * never wait for each other's sockets, so a hung endpoint still delays only itself.
 *
 * Agents are held in a bounded map; one unused for `idleMs` is dropped, and a dropped agent is
 * destroyed once its requests in flight have ended (never cutting one). `close()` (the service
 * stopping) does the same for all of them; attempts made after it connect once per request.
 */
import http from 'node:http';
import https from 'node:https';
import { BoundedMap } from '../core/bounded-map.js';
import { lookupFor, type ResolvedAddress } from '../core/security/outbound-addresses.js';

/** The most of an answer read: its status decides, its first 4 KiB are kept for the delivery log. */
export const MAX_ANSWER_BYTES = 4096;

/** An answer: its status, headers and at most MAX_ANSWER_BYTES of its body (as UTF-8 text). */
export interface PostAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type PostOutcome = PostAnswer | { error: string };

/** The answer's headers as one string each (repeated headers joined by a comma). */
function headersOf(raw: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    headers[name] = name in headers ? `${headers[name]}, ${raw[i + 1]}` : raw[i + 1];
  }
  return headers;
}

export interface PostRequest {
  endpointId: string;
  url: URL;
  /** The addresses the SSRF guard checked for this attempt: the only ones a socket may reach. */
  addresses: ResolvedAddress[];
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

export interface EndpointConnections {
  /** One POST: no redirects, a deadline for the whole of it, at most MAX_ANSWER_BYTES read. */
  post(request: PostRequest): Promise<PostOutcome>;
  /** Stops keeping connections: idle ones close now, busy ones as soon as their request ends. */
  close(): void;
  /** Agents held now. */
  readonly agents: number;
}

export interface EndpointConnectionOptions {
  /** Sockets per agent: the per-endpoint cap of deliveries in flight. */
  maxSockets: number;
  maxAgents?: number;
  /** An agent unused this long is dropped; an idle socket is closed after this long too. */
  idleMs?: number;
  now?: () => number;
}

interface Pooled {
  key: string;
  agent: http.Agent;
  inFlight: number;
  lastUsedAt: number;
  retired: boolean;
}

/** Socket errors that mean a kept-alive socket was closed by the peer before our request reached it. */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);

type Sent = PostOutcome & { staleSocket?: boolean };

export function createEndpointConnections(options: EndpointConnectionOptions): EndpointConnections {
  const idleMs = options.idleMs ?? 30_000;
  const now = options.now ?? (() => performance.now());
  let closed = false;
  let sweptAt = now();

  const pool = new BoundedMap<string, Pooled>({
    maxEntries: options.maxAgents ?? 1000,
    order: 'use',
    onEvict: (pooled) => retire(pooled),
  });

  function retire(pooled: Pooled): void {
    pooled.retired = true;
    if (pooled.inFlight === 0) pooled.agent.destroy();
  }

  function sweepIdle(at: number): void {
    if (at - sweptAt < idleMs / 2) return;
    sweptAt = at;
    const idle = [...pool.values()].filter((p) => p.inFlight === 0 && at - p.lastUsedAt >= idleMs);
    for (const pooled of idle) {
      pool.delete(pooled.key);
      retire(pooled);
    }
  }

  function acquire(request: PostRequest): Pooled {
    const at = now();
    sweepIdle(at);
    const addressKey = request.addresses
      .map((a) => a.address)
      .sort()
      .join(',');
    const key = `${request.endpointId} ${request.url.protocol}//${request.url.host} ${addressKey}`;
    let pooled = pool.get(key);
    if (!pooled) {
      const Agent = request.url.protocol === 'https:' ? https.Agent : http.Agent;
      pooled = {
        key,
        // `lookup` here wins over the request's: the agent's sockets reach its own checked set only.
        agent: new Agent({
          keepAlive: true,
          maxSockets: options.maxSockets,
          maxFreeSockets: options.maxSockets,
          timeout: idleMs,
          lookup: lookupFor(request.addresses),
        } as https.AgentOptions),
        inFlight: 0,
        lastUsedAt: at,
        retired: false,
      };
      pool.set(key, pooled);
    }
    pooled.inFlight += 1;
    pooled.lastUsedAt = at;
    return pooled;
  }

  function release(pooled: Pooled): void {
    pooled.inFlight -= 1;
    pooled.lastUsedAt = now();
    if (pooled.retired && pooled.inFlight === 0) pooled.agent.destroy();
  }

  function send(request: PostRequest, agent: http.Agent | false, timeoutMs: number): Promise<Sent> {
    const client = request.url.protocol === 'https:' ? https : http;
    return new Promise((resolve) => {
      let settled = false;
      let answered = false;
      // The socket goes back to the agent only after a complete, short answer; otherwise it is closed.
      const finish = (outcome: Sent, keepSocket = false) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (!keepSocket) req.destroy();
        resolve(outcome);
      };
      const req = client.request(
        request.url,
        { method: 'POST', headers: request.headers, agent, lookup: lookupFor(request.addresses) },
        (response) => {
          answered = true;
          const status = response.statusCode ?? 0;
          const headers = headersOf(response.rawHeaders);
          const chunks: Buffer[] = [];
          let received = 0;
          const answer = (): PostAnswer => ({
            status,
            headers,
            body: Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES).toString('utf8'),
          });
          response.on('data', (chunk: Buffer) => {
            if (received < MAX_ANSWER_BYTES) chunks.push(chunk);
            received += chunk.length;
            if (received >= MAX_ANSWER_BYTES) finish(answer());
          });
          response.on('end', () => finish(answer(), true));
          response.on('error', () => finish(answer()));
        },
      );
      const timer = setTimeout(
        () => finish({ error: `no answer within ${request.timeoutMs} ms` }),
        timeoutMs,
      );
      req.on('error', (error: NodeJS.ErrnoException) =>
        finish({
          error: error.message,
          staleSocket: req.reusedSocket && !answered && STALE_SOCKET_CODES.has(error.code ?? ''),
        }),
      );
      req.end(request.body);
    });
  }

  async function post(request: PostRequest): Promise<PostOutcome> {
    if (closed) return send(request, false, request.timeoutMs);
    const deadline = now() + request.timeoutMs;
    const pooled = acquire(request);
    try {
      // A kept-alive socket the receiver closed while idle fails at once: the request goes again
      // on another socket (at worst a new one: each failed socket is gone), within the deadline.
      for (let tries = 0; ; tries++) {
        const sent = await send(request, pooled.agent, Math.max(1, deadline - now()));
        if (!('error' in sent) || !sent.staleSocket || tries >= options.maxSockets || now() >= deadline) {
          if ('error' in sent) return { error: sent.error };
          return { status: sent.status, headers: sent.headers, body: sent.body };
        }
      }
    } finally {
      release(pooled);
    }
  }

  return {
    post,
    close() {
      closed = true;
      for (const pooled of [...pool.values()]) retire(pooled);
      pool.clear();
    },
    get agents() {
      return pool.size;
    },
  };
}
