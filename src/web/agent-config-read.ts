/**
 * An agent's configuration form read back into the API's `config` body (the console's and the
 * portal's editors post the same fields, src/web/agent-config-fields.ts). Row editors post
 * `tools_<i>_<field>`; a row left wholly blank is no row. What the form alone can tell (a JSON
 * Schema that is not JSON, a number that is not one) is reported by field path before the
 * service is asked; the rest is the service's own 422, shown beside the same fields.
 */
import { ApiError, type FieldIssue } from '../core/errors.js';
import type { FormFields } from './forms.js';

export const ROW_LIMITS = { transfer: 5, tools: 10, analysis: 20 } as const;
/** Blank rows offered under the filled ones, so a row is added without script. */
export const BLANK_ROWS = 1;

const text = (fields: FormFields, name: string): string => {
  const value = fields[name];
  return ((Array.isArray(value) ? value[0] : value) ?? '').trim();
};

/** A number as typed: its value, or the text (the schema then names the field). */
function numeric(value: string): number | string | undefined {
  if (value === '') return undefined;
  return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
}

/** `provider:id` of a picker, split at the first colon. */
export function pickerValue(value: string): { provider: string; id: string } | undefined {
  const at = value.indexOf(':');
  if (at <= 0) return undefined;
  return { provider: value.slice(0, at), id: value.slice(at + 1) };
}

function rows(fields: FormFields, prefix: string, names: string[], limit: number): Record<string, string>[] {
  const found: Record<string, string>[] = [];
  for (let index = 0; index < limit + BLANK_ROWS; index++) {
    const row = Object.fromEntries(names.map((name) => [name, text(fields, `${prefix}_${index}_${name}`)]));
    // A select always holds a value (an analysis field's type): it alone does not make a row.
    if (names.some((name) => name !== 'type' && row[name] !== '')) found.push(row);
  }
  return found;
}

export interface ConfigRead {
  config: Record<string, unknown>;
  /** Issues found reading the form, by the API's dotted path (`config.tools.0.parameters`). */
  issues: Record<string, string>;
}

export function configFromForm(fields: FormFields): ConfigRead {
  const issues: Record<string, string> = {};
  const config: Record<string, unknown> = {};
  const voiceProvider = text(fields, 'voice_provider');
  const voiceId = text(fields, 'voice_id');
  if (voiceProvider || voiceId) config.voice = { provider: voiceProvider, voice_id: voiceId };
  const language = text(fields, 'language');
  if (language) config.language = language;
  const model = pickerValue(text(fields, 'model'));
  const temperature = numeric(text(fields, 'temperature'));
  if (model || temperature !== undefined) {
    config.model = {
      ...(model ? { provider: model.provider, name: model.id } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
    };
  }
  for (const name of ['max_duration_seconds', 'silence_timeout_seconds']) {
    const value = numeric(text(fields, name));
    if (value !== undefined) config[name] = value;
  }
  config.end_call_phrases = text(fields, 'end_call_phrases')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  const action = text(fields, 'voicemail_action');
  const message = text(fields, 'voicemail_message');
  config.voicemail =
    action === 'hang_up' || action === 'leave_message' ? { action, ...(message ? { message } : {}) } : null;
  if (action === 'leave_message' && !message) {
    issues['config.voicemail.message'] = 'Write the message to leave, or choose to hang up.';
  }
  config.transfer = rows(fields, 'transfer', ['phone_number', 'description'], ROW_LIMITS.transfer);
  config.tools = rows(
    fields,
    'tools',
    ['name', 'description', 'url', 'timeout_seconds', 'parameters'],
    ROW_LIMITS.tools,
  ).map((row, index) => {
    let parameters: unknown = { type: 'object', properties: {} };
    if (row.parameters !== '') {
      try {
        parameters = JSON.parse(row.parameters);
      } catch (error) {
        issues[`config.tools.${index}.parameters`] =
          `is not valid JSON (${error instanceof Error ? error.message : 'unreadable'}).`;
      }
    }
    if (parameters === null || typeof parameters !== 'object' || Array.isArray(parameters)) {
      issues[`config.tools.${index}.parameters`] ??= 'must be a JSON Schema object, e.g. {"type": "object"}.';
    } else if ((parameters as { type?: unknown }).type !== 'object') {
      issues[`config.tools.${index}.parameters`] ??= 'must be a JSON Schema with "type": "object".';
    }
    return {
      name: row.name,
      description: row.description,
      url: row.url,
      timeout_seconds: numeric(row.timeout_seconds) ?? 10,
      parameters,
    };
  });
  const successCriteria = text(fields, 'analysis_success_criteria');
  config.analysis = {
    summary: text(fields, 'analysis_summary') === 'on',
    success_criteria: successCriteria || null,
    data: rows(fields, 'analysis', ['name', 'type', 'description', 'values'], ROW_LIMITS.analysis).map(
      (row) => {
        const values = row.values
          .split(',')
          .map((value) => value.trim())
          .filter(Boolean);
        return {
          name: row.name,
          type: row.type || 'string',
          description: row.description,
          ...(row.type === 'enum' || values.length > 0 ? { values } : {}),
        };
      },
    ),
  };
  return { config, issues };
}

/**
 * The id of the form control an issue's path belongs to (`config.tools.0.parameters` →
 * `tools_0_parameters`, `config.model.name` → `model`), so a refusal is shown beside its field.
 */
export function controlOf(path: string): string {
  const parts = path.replace(/^\/?config[./]/, '').split(/[./]/);
  const [head, second, third] = parts;
  if (head === 'voice') return second === 'voice_id' ? 'voice_id' : 'voice_provider';
  if (head === 'model') return second === 'temperature' ? 'temperature' : 'model';
  if (head === 'voicemail') return second === 'message' ? 'voicemail_message' : 'voicemail_action';
  if (head === 'end_call_phrases') return 'end_call_phrases';
  if (head === 'analysis') {
    if (second === 'data' && third !== undefined && /^\d+$/.test(third)) {
      return `analysis_${third}_${parts[3] ?? 'name'}`;
    }
    return second === 'success_criteria' ? 'analysis_success_criteria' : 'analysis_summary';
  }
  if ((head === 'tools' || head === 'transfer') && second !== undefined && /^\d+$/.test(second)) {
    const column = third ?? (head === 'tools' ? 'name' : 'phone_number');
    return `${head}_${second}_${column === 'parameters' ? 'parameters' : column}`;
  }
  return head;
}

/** Issues by dotted path → issues by the control that shows them (the first issue wins). */
export function issuesByControl(issues: Record<string, string>): Record<string, string> {
  const byControl: Record<string, string> = {};
  for (const [path, issue] of Object.entries(issues)) byControl[controlOf(path)] ??= issue;
  return byControl;
}

/** Every issue of a refused write by the API's own path (`config.tools.0.parameters`). */
export function pathIssues(error: unknown): Record<string, string> {
  const issues: Record<string, string> = {};
  if (!(error instanceof ApiError) || !Array.isArray(error.details)) return issues;
  for (const issue of error.details as FieldIssue[]) {
    if (issue && typeof issue.field === 'string') issues[issue.field] ??= issue.issue;
  }
  return issues;
}
