/**
 * CSV uploads (`multipart/form-data`) on the campaign routes only: @fastify/multipart is registered
 * in their plugin's scope, so every other partner route still answers 415 to a form. Before
 * validation, the form's fields become the JSON body the route's schema checks (numbers and the
 * JSON-valued fields parsed; an empty `recipients`), and the file's rows, with their lines, are
 * kept on the request for the handler; after validation they join the body, so the Idempotency-Key
 * fingerprint covers them.
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, invalidRequest, validationFailed } from '../core/errors.js';
import { recipientsFromCsv } from './csv.js';
import type { RawRecipient } from './intake.js';

const uploads = new WeakMap<FastifyRequest, RawRecipient[]>();
const JSON_FIELDS = new Set(['calling_hours', 'retry']);
const INTEGER_FIELDS = new Set(['max_concurrent_calls']);
const MAX_FIELD_BYTES = 64 * 1024;

/** The rows of the request's CSV file; undefined for a JSON request. */
export function uploadedRows(request: FastifyRequest): RawRecipient[] | undefined {
  return uploads.get(request);
}

function fieldValue(name: string, value: string): unknown {
  if (INTEGER_FIELDS.has(name)) return /^\d{1,9}$/.test(value.trim()) ? Number(value) : value;
  if (!JSON_FIELDS.has(name)) return value;
  try {
    return JSON.parse(value);
  } catch {
    throw validationFailed([{ field: name, issue: 'must be JSON text.' }]);
  }
}

async function readForm(request: FastifyRequest): Promise<void> {
  const body: Record<string, unknown> = { recipients: [] };
  let file: string | undefined;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file' || file !== undefined) {
          part.file.resume();
          throw validationFailed([
            { field: part.fieldname, issue: 'only one file, in the field file, is read.' },
          ]);
        }
        file = (await part.toBuffer()).toString('utf8');
      } else if (part.fieldname in body) {
        throw validationFailed([{ field: part.fieldname, issue: 'is given twice.' }]);
      } else {
        body[part.fieldname] = fieldValue(part.fieldname, String(part.value));
      }
    }
  } catch (error) {
    if (error instanceof ApiError) throw error;
    const code = (error as { code?: string }).code ?? '';
    if (code === 'FST_REQ_FILE_TOO_LARGE' || code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT')
      throw invalidRequest('The upload is too large.', 413);
    throw invalidRequest('The multipart/form-data body could not be read.');
  }
  if (file === undefined) throw validationFailed([{ field: 'file', issue: 'is required (a CSV file).' }]);
  uploads.set(request, recipientsFromCsv(file));
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
