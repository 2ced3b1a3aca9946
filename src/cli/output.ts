/** How commands print for a person: aligned tables and lines with nothing a terminal would obey. */

/**
 * The text with control characters (a newline, an escape sequence in a tenant's name) and
 * bidirectional overrides replaced by `?`: a value stored through the API must not move the cursor or recolour the operator's terminal.
 */
export function printable(value: unknown): string {
  return String(value ?? '').replace(/[\p{Cc}\u202A-\u202E\u2066-\u2069]/gu, '?');
}

/** Columns padded to their widest cell; the last column is not padded. */
export function table(headers: readonly string[], rows: readonly (readonly unknown[])[]): string[] {
  const cells = [headers.map(printable), ...rows.map((row) => row.map(printable))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => row[column]?.length ?? 0)));
  return cells.map((row) =>
    row
      .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column])))
      .join('  ')
      .trimEnd(),
  );
}

/** `key  value` lines, the keys aligned. */
export function keyValueLines(pairs: readonly (readonly [string, unknown])[]): string[] {
  const width = Math.max(0, ...pairs.map(([key]) => key.length));
  return pairs.map(([key, value]) => `${key.padEnd(width)}  ${printable(value)}`.trimEnd());
}

/** A count with its noun: `1 tenant`, `3 tenants`. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
