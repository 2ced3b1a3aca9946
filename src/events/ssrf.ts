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
    if (url.protocol === 'http:' && (await isPrivateTarget(url.hostname, options))) {
      return {
        ok: false,
        issue: `must be an https URL on a public address, not http:// on a local one (${DEVELOPMENT}).`,
      };
    }
    return {
      ok: false,
      issue: options.allowPrivate ? 'must be an http or https URL.' : 'must be an https URL.',
    };
  }
  if (url.username || url.password) return { ok: false, issue: 'must not carry credentials.' };
  const host = await checkHost(url.hostname, options);
  if (host.ok) return { ok: true, url, addresses: host.addresses };
  if (host.reason === 'forbidden')
    return { ok: false, issue: `${host.issue.replace(/\.$/, '')} (${DEVELOPMENT}).` };
  return host;
}

/** Where a developer testing against their own machine learns how to allow it. */
const DEVELOPMENT =
  'for development against your own machine, start the server with WEBHOOK_ALLOW_PRIVATE=true, which accepts http:// and private addresses';

async function isPrivateTarget(hostname: string, options: { allowPrivate: boolean; resolve: HostResolver }) {
  const host = await checkHost(hostname, options).catch(() => undefined);
  return host !== undefined && !host.ok && host.reason === 'forbidden';
}
