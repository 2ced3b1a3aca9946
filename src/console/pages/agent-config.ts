/**
 * The agent's configuration in the console (src/console/pages/agents.ts): the editor panel
 * (voice, model, language, limits, voicemail, transfer, tools, analysis) posting to
 * `/console/agents/{id}/config`, the greeting preview with sample values, a summary for viewers,
 * and whether the draft differs from the published version (Publish is offered only then).
 */
import type { Agent, AgentVersion } from '../../agents/schemas.js';
import { renderTemplate } from '../../calls/template.js';
import {
  type ConfigChoices,
  type ConfigValues,
  type ControlIssues,
  configFields,
  greetingPreview,
  sampleValues,
} from '../../web/agent-config-fields.js';
import { type Html, html } from '../../web/html.js';

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
