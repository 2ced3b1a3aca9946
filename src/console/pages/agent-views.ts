/**
 * The markup of the agents pages (src/console/pages/agents.ts): the list, the create form, the
 * draft and settings editor, the webhook panel, the versions and the test-call form. Forms read
 * back with `draftFromForm` / `settingsFromForm` into the API's own request shapes.
 */

import type { Agent, AgentVersion } from '../../agents/schemas.js';
import type { AgentSettings } from '../../agents/settings.js';
import { ApiError, type FieldIssue } from '../../core/errors.js';
import type { UserListItem } from '../../users/schemas.js';
import type { ConfigValues } from '../../web/agent-config-fields.js';
import { dateTime, emptyState, field, inputField, namedIssue, statusBadge } from '../../web/components.js';
import { type FormFields, integerField, listField, textField } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { newFormKey } from '../../web/once.js';

/** Field path (as the API reports it, `settings.` dropped) → message; the first issue wins. */
export type Issues = Record<string, string>;

/** Every issue of a refused write by its full dotted path (`calling_hours.start`, `phone_number`). */
export function issuesOf(error: unknown): Issues {
  const issues: Issues = {};
  if (!(error instanceof ApiError) || !Array.isArray(error.details)) return issues;
  for (const issue of error.details as FieldIssue[]) {
    if (!issue || typeof issue.field !== 'string') continue;
    const path = issue.field.replace(/^settings\./, '');
    issues[path] ??= issue.issue;
  }
  return issues;
}

/** The issue of `path` or of anything under it (`calling_hours.days.2` belongs to `calling_hours.days`). */
export function issueAt(issues: Issues, path: string): string | undefined {
  if (issues[path]) return issues[path];
  const nested = Object.keys(issues).find((key) => key.startsWith(`${path}.`));
  return nested ? issues[nested] : undefined;
}

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

/** The settings form as the API's `settings` object: a group given in part is sent in part (and refused beside its fields). */
export function settingsFromForm(fields: FormFields): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  const cap = integerField(fields, 'max_concurrent_calls');
  if (cap !== undefined) settings.max_concurrent_calls = cap;
  const timezone = textField(fields, 'calling_hours_timezone');
  const start = textField(fields, 'calling_hours_start');
  const end = textField(fields, 'calling_hours_end');
  const days = listField(fields, 'calling_hours_days').map((day) => (/^\d$/.test(day) ? Number(day) : day));
  if (timezone || start || end || days.length > 0) {
    settings.calling_hours = { timezone: timezone ?? '', days, start: start ?? '', end: end ?? '' };
  }
  const attempts = integerField(fields, 'retry_max_attempts');
  const delay = integerField(fields, 'retry_delay_minutes');
  if (attempts !== undefined || delay !== undefined) {
    const retry: Record<string, unknown> = {};
    if (attempts !== undefined) retry.max_attempts = attempts;
    if (delay !== undefined) retry.delay_minutes = delay;
    settings.retry = retry;
  }
  return settings;
}

/** The draft fields of a form (create or edit), as the API's body keys. */
export function draftFromForm(fields: FormFields): Record<string, unknown> {
  const value = (name: string) => textField(fields, name);
  const text = fields.welcome_message;
  return {
    name: value('name') ?? '',
    phone_number: value('phone_number') ?? '',
    prompt: value('prompt') ?? '',
    welcome_message: (Array.isArray(text) ? text[0] : text)?.trim() ?? '',
  };
}

export interface DraftValues {
  name?: string;
  phone_number?: string;
  prompt?: string;
  welcome_message?: string;
}

export function textArea(options: {
  id: string;
  label: string;
  value?: string;
  error?: string;
  hint?: string;
  required?: boolean;
  rows?: number;
}): Html {
  const described = [options.hint && `${options.id}-hint`, options.error && `${options.id}-error`].filter(
    Boolean,
  );
  return field({
    id: options.id,
    label: options.label,
    hint: options.hint,
    error: options.error,
    wide: true,
    control: html`<textarea id="${options.id}" name="${options.id}" rows="${options.rows ?? 6}"${
      options.required ? html` required` : ''
    }${options.error ? html` aria-invalid="true"` : ''}${
      described.length ? html` aria-describedby="${described.join(' ')}"` : ''
    }>${options.value ?? ''}</textarea>`,
  });
}

