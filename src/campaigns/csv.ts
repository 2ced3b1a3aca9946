/**
 * CSV recipient lists (RFC 4180, as spreadsheets export them): comma-separated, fields optionally
 * in double quotes (a quote inside doubled; commas and line breaks allowed inside), CRLF, LF or CR
 * line ends, an optional UTF-8 byte-order mark. The first record is the header and must name a
 * `phone` column; `name` and `email` columns are used as such; every other column goes into the
 * context (empty cells left out). Blank lines are skipped. Line numbers are the file's, so a
 * record's line is where it starts (a quoted line break makes the next record's line later).
 */
import { validationFailed } from '../core/errors.js';
import type { RawRecipient } from './intake.js';
import { MAX_RECIPIENTS_PER_REQUEST } from './schemas.js';

interface CsvRecord {
  line: number;
  fields: string[];
}

const bad = (issue: string) => validationFailed([{ field: 'file', issue }]);

/** The records of `text`, each with the line it starts on. */
export function parseCsv(text: string): CsvRecord[] {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let line = 1;
  let start = 1;
  let quoted = false;
  let fieldStarted = false;
  const endRecord = () => {
    fields.push(field);
    if (fields.length > 1 || fields[0] !== '' || fieldStarted) records.push({ line: start, fields });
    fields = [];
    field = '';
    fieldStarted = false;
  };
  for (let i = 0; i < source.length; i++) {
    const char = source[i];
    if (quoted) {
      if (char === '"') {
        if (source[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else {
        if (char === '\n' || (char === '\r' && source[i + 1] !== '\n')) line++;
        field += char;
      }
      continue;
    }
    if (char === '"' && field === '') {
      quoted = true;
      fieldStarted = true;
    } else if (char === ',') {
      fields.push(field);
      field = '';
      fieldStarted = true;
    } else if (char === '\r' || char === '\n') {
      if (char === '\r' && source[i + 1] === '\n') i++;
      endRecord();
      line++;
      start = line;
    } else {
      field += char;
    }
  }
  if (quoted) throw bad(`line ${start}: a quoted field is never closed.`);
  if (field !== '' || fields.length > 0 || fieldStarted) endRecord();
  return records;
}

/** The recipients of a CSV file; 422 for a file that is not a usable list. */
export function recipientsFromCsv(text: string): RawRecipient[] {
  const [header, ...records] = parseCsv(text);
  if (!header) throw bad('is empty; the first line must be a header naming a phone column.');
  const names = header.fields.map((name) => name.trim().toLowerCase());
  const phoneAt = names.indexOf('phone');
  if (phoneAt < 0) throw bad('line 1: the header must name a phone column.');
  const repeated = names.find((name, index) => name !== '' && names.indexOf(name) !== index);
  if (repeated) throw bad(`line 1: the column ${repeated} is named twice.`);
  if (records.length > MAX_RECIPIENTS_PER_REQUEST)
    throw bad(`holds ${records.length} rows; at most ${MAX_RECIPIENTS_PER_REQUEST} per request.`);
  return records.map((record) => {
    if (record.fields.length > names.length)
      throw bad(`line ${record.line}: has ${record.fields.length} fields, the header ${names.length}.`);
    const row: RawRecipient = { line: record.line, field: 'file', phone: '', context: {} };
    record.fields.forEach((value, index) => {
      const name = names[index];
      if (index === phoneAt) row.phone = value;
      else if (name === 'name') row.name = value;
      else if (name === 'email') row.email = value.trim();
      else if (value !== '' && name !== '')
        (row.context as Record<string, unknown>)[header.fields[index].trim()] = value;
    });
    return row;
  });
}
