/**
 * Form handling for the page surfaces: the posted fields as strings, validated with the same
 * TypeBox schema the API route uses (so a page's write is refused exactly when the API's would be),
 * and the issues shown beside the fields of a refused form.
 */
import type { FastifyRequest } from 'fastify';
import { ApiError, type FieldIssue } from '../core/errors.js';
import { checkStorable, MAX_BODY_DEPTH } from '../core/http/validation.js';

export { validated } from '../core/http/validation.js';

/** A one-time message shown on the next page (after a redirect). */
export interface Flash {
  kind: 'success' | 'error';
  message: string;
}

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