/** Name, caller ID, prompt and welcome message, the fields create and edit share. */
export function draftFields(values: DraftValues, issues: Issues): Html {
  return html`${inputField({ id: 'name', label: 'Name', value: values.name, required: true, error: issues.name })}
  ${inputField({
    id: 'phone_number',
    label: 'Phone number (caller ID)',
    type: 'tel',
    value: values.phone_number,
    required: true,
    placeholder: '+14155550123',
    hint: 'E.164, with the country code.',
    error: issues.phone_number,
  })}
  ${textArea({
    id: 'prompt',
    label: 'Prompt',
    value: values.prompt,
    required: true,
    rows: 8,
    hint: '{key} placeholders are filled from each call: {name}, {phone}, and the call’s context.',
    error: issues.prompt,
  })}
  ${textArea({
    id: 'welcome_message',
    label: 'Welcome message',
    value: values.welcome_message,
    rows: 3,
    hint: 'The first thing the agent says. Placeholders work here too.',
    error: issues.welcome_message,
  })}`;
}

/** The settings fieldsets, filled from `settings` (or from the refused form). */
export function settingsFields(settings: Record<string, any>, issues: Issues): Html {
  const hours = settings.calling_hours ?? {};
  const retry = settings.retry ?? {};
  const days: unknown[] = Array.isArray(hours.days) ? hours.days : [];
  const daysError = issueAt(issues, 'calling_hours.days');
  const hoursError = issues.calling_hours;
  return html`<fieldset class="field field-wide settings-group">
  <legend>Concurrency</legend>
  <div class="form-grid">
  ${inputField({
    id: 'max_concurrent_calls',
    label: 'Max concurrent calls',
    type: 'number',
    value: settings.max_concurrent_calls,
    hint: 'Calls dialling or talking at once; more wait queued. Blank: no limit.',
    error: issueAt(issues, 'max_concurrent_calls'),
    attributes: html`min="1" max="10000"`,
  })}
  </div>
</fieldset>
<fieldset class="field field-wide settings-group">
  <legend>Calling hours</legend>
  <p class="hint">When calls may start, in the time zone’s local time. Leave all blank to call at any time.</p>
  ${hoursError && html`<p class="error">${namedIssue('Calling hours', hoursError)}</p>`}
  <div class="form-grid">
    ${inputField({
      id: 'calling_hours_timezone',
      label: 'Time zone',
      value: hours.timezone,
      placeholder: 'America/New_York',
      error: issueAt(issues, 'calling_hours.timezone'),
    })}
    <div class="field">
      <span class="field-label" id="calling_hours_days-label">Days</span>
      <div class="weekday-row" role="group" aria-labelledby="calling_hours_days-label">
        ${WEEKDAYS.map(
          (day, index) =>
            html`<label class="checkbox"><input type="checkbox" name="calling_hours_days" value="${index + 1}"${
              days.includes(index + 1) || days.includes(String(index + 1)) ? html` checked` : ''
            }> ${day}</label>`,
        )}
      </div>
      ${daysError && html`<p class="error">${namedIssue('Days', daysError)}</p>`}
    </div>
    ${inputField({
      id: 'calling_hours_start',
      label: 'Opens at',
      type: 'time',
      value: hours.start,
      error: issueAt(issues, 'calling_hours.start'),
    })}
    ${inputField({
      id: 'calling_hours_end',
      label: 'Closes at',
      type: 'time',
      value: hours.end,
      hint: 'Before the opening time, the window crosses midnight.',
      error: issueAt(issues, 'calling_hours.end'),
    })}
  </div>
</fieldset>
<fieldset class="field field-wide settings-group">
  <legend>Retry</legend>
  <p class="hint">Dial again after no answer or a failure. Leave blank for a single attempt.</p>
  ${issues.retry && html`<p class="error">${namedIssue('Retry', issues.retry)}</p>`}
  <div class="form-grid">
    ${inputField({
      id: 'retry_max_attempts',
      label: 'Attempts in all',
      type: 'number',
      value: retry.max_attempts,
      hint: '1 to 5, the first included.',
      error: issueAt(issues, 'retry.max_attempts'),
      attributes: html`min="1" max="5"`,
    })}
    ${inputField({
      id: 'retry_delay_minutes',
      label: 'Minutes between attempts',
      type: 'number',
      value: retry.delay_minutes,
      hint: '1 to 1440.',
      error: issueAt(issues, 'retry.delay_minutes'),
      attributes: html`min="1" max="1440"`,
    })}
  </div>
</fieldset>`;
}

