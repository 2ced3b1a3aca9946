/**
 * The rules of an agent's configuration beyond its schema (docs/agents.md): what a create or
 * update may send (tool schemas and URLs, unique names, enum values), how an update merges into
 * the draft, what the configured voice engine can run (checked at publish), and when a draft is
 * the same as the published version.
 */
import type { AgentCatalog } from '../core/config/agents.js';
import type { FieldIssue } from '../core/errors.js';
import { checkHost, type HostResolver } from '../core/security/outbound-addresses.js';
import { engineConfigProblems } from '../telephony/config-problems.js';
import {
  type AgentConfig,
  type AgentConfigInput,
  CONFIG_LIMITS,
  type ConfigDefaults,
  type DraftConfig,
} from './config.js';

export interface OutboundGuard {
  /** WEBHOOK_ALLOW_PRIVATE: tool URLs may be http and private, loopback or link-local. */
  allowPrivate: boolean;
  resolve: HostResolver;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A tool's URL: https (http too where private targets are allowed), no credentials, no private host. */
async function checkToolUrl(raw: string, guard: OutboundGuard): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL.';
  }
  const schemes = guard.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    return guard.allowPrivate ? 'must be an http or https URL.' : 'must be an https URL.';
  }
  if (url.username || url.password) return 'must not carry credentials.';
  // A name that does not resolve now is accepted: the guard runs again before every tool request.
  const host = await checkHost(url.hostname, guard);
  return !host.ok && host.reason === 'forbidden' ? host.issue : undefined;
}

/**
 * What the schema cannot say about a configuration input, each issue naming its field
 * (`config.tools.1.url`). `skip` says which fields the schema already refused.
 */
export async function checkConfigInput(
  input: AgentConfigInput,
  guard: OutboundGuard,
  skip: (field: string) => boolean = () => false,
): Promise<FieldIssue[]> {
  const issues: FieldIssue[] = [];
  const tools = Array.isArray(input.tools) ? input.tools : [];
  const seenTools = new Set<string>();
  for (const [index, tool] of tools.entries()) {
    const at = `config.tools.${index}`;
    if (!isPlainObject(tool)) continue;
    if (typeof tool.name === 'string' && !skip(`${at}.name`)) {
      if (seenTools.has(tool.name))
        issues.push({ field: `${at}.name`, issue: `repeats the tool name "${tool.name}".` });
      seenTools.add(tool.name);
    }
    if (isPlainObject(tool.parameters) && !skip(`${at}.parameters`)) {
      if (tool.parameters.type !== 'object') {
        issues.push({ field: `${at}.parameters`, issue: 'must be a JSON Schema with "type": "object".' });
      } else if (Buffer.byteLength(JSON.stringify(tool.parameters)) > CONFIG_LIMITS.toolParametersBytes) {
        issues.push({ field: `${at}.parameters`, issue: 'must be at most 8 KB as JSON.' });
      }
    }
    if (typeof tool.url === 'string' && !skip(`${at}.url`)) {
      const issue = await checkToolUrl(tool.url, guard);
      if (issue) issues.push({ field: `${at}.url`, issue });
    }
  }
  const data = isPlainObject(input.analysis) && Array.isArray(input.analysis.data) ? input.analysis.data : [];
  const seenFields = new Set<string>();
  for (const [index, field] of data.entries()) {
    const at = `config.analysis.data.${index}`;
    if (!isPlainObject(field)) continue;
    if (typeof field.name === 'string' && !skip(`${at}.name`)) {
      if (seenFields.has(field.name))
        issues.push({ field: `${at}.name`, issue: `repeats the field name "${field.name}".` });
      seenFields.add(field.name);
    }
    if (skip(`${at}.type`) || skip(`${at}.values`)) continue;
    if (field.type === 'enum' && field.values === undefined) {
      issues.push({ field: `${at}.values`, issue: 'is required for an enum field.' });
    } else if (field.type !== 'enum' && field.values !== undefined) {
      issues.push({ field: `${at}.values`, issue: 'is only allowed for an enum field.' });
    }
  }
  const voicemail = input.voicemail;
  const leaveMessage = isPlainObject(voicemail) && voicemail.action === 'leave_message';
  if (leaveMessage && voicemail.message === undefined && !skip('config.voicemail')) {
    issues.push({
      field: 'config.voicemail.message',
      issue: 'is required when the action is leave_message.',
    });
  }
  return issues;
}

