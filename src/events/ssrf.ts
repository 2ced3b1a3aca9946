/**
 * Event webhook URLs: https only (http too where private targets are allowed), no credentials,
 * and a host the outbound guard accepts (src/core/security/outbound-addresses.ts).
 */
import { checkHost, type HostResolver, type ResolvedAddress } from '../core/security/outbound-addresses.js';

export type UrlCheck = { ok: true; url: URL; addresses: ResolvedAddress[] } | { ok: false; issue: string };

/**
 * Checks a webhook URL: its scheme, then (unless private targets are allowed) every address its
 * host resolves to. The addresses are returned so the caller connects to exactly those.
 */
export async function checkWebhookUrl(
  raw: string,
  options: { allowPrivate: boolean; resolve: HostResolver },
): Promise<UrlCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, issue: 'must be an absolute URL.' };
  }
  const schemes = options.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    return {
      ok: false,
      issue: options.allowPrivate ? 'must be an http or https URL.' : 'must be an https URL.',
    };
  }
  if (url.username || url.password) return { ok: false, issue: 'must not carry credentials.' };
  const host = await checkHost(url.hostname, options);
  return host.ok ? { ok: true, url, addresses: host.addresses } : host;
}
