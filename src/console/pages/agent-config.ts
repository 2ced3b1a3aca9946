/**
 * The agent's configuration in the console (src/console/pages/agents.ts): the editor panel
 * (voice, model, language, limits, voicemail, transfer, tools, analysis) posting to
 * `/console/agents/{id}/config`, the greeting preview with sample values, a summary for viewers,
 * and whether the draft differs from the published version (Publish is offered only then).
 */
import type { Agent, AgentDefaults, AgentEngineOptions, AgentVersion } from '../../agents/schemas.js';
import { renderTemplate } from '../../calls/template.js';
import {
  type ConfigChoices,
  type ConfigValues,
  type ControlIssues,
  configFields,
  greetingPreview,
  sampleValues,
} from '../../web/agent-config-fields.js';
import { pickerValue } from '../../web/agent-config-read.js';
import { actionButton, field, inputField, select } from '../../web/components.js';
import { type FormFields, textField } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';

/** The pickers' choices from what the agents service says the configured engine allows. */
export function choicesOf(options: AgentEngineOptions): ConfigChoices {
  return {
    voiceProviders: options.voice_providers,
    models: options.models,
    languages: options.languages ?? undefined,
    maxTemperature: options.max_temperature,
    minMaxDurationSeconds: options.min_max_duration_seconds,
  };
}

/** The draft's configuration, or the version's (absent on versions published before configurations existed). */
export function configOf(holder: object): ConfigValues {
  const config = 'config' in holder ? holder.config : undefined;
  return config && typeof config === 'object' ? config : {};
}

/** JSON with sorted keys, so two equal configurations compare equal whatever their key order. */
function stable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${stable(Reflect.get(value, key))}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** Whether the draft (prompt, welcome message, caller ID, configuration) differs from the published version. */
export function draftDiffers(agent: Agent, published: AgentVersion | undefined): boolean {
  if (agent.published_version === null || !published) return true;
  return (
    published.prompt !== agent.draft.prompt ||
    published.welcome_message !== agent.draft.welcome_message ||
    published.phone_number !== agent.phone_number ||
    stable(configOf(published)) !== stable(configOf(agent.draft))
  );
}

/** `sample_<key>` query values, for the preview. */
export function samplesOf(query: Record<string, unknown>): Record<string, string> {
  const given: Record<string, string> = {};
  for (const [key, value] of Object.entries(query)) {
    if (key.startsWith('sample_') && typeof value === 'string') given[key.slice(7)] = value.slice(0, 200);
  }
  return given;
}

/** The greeting as the callee hears it, with a GET form to try other sample values (no script needed). */
export function previewPanel(agent: Agent, config: ConfigValues, given: Record<string, string>): Html {
  const voicemail = config.voicemail?.action === 'leave_message' ? (config.voicemail.message ?? '') : '';
  const greetingValues = sampleValues([agent.draft.welcome_message], given);
  const allValues = sampleValues([agent.draft.welcome_message, voicemail], given);
  const keys = Object.keys(allValues);
  return html`<section class="panel" aria-labelledby="preview-title" id="preview">
  <h2 id="preview-title">Greeting preview</h2>
  <p class="muted">The saved draft’s welcome message, rendered as a call would render it${config.voice ? html`, spoken by <strong>${config.voice.voice_id}</strong> (${config.voice.provider})` : ''}${config.language ? ` in ${config.language}` : ''}.</p>
  ${greetingPreview(renderTemplate(agent.draft.welcome_message, greetingValues), greetingValues)}
  ${voicemail && html`<h3 class="subheading">Voicemail message</h3>${greetingPreview(renderTemplate(voicemail, allValues), {})}`}
  ${
    keys.length > 0 &&
    html`<form method="get" action="/console/agents/${agent.id}#preview" class="form-grid preview-form" aria-label="Sample values">
    ${keys.map(
      (key) =>
        html`<div class="field"><label for="sample_${key}">Sample {${key}}</label><input id="sample_${key}" name="sample_${key}" value="${allValues[key]}"></div>`,
    )}
    <div class="form-actions field-wide"><button class="button" type="submit">Preview with these values</button></div>
  </form>`
  }
</section>`;
}

/** The editor: every configuration field, saved to the draft with its own button. */
export function configEditor(options: {
  agent: Agent;
  config: ConfigValues;
  choices: ConfigChoices;
  issues: ControlIssues;
  csrf: Html;
}): Html {
  const { agent, issues } = options;
  return html`<section class="panel" aria-labelledby="config-title" id="config">
  <h2 id="config-title">Voice, behaviour and analysis</h2>
  <p class="muted">Part of the draft: calls use it once you publish. The pickers list what your voice engine accepts.</p>
  ${Object.keys(issues).length > 0 && html`<div class="flash flash-error" role="alert">The configuration was not saved: fix the fields marked below.</div>`}
  <form method="post" action="/console/agents/${agent.id}/config#config" class="form-grid" novalidate>
    ${options.csrf}
    ${configFields(options.config, options.choices, issues)}
    <div class="form-actions field-wide">
      <button class="button button-primary" type="submit">Save configuration</button>
      <span class="subtle">Blank rows are added when you save; clear a row to remove it.</span>
    </div>
  </form>
</section>`;
}