/** Settings in words, for viewers and the overview. */
export function settingsSummary(settings: AgentSettings): Html {
  const hours = settings.calling_hours;
  return html`<dl class="details">
  <dt>Max concurrent calls</dt><dd>${settings.max_concurrent_calls ?? html`<span class="subtle">No limit</span>`}</dd>
  <dt>Calling hours</dt><dd>${
    hours
      ? `${hours.days.map((d) => WEEKDAYS[d - 1]).join(', ')} · ${hours.start}–${hours.end} (${hours.timezone})`
      : html`<span class="subtle">Any time</span>`
  }</dd>
  <dt>Retry</dt><dd>${
    settings.retry
      ? `${settings.retry.max_attempts} attempts, ${settings.retry.delay_minutes} min apart`
      : html`<span class="subtle">Single attempt</span>`
  }</dd>
</dl>`;
}

export function publishedBadge(agent: Agent): Html {
  return agent.published_version === null
    ? statusBadge('draft')
    : html`<span class="badge badge-success">version ${agent.published_version}</span>`;
}

export function agentTable(agents: Agent[]): Html {
  return html`<div class="table-wrap" role="region" aria-label="Agents" tabindex="0"><table>
  <thead><tr>
    <th scope="col">Name</th><th scope="col">Owner</th><th scope="col">Phone number</th>
    <th scope="col">Published</th><th scope="col">Created</th>
  </tr></thead>
  <tbody>
  ${agents.map(
    (agent) => html`<tr>
    <td><a href="/console/agents/${agent.id}"><strong>${agent.name}</strong></a><br><span class="subtle mono">${agent.id}</span></td>
    <td><a class="mono" href="/console/agents?user_id=${encodeURIComponent(agent.user_id)}" title="Only this user’s agents">${agent.user_id}</a></td>
    <td class="mono">${agent.phone_number}</td>
    <td>${publishedBadge(agent)}</td>
    <td>${dateTime(agent.created_at)}</td>
  </tr>`,
  )}
  </tbody>
</table></div>`;
}

export function versionsTable(versions: AgentVersion[], published: number | null): Html {
  if (versions.length === 0) {
    return emptyState({
      title: 'Not published yet',
      text: 'Calls use a published version only. Publish the draft to freeze it as version 1.',
    });
  }
  return html`<div class="table-wrap" role="region" aria-label="Published versions" tabindex="0"><table class="versions">
  <thead><tr>
    <th scope="col">Version</th><th scope="col">Prompt</th><th scope="col">Welcome message</th>
    <th scope="col">Caller ID</th><th scope="col">Published</th>
  </tr></thead>
  <tbody>
  ${versions.map(
    (version) => html`<tr>
    <td><strong>version ${version.version}</strong>${version.version === published ? html` ${statusBadge('published')}` : ''}</td>
    <td class="excerpt">${excerpt(version.prompt)}</td>
    <td class="excerpt">${excerpt(version.welcome_message) || html`<span class="subtle">—</span>`}</td>
    <td class="mono">${version.phone_number}</td>
    <td>${dateTime(version.published_at)}</td>
  </tr>`,
  )}
  </tbody>
</table></div>`;
}

