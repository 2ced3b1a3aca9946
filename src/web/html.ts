/**
 * HTML written as tagged templates: every interpolated value is escaped unless it is already
 * `Html` (another template's output, or `raw` for markup we wrote). Arrays are joined, and
 * null, undefined and false render nothing, so `${cond && html`…`}` and `${rows.map(…)}` read
 * naturally. The type checker sees every page, and nothing is compiled at run time.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

function render(value: unknown): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new Html(out);
}

/** Markup we wrote ourselves (never user input). */
export const raw = (markup: string) => new Html(markup);
