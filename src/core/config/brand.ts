/**
 * The operator's brand as the environment sets it (PLATFORM_NAME, PLATFORM_LOGO_URL,
 * PLATFORM_COLOR): the platform's name, logo and colour wherever it speaks for itself. The
 * operator console may override each (src/platform-brand/); these are the defaults under it.
 */
import { ConfigError, type Env, readUrl } from './readers.js';

export interface PlatformBrandConfig {
  name: string;
  logoUrl: string | null;
  /** #rrggbb */
  color: string;
}

export const DEFAULT_PLATFORM_NAME = 'voiceplane';
export const DEFAULT_PLATFORM_COLOR = '#4f46e5';
export const HEX_COLOR = /^#[0-9a-fA-F]{6}$/;

export function readPlatformBrand(env: Env): PlatformBrandConfig {
  const name = (env.PLATFORM_NAME ?? '').trim() || DEFAULT_PLATFORM_NAME;
  if (name.length > 60 || /\p{Cc}/u.test(name)) {
    throw new ConfigError('PLATFORM_NAME', 'must be 1-60 characters without control characters');
  }
  const color = (env.PLATFORM_COLOR ?? '').trim() || DEFAULT_PLATFORM_COLOR;
  if (!HEX_COLOR.test(color))
    throw new ConfigError('PLATFORM_COLOR', `must be a #rrggbb colour, got "${color}"`);
  const logoUrl = readUrl(env, 'PLATFORM_LOGO_URL', ['https:']) ?? null;
  return { name, logoUrl, color: color.toLowerCase() };
}
