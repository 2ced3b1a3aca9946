/**
 * Email templates: files under templates/emails at the repository root (the same path from
 * src/ under tsx and from the compiled dist/). A tenant's file in templates/emails/tenants/<id>/
 * replaces the default of the same name. Files are read once per process.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const DEFAULT_TEMPLATES_DIR = fileURLToPath(new URL('../../templates/emails/', import.meta.url));

/** The placeholders every email has; an email kind may add its own (the reset link). */
export interface TemplateValues {
  tenant_name: string;
  user_name: string;
  user_email: string;
  [placeholder: string]: string;
}

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

/** Renders the named email for a tenant. */
export interface TemplateStore {
  render(name: string, tenantId: string, values: TemplateValues): Promise<RenderedEmail>;
}

const TENANT_ID = /^[A-Za-z0-9_]+$/;
const TEMPLATE_NAME = /^[a-z0-9_-]+$/;

const HTML_ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ENTITIES[c]);
}

export function fill(template: string, values: TemplateValues, encode: (value: string) => string): string {
  return template.replace(/\{\{\s*(\w+)\s*\}\}/g, (whole, key: string) =>
    Object.hasOwn(values, key) ? encode(values[key]) : whole,
  );
}

export function createTemplateStore(dir = DEFAULT_TEMPLATES_DIR): TemplateStore {
  const cache = new Map<string, Promise<string | null>>();

  function read(file: string): Promise<string | null> {
    let content = cache.get(file);
    if (!content) {
      content = fs.readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return null;
        cache.delete(file);
        throw error;
      });
      cache.set(file, content);
    }
    return content;
  }

  async function load(tenantId: string, file: string): Promise<string> {
    if (TENANT_ID.test(tenantId)) {
      const own = await read(path.join(dir, 'tenants', tenantId, file));
      if (own !== null) return own;
    }
    const fallback = await read(path.join(dir, file));
    if (fallback === null) throw new Error(`email template ${file} is missing from ${dir}`);
    return fallback;
  }

  return {
    async render(name, tenantId, values) {
      if (!TEMPLATE_NAME.test(name)) throw new Error(`invalid template name ${name}`);
      const [subject, text, html] = await Promise.all([
        load(tenantId, `${name}.subject.txt`),
        load(tenantId, `${name}.txt`),
        load(tenantId, `${name}.html`),
      ]);
      return {
        // One header line: a line break in a value (or the file's final newline) must not end it.
        subject: fill(subject, values, (v) => v)
          .replace(/\s*[\r\n]+\s*/g, ' ')
          .trim(),
        text: fill(text, values, (v) => v),
        html: fill(html, values, escapeHtml),
      };
    },
  };
}
