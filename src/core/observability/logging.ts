/**
 * Structured JSON logs (pino). Every request line carries `reqId` and the route pattern. Secrets
 * and personal data never reach a log: headers are not logged, webhook ids in URLs are shortened,
 * tokens in URLs (a console invitation link's) are cut to their prefix, query values are kept only for paging, sorting, enum and id parameters, and known secret fields
 * are redacted.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, DestinationStream, Logger, LoggerOptions } from 'pino';

/**
 * Tokens that are credentials whole: invitation (`vpi_`, the operator's `vpoi_`), session (`vpc_`,
 * `vps_`, the operator's `vpo_`), reset (`vpr_`).
 */
const TOKENS = /\b(vp(?:[icsr]|oi?)_)[0-9A-Za-z]+/g;
/** An invitation link's path segment (the console's, the operator console's) is its token, whatever it looks like. */
const INVITATION_PATH = /(\/(?:console|operator)\/invitations\/)([^/?#]+)/g;

/**
 * `webh_` ids are credentials: keep only enough to tell two apart. Tokens keep their prefix only,
 * and the segment of an invitation link is never logged.
 */
export function redactUrl(url: string): string {
  return url
    .replace(/webh_[0-9A-Za-z]+/g, (id) => `${id.slice(0, 9)}…`)
    .replace(TOKENS, (_token, prefix: string) => `${prefix}…`)
    .replace(INVITATION_PATH, (_path, head: string, segment: string) =>
      segment.endsWith('…') ? `${head}${segment}` : `${head}[redacted]`,
    );
}

/**
 * Query parameters whose values are logged: paging, sorting, enum filters and ids. Anything else
 * (`search` holds emails and names) is logged as `[redacted]`.
 */
const LOGGED_QUERY_VALUES = new Set([
  'page',
  'limit',
  'sort_by',
  'sort_order',
  'status',
  'active',
  'provider',
  'user_id',
  'plan_id',
  'agent_id',
  'tenant_id',
]);
/** What an enum, a number or an id looks like; an `@`, a space or other text is not one. */
const PLAIN_VALUE = /^[\w.-]{0,100}$/;
const PLAIN_NAME = /^[\w.[\]-]{1,64}$/;
const REDACTED = '[redacted]';

function decoded(part: string): string | undefined {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** The URL as logged: webhook ids shortened, query values redacted unless plainly not personal. */
export function loggableUrl(url: string): string {
  const mark = url.indexOf('?');
  if (mark === -1) return redactUrl(url);
  const query = url
    .slice(mark + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = decoded(equals === -1 ? pair : pair.slice(0, equals));
      if (name === undefined || !PLAIN_NAME.test(name)) return REDACTED;
      if (equals === -1) return name;
      const value = decoded(pair.slice(equals + 1));
      const keep = LOGGED_QUERY_VALUES.has(name) && value !== undefined && PLAIN_VALUE.test(value);
      return `${name}=${keep ? value : REDACTED}`;
    });
  return `${redactUrl(url.slice(0, mark))}?${query.join('&')}`;
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
      req(request: { method: string; url: string; ip?: string; routeOptions?: { url?: string } }) {
        return {
          method: request.method,
          // The pattern (`/api/v1/users/:id`), or undefined when no route matched.
          route: request.routeOptions?.url,
          url: loggableUrl(request.url),
          remoteAddress: request.ip,
        };
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
// The class's methods accept what pino's do; merging the interface states it for the type checker.
// biome-ignore lint/correctness/noUnusedVariables: merged with the class below
interface LazyChildLogger extends FastifyBaseLogger {}
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: see above
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
    if (this.#child || (this.parent as Logger).isLevelEnabled(level)) {
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
  return new LazyChildLogger(logger, bindings, options);
}
