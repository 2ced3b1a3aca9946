/**
 * Structured JSON logs (pino). Every request line carries `reqId`. Secrets never reach a log:
 * headers are not logged, webhook ids in URLs are shortened, and known secret fields are redacted.
 */
import type { DestinationStream, LoggerOptions } from 'pino';

/** `webh_` ids are credentials: keep only enough to tell two apart. */
export function redactUrl(url: string): string {
  return url.replace(/webh_[0-9A-Za-z]+/g, (id) => `${id.slice(0, 9)}…`);
}

const SECRET_PATHS = [
  'password',
  'token',
  'key',
  'smtp_url',
  'authorization',
  '*.password',
  '*.token',
  '*.key',
  '*.smtp_url',
  '*.authorization',
  '*.email_smtp_url',
  'req.headers',
];

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: SECRET_PATHS, censor: '[redacted]' },
    serializers: {
      req(request: { method: string; url: string; ip?: string }) {
        return { method: request.method, url: redactUrl(request.url), remoteAddress: request.ip };
      },
    },
  };
}

export type LogDestination = DestinationStream;
