import type { components } from './openapi.js';

/** The documented error codes; a proxy in front of the service may answer with something else. */
export type ErrorCode = components['schemas']['ErrorCode'];
/** The envelope's `details`: the invalid fields, the missing scopes, … as the document types them. */
export type ErrorDetails = components['schemas']['ErrorEnvelope']['error']['details'];

/** The service answered with an error: its envelope's code, message and details, and the request id. */
export class VoiceplaneError extends Error {
  override readonly name = 'VoiceplaneError';
  /** `unexpected_response` when the answer was not the service's envelope (e.g. a proxy's 502 page). */
  readonly code: ErrorCode | 'unexpected_response';
  readonly status: number;
  readonly details: ErrorDetails | undefined;
  /** Quote it to support: it names this request in the service's logs. */
  readonly requestId: string | undefined;
  readonly headers: Headers;

  constructor(options: {
    status: number;
    code: ErrorCode | 'unexpected_response';
    message: string;
    details?: ErrorDetails;
    requestId?: string;
    headers: Headers;
  }) {
    super(options.message);
    this.status = options.status;
    this.code = options.code;
    this.details = options.details;
    this.requestId = options.requestId;
    this.headers = options.headers;
  }
}

/** No answer: the connection failed or the request timed out. A write may or may not have happened. */
export class VoiceplaneConnectionError extends Error {
  override readonly name = 'VoiceplaneConnectionError';
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
  }
}

/** An event whose signature, timestamp or body does not check out: do not act on it. */
export class VoiceplaneSignatureError extends Error {
  override readonly name = 'VoiceplaneSignatureError';
}
