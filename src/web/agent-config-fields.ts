/**
 * The markup of an agent's configuration editor, shared by the console and the portal: pickers
 * for voice, model and language from the engine's allowed lists, numbers with their bounds,
 * end-call phrases, voicemail, and row editors for transfer targets, tools and analysis fields.
 * Each row editor shows its rows plus one blank row (adding a row needs no script); a wide table
 * scrolls in its own labelled, focusable region. Read back by src/web/agent-config-read.ts.
 */
import { BLANK_ROWS, ROW_LIMITS } from './agent-config-read.js';
import { field, inputField, namedIssue } from './components.js';
import { type Html, html } from './html.js';

/** The configuration as the editor shows it (an agent's draft, or a refused form read back). */
export interface ConfigValues {
  voice?: { provider: string; voice_id: string } | null;
  language?: string;
  model?: { provider?: string; name?: string; temperature?: number | string } | null;
  max_duration_seconds?: number | string;
  silence_timeout_seconds?: number | string;
  end_call_phrases?: string[];
  voicemail?: { action: string; message?: string } | null;
  transfer?: { phone_number: string; description: string }[];
  tools?: {
    name: string;
    description: string;
    url: string;
    timeout_seconds: number | string;
    parameters: unknown;
  }[];
  analysis?: {
    summary?: boolean;
    success_criteria?: string | null;
    data?: { name: string; type: string; description: string; values?: string[] }[];
  };
}

/** What the configured engine accepts. */
export interface ConfigChoices {
  voiceProviders: readonly string[];
  models: readonly { provider: string; name: string }[];
  /** The tags the engine takes; undefined: any tag (the picker offers the common ones). */
  languages?: readonly string[];
  maxTemperature?: number;
  minMaxDurationSeconds?: number;
}

/** Offered when the engine takes any language tag. */
export const COMMON_LANGUAGES = [
  'en-US', 'en-GB', 'en-AU', 'en-IN', 'es-ES', 'es-MX', 'es-419', 'fr-FR', 'fr-CA', 'de-DE', 'it-IT',
  'pt-PT', 'pt-BR', 'nl-NL', 'pl-PL', 'sv-SE', 'da-DK', 'fi-FI', 'no-NO', 'tr-TR', 'ja-JP', 'ko-KR',
  'zh-CN', 'hi-IN', 'ar-SA',
]; // biome-ignore format: a list of tags

export type ControlIssues = Record<string, string>;

const BOUNDS = {
  temperature: { min: 0, max: 2 },
  max_duration_seconds: { min: 10, max: 7200 },
  silence_timeout_seconds: { min: 10, max: 600 },
  tool_timeout: { min: 1, max: 20 },
};

/** A `<select>` of `provider:id` choices grouped by provider; a current value the engine does not list stays, marked. */
function picker(options: {
  id: string;
  current: string | undefined;
  choices: readonly { provider: string; id: string; label?: string }[];
  error?: string;
}): Html {
  const listed = options.choices.some((c) => `${c.provider}:${c.id}` === options.current);
  const providers = [...new Set(options.choices.map((c) => c.provider))];
  return html`<select id="${options.id}" name="${options.id}" aria-describedby="${options.id}-hint${options.error ? ` ${options.id}-error` : ''}"${
    options.error ? html` aria-invalid="true"` : ''
  }>
  ${options.current && !listed && html`<option value="${options.current}" selected>${options.current} (not offered by this engine)</option>`}
  ${providers.map(
    (provider) =>
      html`<optgroup label="${provider}">${options.choices
        .filter((c) => c.provider === provider)
        .map((c) => {
          const value = `${c.provider}:${c.id}`;
          return html`<option value="${value}"${value === options.current ? html` selected` : ''}>${c.label ?? c.id}</option>`;
        })}</optgroup>`,
  )}
</select>`;
}

function hiddenLabel(id: string, text: string): Html {
  return html`<label class="visually-hidden" for="${id}">${text}</label>`;
}

