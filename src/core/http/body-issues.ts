/**
 * One 422 naming every offending field, when a route's service checks more than its schema can
 * (a URL's host, calling hours, a CSV's rows). Such a route takes its schema's validation error
 * (`attachValidation`) instead of failing at once, and adds the service's own issues for the
 * fields the schema let through before answering — before any Idempotency-Key is claimed.
 */
import type { FastifyRequest } from 'fastify';
import { ApiError, type FieldIssue } from '../errors.js';

/** The issues the body's schema found; any other refusal (the path, a body that is no object) is thrown as is. */
export function bodySchemaIssues(request: FastifyRequest): FieldIssue[] {
  const error = request.validationError as (Error & { validationContext?: string }) | undefined;
  if (!error) return [];
  const issues = error instanceof ApiError && error.code === 'validation_failed' ? error.details : undefined;
  if (error.validationContext !== 'body' || !Array.isArray(issues)) throw error;
  return issues;
}

/** Whether the schema already refused `field` or something inside it (then the service's check of it is moot). */
export const issuesUnder = (issues: FieldIssue[], field: string): boolean =>
  issues.some((issue) => issue.field === field || issue.field?.startsWith(`${field}.`));