/** The configuration in words, for viewers. */
export function configSummary(config: ConfigValues): Html {
  const items = [
    config.voice && `Voice ${config.voice.provider} · ${config.voice.voice_id}`,
    config.model &&
      `Model ${config.model.provider} · ${config.model.name} (temperature ${config.model.temperature})`,
    config.language && `Language ${config.language}`,
    config.max_duration_seconds !== undefined && `Up to ${config.max_duration_seconds} s`,
    config.silence_timeout_seconds !== undefined && `Silence ends after ${config.silence_timeout_seconds} s`,
    `Voicemail: ${config.voicemail ? config.voicemail.action.replace('_', ' ') : 'not detected'}`,
    `${config.transfer?.length ?? 0} transfer targets`,
    `${config.tools?.length ?? 0} tools`,
    `${config.analysis?.data?.length ?? 0} analysis fields`,
  ].filter((item): item is string => typeof item === 'string');
  return html`<ul class="config-summary" aria-label="Configuration">${items.map((item) => html`<li>${item}</li>`)}</ul>`;
}

/** The tenant's default voice and model (Agents page): what an agent that sets none gets. */
export function defaultsPanel(defaults: AgentDefaults, csrf: Html, issues: Record<string, string>): Html {
  const allowed = defaults.allowed;
  const voice = defaults.voice;
  const model = defaults.model;
  const { effective } = defaults;
  return html`<section class="panel" aria-labelledby="defaults-title" id="defaults">
  <h2 id="defaults-title">Default voice and model</h2>
  <p class="muted">Agents that set no voice or model use these. Now: <strong>${effective.voice.provider} · ${effective.voice.voice_id}</strong> with <strong>${effective.model.provider} · ${effective.model.name}</strong> (temperature ${effective.model.temperature})${voice || model ? '' : ', the platform’s defaults'}.</p>
  ${Object.keys(issues).length > 0 && html`<div class="flash flash-error" role="alert">The defaults were not saved: fix the fields marked below.</div>`}
  <form method="post" action="/console/agents/defaults#defaults" class="form-grid" novalidate>
    ${csrf}
    ${field({
      id: 'default_voice_provider',
      label: 'Voice provider',
      error: issues.voice_provider ?? issues.voice,
      control: select({
        id: 'default_voice_provider',
        choices: [
          { value: '', label: 'The platform’s default' },
          ...allowed.voice_providers.map((p) => ({ value: p, label: p })),
        ],
        selected: voice?.provider ?? '',
      }),
    })}
    ${inputField({ id: 'default_voice_id', label: 'Voice id', value: voice?.voice_id, placeholder: effective.voice.voice_id, error: issues.voice_id })}
    ${field({
      id: 'default_model',
      label: 'Model',
      error: issues.model,
      control: select({
        id: 'default_model',
        choices: [
          { value: '', label: 'The platform’s default' },
          ...allowed.models.map((m) => ({
            value: `${m.provider}:${m.name}`,
            label: `${m.provider} · ${m.name}`,
          })),
        ],
        selected: model ? `${model.provider}:${model.name}` : '',
      }),
    })}
    ${inputField({ id: 'default_temperature', label: 'Temperature', type: 'number', value: model?.temperature, placeholder: String(effective.model.temperature), hint: `0 to ${allowed.max_temperature}.`, error: issues.temperature, attributes: html`min="0" max="${allowed.max_temperature}" step="0.1"` })}
    <div class="form-actions field-wide"><button class="button" type="submit">Save defaults</button></div>
  </form>
</section>`;
}

/** The defaults form read back as the PUT agent-defaults body. */
export function defaultsFromForm(fields: FormFields): Record<string, unknown> {
  const provider = textField(fields, 'default_voice_provider');
  const voiceId = textField(fields, 'default_voice_id');
  const model = pickerValue(textField(fields, 'default_model') ?? '');
  const temperature = textField(fields, 'default_temperature');
  return {
    voice: provider || voiceId ? { provider: provider ?? '', voice_id: voiceId ?? '' } : null,
    model: model
      ? {
          provider: model.provider,
          name: model.id,
          temperature:
            temperature === undefined
              ? 0.7
              : /^\d+(\.\d+)?$/.test(temperature)
                ? Number(temperature)
                : temperature,
        }
      : null,
  };
}

/** The tenant defaults' issues by the form's words (`model.temperature` → `temperature`). */
export function defaultsIssues(issues: Record<string, string>): Record<string, string> {
  const named: Record<string, string> = {};
  for (const [path, issue] of Object.entries(issues)) {
    const [head, rest] = path.replace(/^config\./, '').split('.');
    const key =
      head === 'voice'
        ? rest === 'voice_id'
          ? 'voice_id'
          : 'voice_provider'
        : rest === 'temperature'
          ? 'temperature'
          : head;
    named[key] ??= issue;
  }
  return named;
}

/** Delete the agent, after a confirmation. */
export function dangerPanel(agent: Agent, csrf: Html): Html {
  return html`<section class="panel" aria-labelledby="danger-title">
  <h2 id="danger-title">Delete the agent</h2>
  <p class="muted">Its webhook stops answering at once and it cannot place calls; its calls stay readable.</p>
  ${actionButton({
    action: `/console/agents/${agent.id}/delete`,
    label: 'Delete agent',
    csrf,
    tone: 'danger',
    confirm: `Delete the agent “${agent.name}”? Its webhook stops working at once.`,
  })}
</section>`;
}
