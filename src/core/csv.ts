/**
 * CSV as RFC 4180 writes it (CRLF rows, fields quoted when they hold a comma, a quote or a line
 * break, quotes doubled), and guarded against formula injection: a text cell that a spreadsheet
 * would run as a formula (starting with = + - @, a tab or a carriage return) is prefixed with an
 * apostrophe, unless it is a plain number (`-12`, `+14155550100`: a phone number in E.164 stays as
 * it is), which no spreadsheet runs. Numbers are written as numbers, so a negative balance stays a number.
 */
export type CsvCell = string | number | null;

const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?\d+(\.\d+)?$/;

export function csvCell(value: CsvCell): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const text = FORMULA_START.test(value) && !PLAIN_NUMBER.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv(rows: CsvCell[][]): string {
  return `${rows.map((row) => row.map(csvCell).join(',')).join('\r\n')}\r\n`;
}
