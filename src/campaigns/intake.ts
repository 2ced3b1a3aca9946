/**
 * Recipient intake, shared by the JSON body and the CSV file: every row is checked before any is
 * stored. A bad number, a listed number or a repeat refuses only its row (reported with its line);
 * a malformed row (an email, a name, a context the call could not carry) refuses the request with
 * its line, so nothing is half-stored.
 */
import { MAX_CONTEXT_DEPTH, MAX_CONTEXT_KEYS } from '../calls/input.js';
import type { Executor } from '../core/db/database.js';
import { type FieldIssue, validationFailed } from '../core/errors.js';
import { PHONE_PATTERN } from '../core/http/schemas.js';
import { checkStorable } from '../core/http/validation.js';
import { existingPhones, listedPhones, type NewRecipient } from './repository.js';
import type { ImportReport, RefusalReason } from './schemas.js';

const PHONE = new RegExp(PHONE_PATTERN);
const SEPARATORS = /[\s.\-()\u00a0]/g;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** A row as uploaded, with where it came from. */
export interface RawRecipient {
  line: number;
  /** Where a problem with it is reported (`recipients.3`, `file`). */
  field: string;
  phone: string;
  name?: string;
  email?: string;
  context?: Record<string, unknown>;
}

/** E.164 from what people type: separators dropped, a leading 00 read as +; undefined if not a number. */
export function normalizePhone(raw: string): string | undefined {
  let phone = raw.trim().replace(SEPARATORS, '');
  if (phone.startsWith('00')) phone = `+${phone.slice(2)}`;
  return PHONE.test(phone) ? phone : undefined;
}

/** The field problems of one row, each naming the row's line. */
function rowIssues(row: RawRecipient): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const at = (field: string, issue: string) =>
    issues.push({ field: `${row.field}.${field}`, issue: `line ${row.line}: ${issue}` });
  if (row.email !== undefined && row.email !== '' && (row.email.length > 254 || !EMAIL.test(row.email)))
    at('email', 'must be a valid email address.');
  if (row.name !== undefined && row.name.trim().length > 200)
    at('name', 'must be at most 200 characters long.');
  const context = row.context ?? {};
  if (Object.keys(context).length > MAX_CONTEXT_KEYS)
    at('context', `must have at most ${MAX_CONTEXT_KEYS} keys.`);
  const storable = checkStorable(context, MAX_CONTEXT_DEPTH + 1);
  if (storable.tooDeep) at('context', `values may be nested at most ${MAX_CONTEXT_DEPTH} levels deep.`);
  else if (storable.issues.length > 0 || checkStorable([row.phone, row.name, row.email], 2).issues.length > 0)
    at('context', 'strings must not contain NUL characters or unpaired surrogates.');
  return issues;
}

export interface Intake {
  accepted: NewRecipient[];
  report: ImportReport;
}

/** Issues reported at most for one request: the first rows' problems tell what is wrong with the file. */
const MAX_ROW_ISSUES = 100;

/** The problems of malformed rows, every field of every row up to MAX_ROW_ISSUES. */
export function rowsIssues(rows: RawRecipient[]): FieldIssue[] {
  return rows.flatMap(rowIssues).slice(0, MAX_ROW_ISSUES);
}

/** 422 `validation_failed` when any row is malformed (before any lookup: the API's check order). */
export function checkRows(rows: RawRecipient[]): void {
  const issues = rowsIssues(rows);
  if (issues.length > 0) throw validationFailed(issues);
}

/**
 * Sorts `rows` into those to store and those refused, in `tx` (which holds the campaign's lock, so
 * the campaign's numbers cannot change meanwhile). Throws 422 when any row is malformed.
 */
export async function takeIn(
  tx: Executor,
  tenantId: string,
  campaignId: string | undefined,
  rows: RawRecipient[],
): Promise<Intake> {
  checkRows(rows);
  const refused: ImportReport['refused'] = { invalid_number: 0, do_not_call: 0, duplicate: 0 };
  const refusals: ImportReport['refusals'] = [];
  const refuse = (row: RawRecipient, reason: RefusalReason) => {
    refused[reason] += 1;
    refusals.push({ line: row.line, phone: row.phone, reason });
  };
  const numbers = rows.map((row) => normalizePhone(row.phone));
  const valid = numbers.filter((phone): phone is string => phone !== undefined);
  const listed = await listedPhones(tx, tenantId, valid);
  const held = campaignId ? await existingPhones(tx, campaignId, valid) : new Set<string>();
  const seen = new Set<string>();
  const accepted: NewRecipient[] = [];
  rows.forEach((row, index) => {
    const phone = numbers[index];
    let reason: RefusalReason | undefined;
    if (phone === undefined) reason = 'invalid_number';
    else if (seen.has(phone) || held.has(phone)) reason = 'duplicate';
    else if (listed.has(phone)) reason = 'do_not_call';
    if (phone !== undefined) seen.add(phone);
    if (reason || phone === undefined) {
      refuse(row, reason ?? 'invalid_number');
      return;
    }
    accepted.push({
      line: row.line,
      phone,
      name: row.name?.trim() ?? '',
      email: row.email ? row.email : null,
      context: row.context ?? {},
    });
  });
  return { accepted, report: { accepted: accepted.length, refused, refusals } };
}
