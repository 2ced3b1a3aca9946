/**
 * One 422 naming every offending field of a campaign request (a create, added recipients), JSON or
 * CSV. The two routes take their schema's validation error (`attachValidation`); this hook, run
 * before the handler and before an Idempotency-Key is claimed, reports the form's own problems
 * (upload.ts) and the schema's, with what only the service checks of the fields the schema let
 * through (the calling hours, the rows): all together. A request the schema and the form accepted
 * goes on to the service, which checks its settings and rows the same way.
 */
import type { FastifyRequest } from 'fastify';
import { type FieldIssue, validationFailed } from '../core/errors.js';
import { bodySchemaIssues, issuesUnder } from '../core/http/body-issues.js';
import { type RawRecipient, rowsIssues } from './intake.js';
import { jsonRows, settingsIssues } from './service.js';
import { formIssues, uploadedRows } from './upload.js';

/** The rows the request carries that can be read: the file's, or the listed rows the schema accepted. */
function rowsOf(request: FastifyRequest, issues: FieldIssue[]): RawRecipient[] {
  const uploaded = uploadedRows(request);
  if (uploaded) return uploaded;
  const recipients = (request.body as { recipients?: unknown } | undefined)?.recipients;
  if (!Array.isArray(recipients) || issues.some((issue) => issue.field === 'recipients')) return [];
  return jsonRows(recipients).filter((row) => !issuesUnder(issues, row.field));
}

export async function refuseWithEveryIssue(request: FastifyRequest): Promise<void> {
  const issues = [...formIssues(request), ...bodySchemaIssues(request)];
  if (issues.length === 0) return;
  const body = (request.body ?? {}) as { calling_hours?: unknown };
  if (
    typeof body.calling_hours === 'object' &&
    body.calling_hours !== null &&
    !issuesUnder(issues, 'calling_hours')
  )
    issues.push(...settingsIssues(body as Parameters<typeof settingsIssues>[0]));
  issues.push(...rowsIssues(rowsOf(request, issues)));
  throw validationFailed(issues);
}
