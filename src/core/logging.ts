/**
 * Structured JSON logs (pino). Every request line carries `reqId`. Secrets never reach a log:
 * headers are not logged, webhook ids in URLs are shortened, and known secret fields are redacted.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, DestinationStream, Logger, LoggerOptions } from 'pino';

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

type LevelName = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LogArgs = Parameters<FastifyBaseLogger['info']>;

/**
 * A request's child logger (with its `reqId`), made only when something logs through it at an
 * enabled level. Making one serializes its bindings, which shows in the profile of the hottest
 * routes, and at `warn` most requests never log. Methods live on the prototype, so a request
 * that never logs costs one small object.
 */
class LazyChildLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  #real(): FastifyBaseLogger {
    this.#child ??= this.parent.child(this.bindings, this.options);
    return this.#child;
  }

  #log(level: LevelName, args: LogArgs): void {
    // Fastify's logger is pino, which can tell whether a level is enabled.
    if (this.#child || (this.parent as unknown as Logger).isLevelEnabled(level)) {
      (this.#real()[level] as (...a: LogArgs) => void)(...args);
    }
  }

  get level(): string {
    return this.#child?.level ?? this.parent.level;
  }
  set level(level: string) {
    this.#real().level = level;
  }
  fatal(...args: LogArgs) {
    this.#log('fatal', args);
  }
  error(...args: LogArgs) {
    this.#log('error', args);
  }
  warn(...args: LogArgs) {
    this.#log('warn', args);
  }
  info(...args: LogArgs) {
    this.#log('info', args);
  }
  debug(...args: LogArgs) {
    this.#log('debug', args);
  }
  trace(...args: LogArgs) {
    this.#log('trace', args);
  }
  silent() {}
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`. */
export function lazyChildLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
}