function cellInput(options: {
  id: string;
  label: string;
  value: string | number | undefined;
  issues: ControlIssues;
  type?: string;
  placeholder?: string;
  attributes?: Html;
}): Html {
  const error = options.issues[options.id];
  return html`${hiddenLabel(options.id, options.label)}<input id="${options.id}" name="${options.id}" type="${options.type ?? 'text'}" value="${
    options.value === undefined ? '' : String(options.value)
  }"${options.placeholder ? html` placeholder="${options.placeholder}"` : ''}${
    error ? html` aria-invalid="true" aria-describedby="${options.id}-error"` : ''
  } ${options.attributes ?? ''}>${error && html`<p class="error" id="${options.id}-error">${namedIssue(options.label, error)}</p>`}`;
}

function rowCount(filled: number, limit: number): number {
  return Math.min(limit, filled + BLANK_ROWS);
}

function transferEditor(values: ConfigValues['transfer'], issues: ControlIssues): Html {
  const targets = values ?? [];
  const count = rowCount(targets.length, ROW_LIMITS.transfer);
  return html`<fieldset class="field field-wide settings-group" id="transfer">
  <legend>Transfer targets</legend>
  <p class="hint">Numbers the agent may hand the call to, and when. Up to ${ROW_LIMITS.transfer}; clear a row to remove it.</p>
  <div class="table-wrap row-editor" role="region" aria-label="Transfer targets" tabindex="0"><table>
    <thead><tr><th scope="col">#</th><th scope="col">Phone number</th><th scope="col">When to transfer</th></tr></thead>
    <tbody>
    ${Array.from({ length: count }, (_, i) => {
      const row = targets[i];
      return html`<tr${row ? '' : html` class="row-blank"`}>
      <td class="row-number">${row ? i + 1 : 'New'}</td>
      <td class="cell-narrow">${cellInput({ id: `transfer_${i}_phone_number`, label: `Transfer ${i + 1}: phone number`, value: row?.phone_number, issues, type: 'tel', placeholder: '+14155550123' })}</td>
      <td>${cellInput({ id: `transfer_${i}_description`, label: `Transfer ${i + 1}: when to transfer`, value: row?.description, issues, placeholder: 'The caller asks for a person' })}</td>
    </tr>`;
    })}
    </tbody>
  </table></div>
</fieldset>`;
}

function toolsEditor(values: ConfigValues['tools'], issues: ControlIssues): Html {
  const tools = values ?? [];
  const count = rowCount(tools.length, ROW_LIMITS.tools);
  return html`<fieldset class="field field-wide settings-group" id="tools">
  <legend>Tools</legend>
  <p class="hint">Functions the agent may call during a call: we POST the arguments to the URL, signed with your tools secret, and the JSON answer goes back to the agent. Up to ${ROW_LIMITS.tools}; clear a tool’s fields to remove it.</p>
  <div class="tool-rows">
  ${Array.from({ length: count }, (_, i) => {
    const tool = tools[i];
    const parameters =
      tool === undefined
        ? ''
        : typeof tool.parameters === 'string'
          ? tool.parameters
          : JSON.stringify(tool.parameters, null, 2);
    const id = (name: string) => `tools_${i}_${name}`;
    return html`<div class="tool-row${tool ? '' : ' row-blank'}" role="group" aria-labelledby="${id('title')}">
    <h4 class="row-title" id="${id('title')}">${tool ? `Tool ${i + 1}${tool.name ? `: ${tool.name}` : ''}` : 'Add a tool'}</h4>
    <div class="form-grid">
    ${inputField({ id: id('name'), label: 'Tool name', value: tool?.name, placeholder: 'book_appointment', hint: 'Letters, digits and _.', error: issues[id('name')] })}
    ${inputField({ id: id('timeout_seconds'), label: 'Timeout (seconds)', type: 'number', value: tool?.timeout_seconds ?? (tool ? '' : undefined), placeholder: '10', hint: `${BOUNDS.tool_timeout.min} to ${BOUNDS.tool_timeout.max}.`, error: issues[id('timeout_seconds')], attributes: html`min="${BOUNDS.tool_timeout.min}" max="${BOUNDS.tool_timeout.max}"` })}
    ${inputField({ id: id('url'), label: 'Tool URL', type: 'url', value: tool?.url, placeholder: 'https://tools.example.com/book', hint: 'https only.', error: issues[id('url')], wide: true })}
    ${inputField({ id: id('description'), label: 'Tool description', value: tool?.description, placeholder: 'Books an appointment on the given date.', hint: 'When and why the agent uses it.', error: issues[id('description')], wide: true })}
    ${field({
      id: id('parameters'),
      label: 'Parameters (JSON Schema)',
      wide: true,
      hint: 'An object schema; checked when you save. Blank: no arguments.',
      error: issues[id('parameters')],
      control: html`<textarea class="code" id="${id('parameters')}" name="${id('parameters')}" rows="${tool ? 6 : 3}" spellcheck="false" aria-describedby="${id('parameters')}-hint${
        issues[id('parameters')] ? ` ${id('parameters')}-error` : ''
      }"${issues[id('parameters')] ? html` aria-invalid="true"` : ''} placeholder='{"type": "object", "properties": {"date": {"type": "string"}}}'>${parameters}</textarea>`,
    })}
    </div>
  </div>`;
  })}
  </div>
</fieldset>`;
}

