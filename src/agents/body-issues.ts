/**
 * One 422 naming every offending field of an agent body. The create and update routes take their
 * schema's validation error (`attachValidation`) and run this first (a route preHandler, so before
 * an Idempotency-Key is claimed): when the schema refused the body, the settings it let through
 * are checked as the service would (calling hours) and every issue goes out together. A body the
 * schema accepted goes on to the service, which checks its settings the same way.
 */
import type { FastifyRequest } from 'fastify';
import { ApiError, type FieldIssue, validationFailed } from '../core/errors.js';
import { checkSettings } from './service.js';
import type { AgentSettings } from './settings.js';

/** The issues the body's schema found; another refusal (the path, a body that is no object) as is. */
function bodySchemaIssues(request: FastifyRequest): FieldIssue[] {
  const error = request.validationError as (Error & { validationContext?: string }) | undefined;
  if (!error) return [];
  const issues = error instanceof ApiError && error.code === 'validation_failed' ? error.details : undefined;
  if (error.validationContext !== 'body' || !Array.isArray(issues)) throw error;
  return issues;
}

const under = (issues: FieldIssue[], field: string) =>
  issues.some((issue) => issue.field === field || issue.field?.startsWith(`${field}.`));

export async function refuseWithEveryIssue(request: FastifyRequest): Promise<void> {
  const issues = bodySchemaIssues(request);
  if (issues.length === 0) return;
  const settings = (request.body as { settings?: unknown } | undefined)?.settings;
  if (typeof settings === 'object' && settings !== null && !under(issues, 'settings'))
    issues.push(...checkSettings(settings as AgentSettings));
  throw validationFailed(issues);
}
