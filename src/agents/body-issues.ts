/**
 * One 422 naming every offending field of an agent body. The create and update routes take their
 * schema's validation error (`attachValidation`) and run this first (a route preHandler, so before
 * an Idempotency-Key is claimed): when the schema refused the body, the settings it let through
 * are checked as the service would (calling hours) and every issue goes out together. A body the
 * schema accepted goes on to the service, which checks its settings the same way.
 */
import type { FastifyRequest } from 'fastify';
import { validationFailed } from '../core/errors.js';
import { bodySchemaIssues, issuesUnder } from '../core/http/body-issues.js';
import { checkSettings } from './service.js';
import type { AgentSettings } from './settings.js';

export async function refuseWithEveryIssue(request: FastifyRequest): Promise<void> {
  const issues = bodySchemaIssues(request);
  if (issues.length === 0) return;
  const settings = (request.body as { settings?: unknown } | undefined)?.settings;
  if (typeof settings === 'object' && settings !== null && !issuesUnder(issues, 'settings'))
    issues.push(...checkSettings(settings as AgentSettings));
  throw validationFailed(issues);
}