function excerpt(text: string, length = 140): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}

export interface TestCallValues {
  phone?: string;
  name?: string;
  context?: string;
}

/** The test-call form: the same request as POST /api/v1/calls, its refusal shown on the form. */
export function testCallForm(options: {
  agent: Agent;
  csrf: Html;
  values: TestCallValues;
  issues: Issues;
  refusal?: string;
}): Html {
  const { agent, values, issues } = options;
  return html`<section class="panel" aria-labelledby="test-call-title" id="test-call">
  <h2 id="test-call-title">Place a test call</h2>
  <p class="muted">${
    agent.published_version
      ? `Calls the number with the published version (version ${agent.published_version}), exactly as the API would, and uses the owner’s credits.`
      : 'Calls use a published version only: publish the draft first.'
  }</p>
  ${options.refusal && html`<div class="flash flash-error" role="alert">${options.refusal}</div>`}
  <form method="post" action="/console/agents/${agent.id}/calls#test-call" class="form-grid">
    ${options.csrf}<input type="hidden" name="form_key" value="${newFormKey()}">
    ${inputField({
      id: 'call_phone',
      name: 'phone',
      label: 'Phone number to call',
      type: 'tel',
      value: values.phone,
      required: true,
      placeholder: '+14155550123',
      error: issues.phone,
    })}
    ${inputField({ id: 'call_name', name: 'name', label: 'Callee’s name', value: values.name, error: issues.name })}
    ${field({
      id: 'call_context',
      label: 'Context (optional)',
      wide: true,
      hint: 'A JSON object; each key fills a {key} placeholder, e.g. {"product": "solar panels"}.',
      error: issues.context,
      control: html`<textarea id="call_context" name="context" rows="3" aria-describedby="call_context-hint${
        issues.context ? ' call_context-error' : ''
      }"${issues.context ? html` aria-invalid="true"` : ''}>${values.context ?? ''}</textarea>`,
    })}
    <div class="form-actions field-wide"><button class="button button-primary" type="submit">Place call</button></div>
  </form>
</section>`;
}

/**
 * The webhook URL with its copy button and the rotate button for admins and owners. The URL is a
 * credential that places calls: a viewer sees only its last four characters.
 */
export function webhookPanel(agent: Agent, rotate: Html | false, reveal: boolean): Html {
  return html`<section class="panel" aria-labelledby="webhook-title">
  <h2 id="webhook-title">Webhook URL</h2>
  <p class="muted">POST here to place a call with the published version. The URL is the credential: keep it secret.</p>
  ${
    reveal
      ? html`<div class="copy-field">
    <code id="webhook-url">${agent.webhook_url}</code>
    <button class="button" type="button" data-copy="webhook-url">Copy</button>
  </div>`
      : html`<p><code id="webhook-url">${maskedWebhookUrl(agent.webhook_url)}</code></p><p class="subtle">Only admins and owners see the whole URL.</p>`
  }
  ${rotate && html`<div class="form-actions">${rotate}<span class="subtle">Rotating gives a new URL; the old one stops working at once.</span></div>`}
</section>`;
}

/** The webhook URL with its credential (the `webh_` id) cut to its last four characters. */
export function maskedWebhookUrl(url: string): string {
  const masked = url.replace(/webh_[0-9A-Za-z]+/g, (id) => `webh_…${id.slice(-4)}`);
  return masked === url ? `…${url.slice(-4)}` : masked;
}

export function pageNumber(value: string | undefined): number {
  return value && /^\d{1,9}$/.test(value) && Number(value) > 0 ? Number(value) : 1;
}

export const ownerLabel = (user: UserListItem) => (user.name ? `${user.name} <${user.email}>` : user.email);

export interface DetailState {
  draft?: DraftValues;
  settings?: Record<string, unknown>;
  issues?: Issues;
  testCall?: { values: TestCallValues; issues: Issues; refusal?: string };
  config?: { values: ConfigValues; issues: Record<string, string> };
  samples?: Record<string, string>;
  status?: number;
  versionsPage?: number;
}