const ANALYSIS_TYPES = ['string', 'number', 'boolean', 'enum'];

function analysisEditor(values: ConfigValues['analysis'], issues: ControlIssues): Html {
  const analysis = values ?? {};
  const data = analysis.data ?? [];
  const count = rowCount(data.length, ROW_LIMITS.analysis);
  return html`<fieldset class="field field-wide settings-group" id="analysis">
  <legend>After the call</legend>
  <div class="form-grid">
    <div class="field field-wide">
      <label class="checkbox" for="analysis_summary"><input type="checkbox" id="analysis_summary" name="analysis_summary"${analysis.summary === false ? '' : html` checked`}> Write a summary of each call</label>
    </div>
    ${field({
      id: 'analysis_success_criteria',
      label: 'Success criteria (optional)',
      wide: true,
      hint: 'How to judge whether a call succeeded; blank: not judged.',
      error: issues.analysis_success_criteria,
      control: html`<textarea id="analysis_success_criteria" name="analysis_success_criteria" rows="2" aria-describedby="analysis_success_criteria-hint">${analysis.success_criteria ?? ''}</textarea>`,
    })}
  </div>
  <h4 class="row-title" id="analysis-data-title">Data to extract</h4>
  <p class="hint">Each field is filled from the conversation after the call. Enum values are separated by commas. Up to ${ROW_LIMITS.analysis}.</p>
  <div class="table-wrap row-editor" role="region" aria-labelledby="analysis-data-title" tabindex="0"><table>
    <thead><tr><th scope="col">#</th><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Description</th><th scope="col">Values (enum)</th></tr></thead>
    <tbody>
    ${Array.from({ length: count }, (_, i) => {
      const row = data[i];
      const id = (name: string) => `analysis_${i}_${name}`;
      return html`<tr${row ? '' : html` class="row-blank"`}>
      <td class="row-number">${row ? i + 1 : 'New'}</td>
      <td class="cell-narrow">${cellInput({ id: id('name'), label: `Field ${i + 1}: name`, value: row?.name, issues, placeholder: 'appointment_booked' })}</td>
      <td class="cell-type">${hiddenLabel(id('type'), `Field ${i + 1}: type`)}<select id="${id('type')}" name="${id('type')}"${issues[id('type')] ? html` aria-invalid="true"` : ''}>
        ${ANALYSIS_TYPES.map((type) => html`<option value="${type}"${(row?.type ?? 'string') === type ? html` selected` : ''}>${type}</option>`)}
      </select>${issues[id('type')] && html`<p class="error">${namedIssue(`Field ${i + 1}: type`, issues[id('type')])}</p>`}</td>
      <td>${cellInput({ id: id('description'), label: `Field ${i + 1}: description`, value: row?.description, issues, placeholder: 'Whether an appointment was booked' })}</td>
      <td class="cell-narrow">${cellInput({ id: id('values'), label: `Field ${i + 1}: values, for enum`, value: row?.values?.join(', '), issues, placeholder: 'yes, no, maybe' })}</td>
    </tr>`;
    })}
    </tbody>
  </table></div>
</fieldset>`;
}

