/**
 * Stripe's request parameters as the engine receives them: from the simulated adapter (JavaScript
 * values) or from the Stripe-protocol test server (form-decoded strings, objects and arrays). Each
 * is read through a helper that checks its shape, and bad input gets Stripe's error.
 */
import type { Metadata, StoredError } from './objects.js';

export type StripeParams = Record<string, unknown>;

/** A Stripe-shaped error: HTTP status plus the `error` object of Stripe's answer. */
export class EngineError extends Error {
  constructor(
    readonly status: number,
    readonly type: StoredError['type'],
    readonly code: string | undefined,
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = 'EngineError';
  }
  toStripe() {
    return {
      error: {
        type: this.type,
        message: this.message,
        ...(this.code ? { code: this.code } : {}),
        ...(this.param ? { param: this.param } : {}),
      },
    };
  }
}

export function missing(kind: string, id: string, param = 'id'): EngineError {
  return new EngineError(404, 'invalid_request_error', 'resource_missing', `No such ${kind}: '${id}'`, param);
}

export function invalid(message: string, param?: string): EngineError {
  return new EngineError(400, 'invalid_request_error', 'parameter_invalid', message, param);
}

/** A nested parameter object (`invoice_settings[...]`), or undefined when absent or not an object. */
export function objectParam(value: unknown): StripeParams | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as StripeParams)
    : undefined;
}

/** A list parameter (`items[0][...]`); anything else reads as an empty list. */
export function listParam(value: unknown): StripeParams[] {
  return Array.isArray(value) ? value.map((entry) => objectParam(entry) ?? {}) : [];
}

export function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

export function integerParam(value: unknown, param: string, fallback?: number): number {
  if (value === undefined || value === '') {
    if (fallback !== undefined) return fallback;
    throw new EngineError(
      400,
      'invalid_request_error',
      'parameter_missing',
      `Missing required param: ${param}.`,
      param,
    );
  }
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(n) || n < 0) {
    throw new EngineError(
      400,
      'invalid_request_error',
      'parameter_invalid_integer',
      `Invalid integer: ${String(value)}`,
      param,
    );
  }
  return n;
}

export function metadataOf(value: unknown): Metadata {
  if (!value || typeof value !== 'object') return {};
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]));
}

/** A page of a Stripe list (`GET /v1/<objects>`): the first `limit` of `data`, newest first as given. */
export interface StripeList<T, Url extends string> {
  object: 'list';
  data: T[];
  has_more: boolean;
  url: Url;
}

export function stripeList<T, Url extends string>(data: T[], limit: number, url: Url): StripeList<T, Url> {
  return { object: 'list', data: data.slice(0, limit), has_more: data.length > limit, url };
}
