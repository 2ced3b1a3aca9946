/**
 * CSV uploads (`multipart/form-data`) on the campaign routes only: @fastify/multipart is registered
 * in their plugin's scope, so every other partner route still answers 415 to a form. Before
 * validation, the form's fields become the JSON body the route's schema checks (numbers and the
 * JSON-valued fields parsed; an empty `recipients`), and the file's rows, with their lines, are
 * kept on the request for the handler; after validation they join the body, so the Idempotency-Key
 * fingerprint covers them. What is wrong with the form itself (a field given twice, JSON text that
 * is not, a second file, no file, a file that is not CSV) is kept too, every problem of it, and
 * reported with the schema's issues by the route (body-issues.ts).
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, type FieldIssue, invalidRequest } from '../core/errors.js';
import { recipientsFromCsv } from './csv.js';
import type { RawRecipient } from './intake.js';

const uploads = new WeakMap<FastifyRequest, RawRecipient[]>();
const formProblems = new WeakMap<FastifyRequest, FieldIssue[]>();
const JSON_FIELDS = new Set(['calling_hours', 'retry']);
const INTEGER_FIELDS = new Set(['max_concurrent_calls']);
const MAX_FIELD_BYTES = 64 * 1024;

/** The rows of the request's CSV file; undefined for a JSON request. */
export function uploadedRows(request: FastifyRequest): RawRecipient[] | undefined {
  return uploads.get(request);
}

/** What is wrong with the request's form itself; empty for a JSON request or a good form. */
export function formIssues(request: FastifyRequest): FieldIssue[] {
  return formProblems.get(request) ?? [];
}

/** The field's value as the schema reads it, or its problem. */
function fieldValue(name: string, value: string): { value: unknown } | { issue: string } {
  if (INTEGER_FIELDS.has(name)) return { value: /^\d{1,9}$/.test(value.trim()) ? Number(value) : value };
  if (!JSON_FIELDS.has(name)) return { value };
  try {
    return { value: JSON.parse(value) };
  } catch {
    return { issue: 'must be JSON text.' };
  }
}

async function readForm(request: FastifyRequest): Promise<void> {
  const body: Record<string, unknown> = { recipients: [] };
  const issues: FieldIssue[] = [];
  const seen = new Set<string>();
  let file: string | undefined;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file' || file !== undefined) {
          part.file.resume();
          issues.push({ field: part.fieldname, issue: 'only one file, in the field file, is read.' });
          continue;
        }
        file = (await part.toBuffer()).toString('utf8');
      } else if (seen.has(part.fieldname)) {
        issues.push({ field: part.fieldname, issue: 'is given twice.' });
      } else {
        seen.add(part.fieldname);
        const read = fieldValue(part.fieldname, String(part.value));
        if ('issue' in read) issues.push({ field: part.fieldname, issue: read.issue });
        else body[part.fieldname] = read.value;
      }
    }
  } catch (error) {
    const code = (error as { code?: string }).code ?? '';
    if (code === 'FST_REQ_FILE_TOO_LARGE' || code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT')
      throw invalidRequest('The upload is too large.', 413);
    throw invalidRequest('The multipart/form-data body could not be read.');
  }
  if (file === undefined) issues.push({ field: 'file', issue: 'is required (a CSV file).' });
  else {
    try {
      uploads.set(request, recipientsFromCsv(file));
    } catch (error) {
      // A file that is not CSV as documented: its one problem (what follows it cannot be read).
      if (!(error instanceof ApiError) || !Array.isArray(error.details)) throw error;
      issues.push(...error.details);
    }
  }
  if (issues.length > 0) formProblems.set(request, issues);
  request.body = body;
}

/** Registers the multipart parser in the campaign routes' scope, with its limits. */
export async function registerUploads(app: FastifyInstance, maxFileBytes: number): Promise<void> {
  await app.register(multipart, {
    limits: { fileSize: maxFileBytes, files: 1, fields: 20, fieldSize: MAX_FIELD_BYTES, parts: 21 },
  });
  app.addHook('preValidation', async (request) => {
    if (request.isMultipart()) await readForm(request);
  });
  // After validation, before the Idempotency-Key's fingerprint (a route hook, so it runs later).
  app.addHook('preHandler', async (request) => {
    const rows = uploads.get(request);
    if (rows) request.body = { ...(request.body as object), recipients: rows };
  });
}