/** Voice, language, model, limits, end-call phrases and voicemail, then the row editors. */
export function configFields(config: ConfigValues, choices: ConfigChoices, issues: ControlIssues): Html {
  const model =
    config.model?.provider && config.model.name ? `${config.model.provider}:${config.model.name}` : undefined;
  const languages = choices.languages ?? COMMON_LANGUAGES;
  const languageChoices =
    config.language && !languages.includes(config.language) ? [config.language, ...languages] : languages;
  const providers = choices.voiceProviders;
  const voiceProvider = config.voice?.provider;
  const providerChoices =
    voiceProvider && !providers.includes(voiceProvider) ? [voiceProvider, ...providers] : providers;
  const temperatureMax = choices.maxTemperature ?? BOUNDS.temperature.max;
  const minDuration = Math.max(BOUNDS.max_duration_seconds.min, choices.minMaxDurationSeconds ?? 0);
  const action = config.voicemail?.action ?? 'none';
  const radio = (value: string, label: string) =>
    html`<label class="checkbox" for="voicemail_action_${value}"><input type="radio" id="voicemail_action_${value}" name="voicemail_action" value="${value}"${action === value ? html` checked` : ''}> ${label}</label>`;
  return html`<input type="hidden" name="config_form" value="1">
<fieldset class="field field-wide settings-group" id="voice-model">
  <legend>Voice and model</legend>
  <div class="form-grid">
    ${field({
      id: 'voice_provider',
      label: 'Voice provider',
      hint: 'The providers your voice engine offers.',
      error: issues.voice_provider,
      control: html`<select id="voice_provider" name="voice_provider" aria-describedby="voice_provider-hint"${issues.voice_provider ? html` aria-invalid="true"` : ''}>${providerChoices.map(
        (provider) =>
          html`<option value="${provider}"${provider === voiceProvider ? html` selected` : ''}>${provider}${providers.includes(provider) ? '' : ' (not offered by this engine)'}</option>`,
      )}</select>`,
    })}
    ${inputField({ id: 'voice_id', label: 'Voice id', value: config.voice?.voice_id, placeholder: 'alloy', hint: 'The provider’s own id for the voice.', error: issues.voice_id })}
    ${field({
      id: 'language',
      label: 'Language',
      hint: 'Spoken and transcribed.',
      error: issues.language,
      control: html`<select id="language" name="language" aria-describedby="language-hint"${issues.language ? html` aria-invalid="true"` : ''}>${languageChoices.map(
        (tag) =>
          html`<option value="${tag}"${tag === config.language ? html` selected` : ''}>${tag}</option>`,
      )}</select>`,
    })}
    ${field({ id: 'model', label: 'Model', hint: 'The language model that thinks for the agent.', error: issues.model, control: picker({ id: 'model', current: model, choices: choices.models.map((m) => ({ provider: m.provider, id: m.name })), error: issues.model }) })}
    ${inputField({ id: 'temperature', label: 'Temperature', type: 'number', value: config.model?.temperature, hint: `0 (focused) to ${temperatureMax} (varied).`, error: issues.temperature, attributes: html`min="0" max="${temperatureMax}" step="0.1"` })}
  </div>
</fieldset>
<fieldset class="field field-wide settings-group" id="call-limits">
  <legend>During the call</legend>
  <div class="form-grid">
    ${inputField({ id: 'max_duration_seconds', label: 'Maximum duration (seconds)', type: 'number', value: config.max_duration_seconds, hint: `${minDuration} to ${BOUNDS.max_duration_seconds.max}; the call ends then.`, error: issues.max_duration_seconds, attributes: html`min="${minDuration}" max="${BOUNDS.max_duration_seconds.max}"` })}
    ${inputField({ id: 'silence_timeout_seconds', label: 'Silence timeout (seconds)', type: 'number', value: config.silence_timeout_seconds, hint: `${BOUNDS.silence_timeout_seconds.min} to ${BOUNDS.silence_timeout_seconds.max} without speech ends the call.`, error: issues.silence_timeout_seconds, attributes: html`min="${BOUNDS.silence_timeout_seconds.min}" max="${BOUNDS.silence_timeout_seconds.max}"` })}
    ${field({
      id: 'end_call_phrases',
      label: 'End-call phrases',
      wide: true,
      hint: 'One per line, up to 10: when the agent says one, it hangs up.',
      error: issues.end_call_phrases,
      control: html`<textarea id="end_call_phrases" name="end_call_phrases" rows="3" aria-describedby="end_call_phrases-hint"${issues.end_call_phrases ? html` aria-invalid="true"` : ''}>${(config.end_call_phrases ?? []).join('\n')}</textarea>`,
    })}
    <div class="field field-wide">
      <span class="field-label" id="voicemail-label">When voicemail answers</span>
      <div class="choice-row" role="radiogroup" aria-labelledby="voicemail-label">
        ${radio('none', 'Don’t detect voicemail')}${radio('hang_up', 'Hang up')}${radio('leave_message', 'Leave a message')}
      </div>
      ${issues.voicemail_action && html`<p class="error">${namedIssue('When voicemail answers', issues.voicemail_action)}</p>`}
    </div>
    ${field({
      id: 'voicemail_message',
      label: 'Voicemail message',
      wide: true,
      hint: 'Spoken when leaving a message; {name} and the call’s other details fill placeholders.',
      error: issues.voicemail_message,
      control: html`<textarea id="voicemail_message" name="voicemail_message" rows="2" aria-describedby="voicemail_message-hint${issues.voicemail_message ? ' voicemail_message-error' : ''}"${issues.voicemail_message ? html` aria-invalid="true"` : ''}>${config.voicemail?.message ?? ''}</textarea>`,
    })}
  </div>
</fieldset>
${transferEditor(config.transfer, issues)}
${toolsEditor(config.tools, issues)}
${analysisEditor(config.analysis, issues)}`;
}

