/**
 * Form handling for console pages: the posted fields as strings, validated with the same TypeBox
 * schema the API route uses (so a console write is refused exactly when the API's would be), and
 * the redirect-after-post with a one-time flash message.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type FieldIssue, validationFailed } from '../core/errors.js';
import { checkAgainst, checkStorable, MAX_BODY_DEPTH } from '../core/http/validation.js';
import { FLASH_COOKIE, type Flash, setFlash } from './cookies.js';

export type FormFields = Record<string, string | string[] | undefined>;

/** The posted form (application/x-www-form-urlencoded), without the CSRF field. */
export function formOf(request: FastifyRequest): FormFields {
  const body = request.body;
  if (!body || typeof body !== 'object') return {};
  const { _csrf, ...fields } = body as FormFields;
  return fields;
}

/** One text field: trimmed, and undefined when empty (an optional field left blank). */
export function textField(fields: FormFields, name: string): string | undefined {
  const value = fields[name];
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  return text ? text : undefined;
}

/** Every value of a repeated field (checkboxes). */
export function listField(fields: FormFields, name: string): string[] {
  const value = fields[name];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).filter((v) => v !== '');
}

/** A whole-number field: its number, or the text as typed (so the schema reports it as not a number). */
export function integerField(fields: FormFields, name: string): number | string | undefined {
  const text = textField(fields, name);
  if (text === undefined) return undefined;
  return /^-?\d+$/.test(text) ? Number(text) : text;
}

/**
 * Validates `data` as the API's validator does: what PostgreSQL cannot store (NUL characters,
 * unpaired surrogates, nesting too deep), then the API's schema; throws 422 validation_failed with
 * field issues.
 */
export function validated<S extends TSchema>(schema: S, data: unknown): Static<S> {
  const storable = checkStorable(data, MAX_BODY_DEPTH);
  if (storable.tooDeep) throw validationFailed([{ issue: 'is nested too deeply.' }]);
  const issues = [...checkAgainst(schema, data), ...storable.issues];
  if (issues.length > 0) throw validationFailed(issues);
  return data as Static<S>;
}

/**
 * The query and path parameters of every console request, refused (422 page) when they hold text
 * PostgreSQL cannot store; search boxes and filters then never reach a query with a NUL in it.
 */
export function checkParameters(request: FastifyRequest): void {
  for (const part of [request.query, request.params]) {
    const storable = checkStorable(part, MAX_BODY_DEPTH);
    if (storable.tooDeep || storable.issues.length > 0) {
      const detail = storable.issues[0];
      throw new ApiError(
        'validation_failed',
        detail?.field
          ? `The address is not valid: ${detail.field} ${detail.issue}`
          : 'The address holds characters that cannot be used.',
        storable.issues,
      );
    }
  }
}

/** Field name → message, for showing a refused form again beside its fields. */
export function fieldIssues(error: unknown): Record<string, string> {
  if (!(error instanceof ApiError) || !Array.isArray(error.details)) return {};
  const issues: Record<string, string> = {};
  for (const issue of error.details as FieldIssue[]) {
    if (issue && typeof issue.field === 'string') issues[issue.field.split('.')[0]] ??= issue.issue;
  }
  return issues;
}

/** 303 to `url` (a console path) with a message shown once on the next page. */
export function redirectWithFlash(
  reply: FastifyReply,
  url: string,
  message: string,
  kind: Flash['kind'] = 'success',
) {
  setFlash(reply, { kind, message });
  return reply.code(303).redirect(url);
}

/** Reads and clears the flash the previous request left. */
export function takeFlash(request: FastifyRequest, reply: FastifyReply): Flash | undefined {
  const text = request.cookies[FLASH_COOKIE];
  if (!text) return undefined;
  reply.clearCookie(FLASH_COOKIE, { path: '/console' });
  try {
    const value = JSON.parse(text) as Flash;
    if ((value.kind === 'success' || value.kind === 'error') && typeof value.message === 'string') {
      return { kind: value.kind, message: value.message.slice(0, 500) };
    }
  } catch {}
  return undefined;
}

/** Only a path inside the console is a place to go back to after sign-in. */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/console(\/[^/\\]|$|\?)/.test(next) && !next.includes('//')
    ? next
    : '/console';
}
