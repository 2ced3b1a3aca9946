/**
 * One 422 naming every offending field of a brand change. The operator's PATCH takes its schema's
 * validation error (`attachValidation`) and runs this first: when the schema refused the body, the
 * logo URL it let through is checked as the service would, and every issue goes out together. A
 * body the schema accepted goes on to the service, which checks it the same way.
 */
import type { FastifyRequest } from 'fastify';
import { validationFailed } from '../core/errors.js';
import { bodySchemaIssues } from '../core/http/body-issues.js';
import { brandingIssues } from './service.js';

export async function refuseWithEveryIssue(request: FastifyRequest): Promise<void> {
  const issues = bodySchemaIssues(request);
  if (issues.length === 0) return;
  const logoUrl = (request.body as { logo_url?: unknown } | undefined)?.logo_url;
  if (typeof logoUrl === 'string' && !issues.some((issue) => issue.field === 'logo_url'))
    issues.push(...brandingIssues({ logo_url: logoUrl }));
  throw validationFailed(issues);
}