/** Sample values for the greeting preview: the call's own keys, then a sample for every other placeholder. */
export function sampleValues(texts: string[], given: Record<string, string> = {}): Record<string, string> {
  const samples: Record<string, string> = {
    name: 'Alex Morgan',
    phone: '+14155550123',
    email: 'alex@example.com',
  };
  const values: Record<string, string> = {};
  for (const textValue of texts) {
    for (const match of textValue.matchAll(/\{(\w+)\}/g)) {
      const key = match[1];
      values[key] = given[key] || samples[key] || key.replace(/_/g, ' ');
    }
  }
  return values;
}

/** The rendered greeting with its sample values listed. */
export function greetingPreview(rendered: string, values: Record<string, string>): Html {
  const keys = Object.keys(values);
  return html`<div class="greeting-preview">
  <p class="speech" aria-label="The greeting as the callee hears it">${rendered || html`<span class="subtle">No welcome message: the agent waits for the callee to speak.</span>`}</p>
  ${keys.length > 0 && html`<p class="subtle">Sample values: ${keys.map((key, i) => html`${i > 0 ? ', ' : ''}<code>{${key}}</code> → ${values[key]}`)}</p>`}
</div>`;
}

/** The pickers' choices from the agents service's allowed options (its API shape). */
export function choicesFromOptions(options: {
  voice_providers: string[];
  models: { provider: string; name: string }[];
  languages: string[] | null;
  max_temperature: number;
  min_max_duration_seconds: number;
}): ConfigChoices {
  return {
    voiceProviders: options.voice_providers,
    models: options.models,
    languages: options.languages ?? undefined,
    maxTemperature: options.max_temperature,
    minMaxDurationSeconds: options.min_max_duration_seconds,
  };
}
