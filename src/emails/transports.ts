/**
 * SMTP delivery with nodemailer: one pooled transport per tenant, built from its smtp_url and
 * cached until the URL changes, the cache is full, or the app closes. Also the two rules every
 * caller needs: which failures are worth retrying, and how to describe one without the password.
 */

import { isIP } from 'node:net';
import type { SendMailOptions } from 'nodemailer';
import nodemailer from 'nodemailer';
import { BoundedMap } from '../core/bounded-map.js';

/** Connection and reply timeouts: one attempt ends well within the job lease (60 s by default). */
const CONNECTION_TIMEOUT_MS = 15_000;
const SOCKET_TIMEOUT_MS = 20_000;
/** Hard deadline of one send, also against a server that trickles its replies. */
export const SEND_DEADLINE_MS = 45_000;
const MAX_CACHED_TRANSPORTS = 200;

export interface SmtpSender {
  /**
   * Sends one message through the SMTP server of `smtpUrl` (one pool per `poolKey`, a tenant or the
   * platform); rejects with nodemailer's error. With `addresses` (the outbound guard's, checked),
   * connects to one of them instead of resolving the host again; TLS still verifies the host name.
   */
  send(
    poolKey: string,
    smtpUrl: string,
    message: SendMailOptions,
    addresses?: readonly string[],
  ): Promise<void>;
  /** Closes every cached transport (app shutdown). */
  close(): Promise<void>;
}

/**
 * nodemailer options from an smtp:// or smtps:// URL (user and password percent-encoded in it),
 * connecting to `address` when given, with the URL's host name for SNI and the certificate check.
 */
export function transportOptions(smtpUrl: string, address?: string) {
  const url = new URL(smtpUrl);
  const secure = url.protocol === 'smtps:';
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return {
    pool: true as const,
    host: address ?? hostname,
    ...(address && !isIP(hostname) ? { servername: hostname } : {}),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    auth: user || pass ? { user, pass } : undefined,
    maxConnections: 2,
    maxMessages: 100,
    // Retries belong to the outbox (with back-off and attempt counting), not to the pool.
    maxRequeues: 0,
    // Closed politely before the socket timeout would cut it.
    idleTimeout: 15_000,
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    greetingTimeout: CONNECTION_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
    dnsTimeout: 10_000,
    logger: false,
    debug: false,
  };
}

export function createSmtpSender(): SmtpSender {
  type Cached = {
    smtpUrl: string;
    /** The checked address the pool connects to, or undefined when nodemailer resolves the host. */
    address: string | undefined;
    transport: ReturnType<typeof nodemailer.createTransport>;
  };
  // The tenant that sent least recently loses its pool first; a pool dropped finishes what it is sending.
  const cache = new BoundedMap<string, Cached>({
    maxEntries: MAX_CACHED_TRANSPORTS,
    order: 'use',
    onEvict: (oldest) => oldest.transport.close(),
  });

  function transportFor(poolKey: string, smtpUrl: string, addresses: readonly string[] | undefined) {
    const cached = cache.get(poolKey);
    // A pool is kept while its address is still among those the host resolves to (a name whose
    // records rotate keeps its pool and its open connections).
    const stillValid =
      cached?.smtpUrl === smtpUrl &&
      (addresses === undefined
        ? cached.address === undefined
        : cached.address !== undefined && addresses.includes(cached.address));
    if (cached && stillValid) return cached.transport;
    // Settings (or the host's addresses) changed: the old pool finishes what it is sending, then closes.
    cached?.transport.close();
    const address = addresses?.[0];
    const transport = nodemailer.createTransport(transportOptions(smtpUrl, address));
    cache.set(poolKey, { smtpUrl, address, transport });
    return transport;
  }

  let closed = false;

  return {
    async send(poolKey, smtpUrl, message, addresses) {
      if (closed)
        throw Object.assign(new Error('the email sender is shutting down'), { code: 'ECONNECTION' });
      const transport = transportFor(poolKey, smtpUrl, addresses);
      await transport.sendMail({ ...message, signal: AbortSignal.timeout(SEND_DEADLINE_MS) });
    },
    async close() {
      closed = true;
      for (const { transport } of cache.values()) transport.close();
      cache.clear();
    },
  };
}

interface SmtpError {
  code?: string;
  responseCode?: number;
  permanent?: boolean;
  command?: string;
  message?: string;
}

/**
 * Failures that the same message would get again, so retrying only delays the verdict:
 * - a 5xx reply (except 503, a session-state error): recipient or sender refused, message refused;
 * - authentication refused (535 and the like, or no usable mechanism or credentials): retrying
 *   the same password would fail again and may get the sender's address blocked by the provider.
 *   The operator fixes the settings; emails written after that are sent.
 * Everything else (connection refused or dropped, timeouts, DNS, TLS, 4xx replies) is transient.
 */
export function isPermanentSmtpFailure(error: unknown): boolean {
  const e = (error ?? {}) as SmtpError;
  if (e.code === 'EAUTH') return e.responseCode === undefined || e.responseCode >= 500;
  if (e.code === 'ENOAUTH' || e.code === 'ECONFIG') return true;
  if (e.permanent === true) return true;
  return (
    typeof e.responseCode === 'number' &&
    e.responseCode >= 500 &&
    e.responseCode < 600 &&
    e.responseCode !== 503
  );
}

const MAX_REASON_LENGTH = 500;

/**
 * A failure as one line fit for logs and last_error: the credentials of `smtpUrl` replaced
 * wherever they appear (plain, percent-encoded, base64 as in AUTH PLAIN/LOGIN), and any
 * user:password@ in a URL removed.
 */
export function describeSmtpFailure(error: unknown, smtpUrl: string): string {
  const e = (error ?? {}) as SmtpError;
  const base = e.message || String(error);
  const parts = [base];
  if (e.code && !base.includes(e.code)) parts.unshift(`${e.code}:`);
  let text = parts.join(' ');
  const secrets = secretsOf(smtpUrl);
  // A password too short to search for safely: keep only the codes, never the server's words.
  if (secrets.some((s) => s.length < 3))
    text = [e.code, e.responseCode].filter(Boolean).join(' ') || 'SMTP error';
  for (const secret of secrets) if (secret.length >= 3) text = text.split(secret).join('[redacted]');
  text = text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/@]*@/gi, '$1[redacted]@');
  text = text.replace(/\s+/g, ' ').trim();
  return text.length > MAX_REASON_LENGTH ? `${text.slice(0, MAX_REASON_LENGTH - 1)}…` : text;
}

function secretsOf(smtpUrl: string): string[] {
  let url: URL;
  try {
    url = new URL(smtpUrl);
  } catch {
    return [smtpUrl];
  }
  const rawPass = url.password;
  if (!rawPass) return [smtpUrl];
  const user = safeDecode(url.username);
  const pass = safeDecode(rawPass);
  const candidates = [
    smtpUrl,
    rawPass,
    pass,
    encodeURIComponent(pass),
    Buffer.from(pass).toString('base64'),
    Buffer.from(`\u0000${user}\u0000${pass}`).toString('base64'),
  ];
  // Longest first, so a secret that contains another is replaced whole.
  return [...new Set(candidates)].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
