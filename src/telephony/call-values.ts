/**
 * The values a call's `{key}` placeholders are filled with, as the engines receive them: the
 * context, then the built-in phone, name and email (src/calls/input.ts and service.ts fill them the
 * same way), every value a string (objects as JSON, like src/calls/template.ts), absent values
 * left out so the placeholder stays as written, and only keys a placeholder can name (`\w+`).
 */
import type { DialRequest } from './port.js';

export function callValues(request: DialRequest): Record<string, string> {
  const values: Record<string, unknown> = { ...request.context, phone: request.to };
  if (request.name !== '') values.name = request.name;
  if (request.email !== null) values.email = request.email;
  const strings: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) {
    if (!/^\w+$/.test(key) || value === null || value === undefined) continue;
    strings[key] =
      typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  return strings;
}

/** A text of the agent's (the voicemail message) with the call's values, in one pass. */
export function renderForCall(text: string, request: DialRequest): string {
  const values = callValues(request);
  return text.replace(/\{(\w+)\}/g, (placeholder, key: string) =>
    Object.hasOwn(values, key) ? values[key] : placeholder,
  );
}
