/**
 * One 422 naming every offending field of an agent body. The create and update routes take their
 * schema's validation error (`attachValidation`) and run this first (a route preHandler, so before
 * an Idempotency-Key is claimed): when the schema refused the body, the settings and configuration
 * fields it let through are checked as the service would (calling hours; tool schemas, URLs and
 * names; enum values) and every issue goes out together. A body the schema accepted goes on to
 * the service, which checks the same way.
 */
import type { FastifyRequest } from 'fastify';
import { validationFailed } from '../core/errors.js';
import { bodySchemaIssues, issuesUnder } from '../core/http/body-issues.js';
import type { AgentConfigInput } from './config.js';
import { checkSettings } from './service.js';
import type { AgentSettings } from './settings.js';

export function refuseWithEveryIssue(agents: {
  checkConfig(
    input: AgentConfigInput,
    skip: (field: string) => boolean,
  ): Promise<{ field?: string; issue: string }[]>;
}) {
  return async (request: FastifyRequest): Promise<void> => {
    const issues = bodySchemaIssues(request);
    if (issues.length === 0) return;
    const body = request.body as { settings?: unknown; config?: unknown } | undefined;
    const settings = body?.settings;
    if (typeof settings === 'object' && settings !== null && !issuesUnder(issues, 'settings'))
      issues.push(...checkSettings(settings as AgentSettings));
    const config = body?.config;
    if (typeof config === 'object' && config !== null && !Array.isArray(config)) {
      const refused = [...issues];
      issues.push(
        ...(await agents.checkConfig(config as AgentConfigInput, (field) => issuesUnder(refused, field))),
      );
    }
    throw validationFailed(issues);
  };
}
