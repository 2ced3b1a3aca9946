/**
 * The brand's colour as the portal's accent: one small stylesheet per tenant (`{base}/brand.css`),
 * served from the portal's own origin because the Content Security Policy allows no inline styles.
 * Any #rrggbb an agency picks stays readable: text on the accent is white or near-black, whichever
 * contrasts more, and links use the accent darkened until it reaches WCAG AA (4.5:1) on white.
 */
import crypto from 'node:crypto';
import type { Brand } from '../branding/service.js';

/** The accent of a tenant that has not chosen one: a quiet blue, nothing of the platform's own. */
export const DEFAULT_ACCENT = '#2f5bd3';
const DARK_TEXT = '#111827';
const WHITE = '#ffffff';
const AA = 4.5;

type Rgb = [number, number, number];

function parseHex(color: string): Rgb | undefined {
  const match = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color);
  if (!match) return undefined;
  return [Number.parseInt(match[1], 16), Number.parseInt(match[2], 16), Number.parseInt(match[3], 16)];
}

const toHex = (rgb: Rgb) => `#${rgb.map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;

/** WCAG relative luminance. */
function luminance(rgb: Rgb): number {
  const [r, g, b] = rgb.map((channel) => {
    const c = channel / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrastRatio(a: string, b: string): number {
  const la = luminance(parseHex(a) ?? [0, 0, 0]);
  const lb = luminance(parseHex(b) ?? [0, 0, 0]);
  return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05);
}

/** The accent darkened (mixed with black) in small steps until it reads on white. */
function readableOnWhite(color: string): string {
  const rgb = parseHex(color) ?? (parseHex(DEFAULT_ACCENT) as Rgb);
  for (let black = 0; black <= 1; black += 0.05) {
    const mixed = toHex(rgb.map((c) => c * (1 - black)) as Rgb);
    if (contrastRatio(mixed, WHITE) >= AA) return mixed;
  }
  return DARK_TEXT;
}

export interface AccentTokens {
  accent: string;
  /** Text on an accent background. */
  onAccent: string;
  /** The accent as text (links, the current tab) on white. */
  ink: string;
}

export function accentTokens(primaryColor: string | null): AccentTokens {
  const accent = (primaryColor && parseHex(primaryColor) ? primaryColor : DEFAULT_ACCENT).toLowerCase();
  const onAccent = contrastRatio(accent, WHITE) >= contrastRatio(accent, DARK_TEXT) ? WHITE : DARK_TEXT;
  return { accent, onAccent, ink: readableOnWhite(accent) };
}

/** The stylesheet body: the design tokens the portal's stylesheet reads. */
export function brandStylesheet(brand: Brand): string {
  const tokens = accentTokens(brand.primaryColor);
  return `:root{--accent:${tokens.accent};--on-accent:${tokens.onAccent};--accent-ink:${tokens.ink};}\n`;
}

/** The portal's icon: the brand's initial on its colour (a logo URL may not be square or small). */
export function brandFavicon(brand: Brand): string {
  const tokens = accentTokens(brand.primaryColor);
  const initial = escapeXml(Array.from(brand.name.trim())[0]?.toUpperCase() ?? '');
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="${tokens.accent}"/><text x="16" y="22" text-anchor="middle" font-family="system-ui, sans-serif" font-size="18" font-weight="700" fill="${tokens.onAccent}">${initial}</text></svg>`;
}

const escapeXml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/** A short version for the stylesheet's URL, so a new colour is fetched at once. */
export function brandStylesheetVersion(brand: Brand): string {
  return crypto.createHash('sha256').update(brandStylesheet(brand)).digest('hex').slice(0, 10);
}

/** The origin of an https logo, for the Content Security Policy's img-src; undefined otherwise. */
export function logoOrigin(logoUrl: string | null): string | undefined {
  if (!logoUrl) return undefined;
  try {
    const url = new URL(logoUrl);
    return url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}
