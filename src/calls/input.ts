/**
 * Reads the call-trigger body (docs/api.md). Every problem
 * is a 400 `invalid_request` whose message names the field; a missing name gets exactly
 * `name or full name is required`. Whatever is not phone, email or a name alias is the context.
 */
import { ApiError } from '../core/errors.js';
import { Email, PHONE_ISSUE, PHONE_PATTERN } from '../core/http/schemas.js';
import { checkAgainst, checkStorable } from '../core/http/validation.js';

export const NAME_REQUIRED = 'name or full name is required';
const NAME_KEYS = ['name', 'full_name', 'fullName'] as const;
const RESERVED = new Set<string>([...NAME_KEYS, 'phone', 'email']);
const PHONE = new RegExp(PHONE_PATTERN);
const MAX_NAME = 200;
export const MAX_CONTEXT_KEYS = 200;
export const MAX_CONTEXT_DEPTH = 8;

export interface TriggerInput {
  phone: string;
  name: string;
  email: string | null;
  context: Record<string, unknown>;
  /** What `{key}` placeholders may use: the context, the request's own fields, and `name`. */
  templateValues: Record<string, unknown>;
  /** The body's field names for the call's audit entry (the partner API; the webhook has no actor). */
  auditFields?: string[];
}

const bad = (message: string) => new ApiError('invalid_request', message);

/**
 * Rejects strings PostgreSQL cannot store and context nested deeper than the limit: the body is
 * level 1, so an extra key's value may hold MAX_CONTEXT_DEPTH levels of objects and arrays.
 */
function assertStorable(body: Record<string, unknown>): void {
  const { issues, tooDeep } = checkStorable(body, MAX_CONTEXT_DEPTH + 1);
  if (tooDeep) throw bad(`Context values may be nested at most ${MAX_CONTEXT_DEPTH} levels deep.`);
  if (issues.length > 0) throw bad('Strings must not contain NUL characters or unpaired surrogates.');
}

export function parseTriggerBody(body: Record<string, unknown>): TriggerInput {
  const name = NAME_KEYS.map((key) => body[key]).find(
    (value): value is string => typeof value === 'string' && value.trim() !== '',
  );
  if (name === undefined) throw bad(NAME_REQUIRED);
  for (const key of NAME_KEYS) {
    const value = body[key];
    if (value !== undefined && value !== null && typeof value !== 'string')
      throw bad(`${key} must be a string.`);
  }
  if (name.trim().length > MAX_NAME) throw bad(`name must be at most ${MAX_NAME} characters long.`);

  const phone = body.phone;
  if (phone === undefined || phone === null) throw bad('phone is required.');
  if (typeof phone !== 'string' || !PHONE.test(phone)) {
    throw bad(`phone ${PHONE_ISSUE}`);
  }

  let email: string | null = null;
  if (body.email !== undefined && body.email !== null) {
    if (typeof body.email !== 'string' || checkAgainst(Email, body.email).length > 0) {
      throw bad('email must be a valid email address.');
    }
    email = body.email;
  }

  const context: Record<string, unknown> = {};
  let keys = 0;
  for (const [key, value] of Object.entries(body)) {
    if (RESERVED.has(key)) continue;
    if (++keys > MAX_CONTEXT_KEYS) throw bad(`At most ${MAX_CONTEXT_KEYS} context keys are accepted.`);
    context[key] = value;
  }
  assertStorable(body);

  const templateValues: Record<string, unknown> = { ...context, phone, name: name.trim() };
  for (const key of NAME_KEYS) if (typeof body[key] === 'string') templateValues[key] = body[key];
  templateValues.name = name.trim();
  if (email !== null) templateValues.email = email;
  return { phone, name: name.trim(), email, context, templateValues };
}