/**
 * The draft's stored configuration after an update: the given fields replace the draft's; `model`
 * and `analysis` merge key by key (onto the default model when the draft has none); `null` drops
 * `voice` or `model` back to the default and clears `analysis.success_criteria`.
 */
export function mergeConfig(
  stored: DraftConfig,
  input: AgentConfigInput,
  defaults: ConfigDefaults,
): DraftConfig {
  const next: DraftConfig = { ...stored };
  const { voice, model, analysis, ...plain } = input;
  Object.assign(next, plain);
  if (voice === null) delete next.voice;
  else if (voice !== undefined) next.voice = voice;
  if (model === null) delete next.model;
  else if (model !== undefined) next.model = { ...(stored.model ?? defaults.model), ...model };
  if (analysis !== undefined) {
    const { success_criteria, ...rest } = analysis;
    const merged = { ...(stored.analysis ?? { summary: true, data: [] }), ...rest };
    if (success_criteria === null) delete merged.success_criteria;
    else if (success_criteria !== undefined) merged.success_criteria = success_criteria;
    next.analysis = merged;
  }
  return next;
}

const listed = (values: readonly string[], max = 12) =>
  values.length > max ? `${values.slice(0, max).join(', ')}, …` : values.join(', ');

/**
 * What the configured voice engine cannot run in this configuration, each issue naming its field:
 * the operator's lists and the engine's limits (the catalog), then the engine adapter's own.
 */
export function engineIssues(config: AgentConfig, catalog: AgentCatalog): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const on = `on this platform's voice engine (${catalog.engine})`;
  if (!catalog.voiceProviders.includes(config.voice.provider)) {
    issues.push({
      field: 'config.voice.provider',
      issue: `is not offered ${on}; allowed: ${listed(catalog.voiceProviders)}.`,
    });
  }
  const { provider, name, temperature } = config.model;
  if (!catalog.models.some((model) => model.provider === provider)) {
    issues.push({
      field: 'config.model.provider',
      issue: `is not offered ${on}; allowed: ${listed([...new Set(catalog.models.map((m) => m.provider))])}.`,
    });
  } else if (!catalog.models.some((model) => model.provider === provider && model.name === name)) {
    const names = catalog.models.filter((model) => model.provider === provider).map((model) => model.name);
    issues.push({ field: 'config.model.name', issue: `is not offered ${on}; allowed: ${listed(names)}.` });
  }
  if (temperature > catalog.maxTemperature) {
    issues.push({
      field: 'config.model.temperature',
      issue: `must be at most ${catalog.maxTemperature} ${on}.`,
    });
  }
  if (config.max_duration_seconds < catalog.minMaxDurationSeconds) {
    issues.push({
      field: 'config.max_duration_seconds',
      issue: `must be at least ${catalog.minMaxDurationSeconds} ${on}.`,
    });
  }
  if (catalog.languages && !catalog.languages.includes(config.language)) {
    issues.push({
      field: 'config.language',
      issue: `is not offered ${on}, which takes regional tags such as en-US or es-ES; allowed: ${listed(catalog.languages)}.`,
    });
  }
  // The engine's own refusals (a reserved tool name, a phrase too short, a language its
  // transcriber lacks…); a field the operator's lists already named is named once, and a model
  // provider not offered says all there is to say about the model's name.
  const named = new Set(issues.map((issue) => issue.field));
  if (named.has('config.model.provider')) named.add('config.model.name');
  for (const problem of engineConfigProblems(catalog.engine, config)) {
    const field = `config.${problem.field}`;
    if (!named.has(field)) issues.push({ field, issue: problem.issue });
  }
  return issues;
}

/** JSON with object keys sorted, so two values compare equal whatever order their keys came in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isPlainObject(value)) {
    const keys = Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
