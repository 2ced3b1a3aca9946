/**
 * `{key}` placeholders (single braces, word characters) in an agent's prompt and welcome
 * message. One pass: inserted values are text and are never expanded again, and a placeholder
 * without a value stays as written.
 */
const PLACEHOLDER = /\{(\w+)\}/g;

function asText(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export function renderTemplate(template: string, values: Record<string, unknown>): string {
  return template.replace(PLACEHOLDER, (placeholder, key: string) => {
    if (!Object.hasOwn(values, key)) return placeholder;
    return asText(values[key]) ?? placeholder;
  });
}

/**
 * An inbound call's prompt and welcome message: `{phone}` is the caller's number; every other
 * placeholder renders empty (an inbound call brings no name or context).
 */
export function renderInboundTemplate(template: string, caller: string): string {
  return template.replace(PLACEHOLDER, (_placeholder, key: string) => (key === 'phone' ? caller : ''));
}
