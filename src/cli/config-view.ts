/**
 * `voiceplane config show`: the configuration exactly as the server reads it from this
 * environment (src/core/config/config.ts, defaults filled in), with every credential redacted. A field
 * named like a credential (token, secret, password) shows only that it is set; a URL keeps
 * everything but its login and credential-like query parameters (core/security/redact-url.ts); a key shows its key id (a
 * hash that names it without revealing it). A field added to Config later is covered by the same
 * rules without a change here.
 */
import type { Config } from '../core/config/config.js';
import { redactUrl } from '../core/security/redact-url.js';
import { keyIdOf } from '../core/security/secrets.js';
import { keyValueLines } from './output.js';

export const REDACTED = '[redacted]';
const CREDENTIAL_FIELD = /token|secret|password|credential/i;
function redact(value: unknown, credential: boolean): unknown {
  if (value === undefined || value === null) return null;
  if (Buffer.isBuffer(value)) return `${REDACTED} (key id ${keyIdOf(value)})`;
  if (Array.isArray(value)) return value.map((item) => redact(item, credential));
  if (typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        key,
        redact(item, credential || CREDENTIAL_FIELD.test(key)),
      ]),
    );
  }
  if (typeof value === 'string') return credential ? REDACTED : redactUrl(value);
  return value;
}

/** The configuration as a plain JSON value, credentials redacted; unset values are null. */
export function configView(config: Config): Record<string, unknown> {
  return redact(config, false) as Record<string, unknown>;
}

function flatten(value: unknown, prefix: string, into: [string, unknown][]): void {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0) into.push([prefix, '{}']);
    for (const [key, item] of entries) flatten(item, prefix ? `${prefix}.${key}` : key, into);
    return;
  }
  if (Array.isArray(value)) {
    const item = (entry: unknown) =>
      entry !== null && typeof entry === 'object' ? JSON.stringify(entry) : String(entry);
    into.push([prefix, value.length === 0 ? '(none)' : value.map(item).join(', ')]);
  } else into.push([prefix, value === null ? '(not set)' : value]);
}

/** One `field  value` line per setting, nested fields as `http.headersTimeoutMs`. */
export function configLines(view: Record<string, unknown>): string[] {
  const pairs: [string, unknown][] = [];
  flatten(view, '', pairs);
  return keyValueLines(pairs);
}
