/**
 * The console's building blocks, so every page looks and behaves alike: labelled fields with
 * their error, tables, badges, pagers, empty states, secrets shown once with a copy button.
 */
import { type Html, html } from './html.js';

export interface FieldOptions {
  id: string;
  label: string;
  /** The control itself, e.g. `input({ … })` or a `<select>`. */
  control: Html;
  hint?: string;
  error?: string;
  wide?: boolean;
}

/**
 * A refusal that names its field in words: the API's issues are fragments after the field's name
 * ("must be at least 8 characters long."), so the label goes in front ("New password must be …");
 * a whole sentence (capitalised) is kept as it is.
 */
export function namedIssue(label: string, issue: string): string {
  return /^[a-z]/.test(issue) ? `${label} ${issue}` : issue;
}

/** A label, its control, a hint and the error that refused it (linked for screen readers). */
export function field(options: FieldOptions): Html {
  return html`<div class="field${options.wide ? ' field-wide' : ''}">
  <label for="${options.id}">${options.label}</label>
  ${options.control}
  ${options.hint && html`<p class="hint" id="${options.id}-hint">${options.hint}</p>`}
  ${options.error && html`<p class="error" id="${options.id}-error">${namedIssue(options.label, options.error)}</p>`}
</div>`;
}

export interface InputOptions {
  id: string;
  name?: string;
  type?: string;
  value?: string | number | null;
  required?: boolean;
  placeholder?: string;
  error?: string;
  hint?: string;
  attributes?: Html;
}

export function input(options: InputOptions): Html {
  const described = [options.hint && `${options.id}-hint`, options.error && `${options.id}-error`].filter(
    Boolean,
  );
  return html`<input id="${options.id}" name="${options.name ?? options.id}" type="${options.type ?? 'text'}"${
    options.value !== undefined && options.value !== null ? html` value="${String(options.value)}"` : ''
  }${options.required ? html` required` : ''}${options.placeholder ? html` placeholder="${options.placeholder}"` : ''}${
    options.error ? html` aria-invalid="true"` : ''
  }${described.length ? html` aria-describedby="${described.join(' ')}"` : ''} ${options.attributes ?? ''}>`;
}

/** A labelled text input in one call: `textField({ id: 'name', label: 'Name', value, error })`. */
export function inputField(options: InputOptions & { label: string; wide?: boolean }): Html {
  return field({
    id: options.id,
    label: options.label,
    control: input(options),
    hint: options.hint,
    error: options.error,
    wide: options.wide,
  });
}

export function select(options: {
  id: string;
  name?: string;
  choices: { value: string; label: string }[];
  selected?: string;
  error?: string;
}): Html {
  return html`<select id="${options.id}" name="${options.name ?? options.id}"${options.error ? html` aria-invalid="true"` : ''}>
  ${options.choices.map(
    (choice) =>
      html`<option value="${choice.value}"${choice.value === options.selected ? html` selected` : ''}>${choice.label}</option>`,
  )}
</select>`;
}

export type Tone = 'neutral' | 'success' | 'danger' | 'warning' | 'info' | 'accent';

export function badge(text: string, tone: Tone = 'neutral'): Html {
  return html`<span class="badge badge-${tone}">${text}</span>`;
}

/** A status word with the tone that usually goes with it. */
export function statusBadge(status: string): Html {
  const tones: Record<string, Tone> = {
    active: 'success',
    completed: 'success',
    succeeded: 'success',
    published: 'success',
    trialing: 'info',
    queued: 'info',
    dialing: 'info',
    in_progress: 'accent',
    pending: 'warning',
    past_due: 'warning',
    no_answer: 'warning',
    scheduled: 'info',
    blocked: 'danger',
    failed: 'danger',
    revoked: 'danger',
    canceled: 'neutral',
    expired: 'neutral',
    archived: 'neutral',
    draft: 'neutral',
  };
  return badge(status.replace(/_/g, ' '), tones[status] ?? 'neutral');
}

/** A timestamp as people read it, with the exact value for machines and tooltips. */
export function dateTime(iso: string | null | undefined): Html {
  if (!iso) return html`<span class="subtle">—</span>`;
  const date = new Date(iso);
  const text = date.toISOString().replace('T', ' ').slice(0, 16);
  return html`<time datetime="${iso}" title="${iso}">${text} UTC</time>`;
}

export function emptyState(options: { title: string; text: string; action?: Html }): Html {
  return html`<div class="empty-state">
  <h2>${options.title}</h2>
  <p>${options.text}</p>
  ${options.action ?? ''}
</div>`;
}

/** A secret shown once (a new API key, a signing secret) with a copy button. */
export function secretOnce(options: { id: string; label: string; value: string; note: string }): Html {
  return html`<section class="secret-once" aria-labelledby="${options.id}-title">
  <h2 id="${options.id}-title">${options.label}</h2>
  <p>${options.note}</p>
  <div class="copy-field">
    <code id="${options.id}">${options.value}</code>
    <button class="button" type="button" data-copy="${options.id}">Copy</button>
  </div>
</section>`;
}

export interface PaginationBlock {
  page: number;
  limit: number;
  total: number;
  pages: number;
  has_more: boolean;
}

/** "Showing 21–40 of 312" with previous/next links that keep the other query parameters. */
export function pager(
  pagination: PaginationBlock,
  path: string,
  query: Record<string, string | number | undefined>,
): Html {
  const link = (page: number) => {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined && value !== '' && key !== 'page') params.set(key, String(value));
    }
    params.set('page', String(page));
    return `${path}?${params}`;
  };
  const first = pagination.total === 0 ? 0 : (pagination.page - 1) * pagination.limit + 1;
  const last = Math.min(pagination.total, pagination.page * pagination.limit);
  return html`<nav class="pager" aria-label="Pages">
  <span>${pagination.total === 0 ? 'No results' : `Showing ${first}–${last} of ${pagination.total.toLocaleString('en-US')}`}</span>
  <span class="pager-links">
    ${pagination.page > 1 && html`<a class="button button-small" href="${link(pagination.page - 1)}" rel="prev">Previous</a>`}
    ${pagination.has_more && html`<a class="button button-small" href="${link(pagination.page + 1)}" rel="next">Next</a>`}
  </span>
</nav>`;
}

/** A small POST form with one button (revoke, publish, delete); `confirm` asks first when scripts run. */
export function actionButton(options: {
  action: string;
  label: string;
  csrf: Html;
  tone?: 'primary' | 'danger' | 'default';
  confirm?: string;
  small?: boolean;
  fields?: Record<string, string>;
}): Html {
  const tone =
    options.tone === 'primary' ? ' button-primary' : options.tone === 'danger' ? ' button-danger' : '';
  return html`<form method="post" action="${options.action}"${options.confirm ? html` data-confirm="${options.confirm}"` : ''}>
  ${options.csrf}${Object.entries(options.fields ?? {}).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
  <button class="button${tone}${options.small ? ' button-small' : ''}" type="submit">${options.label}</button>
</form>`;
}
