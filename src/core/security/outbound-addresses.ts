/**
 * The SSRF guard of every connection a tenant or partner names (event webhooks, a tenant's SMTP
 * server): this process connects there, so the host must not reach the platform's own network
 * (loopback, private ranges, link-local, cloud metadata). The host is resolved and every address
 * checked; the caller then connects to a checked address itself (see `lookupFor`), so a name that
 * resolves elsewhere between the check and the connection cannot slip through.
 * WEBHOOK_ALLOW_PRIVATE / SMTP_ALLOW_PRIVATE turn the guard off for each.
 */

import dns from 'node:dns';
import { BlockList, isIP } from 'node:net';

export interface ResolvedAddress {
  address: string;
  /** 4 or 6. */
  family: number;
}

/** Every address a host name resolves to (tests inject their own). */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: HostResolver = (hostname) =>
  dns.promises.lookup(hostname, { all: true, verbatim: true });

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  // ::/96 holds :: (unspecified), ::1 (loopback) and the deprecated IPv4-compatible forms.
  ['::', 96],
  ['fe80::', 10],
  // Unique-local, which holds the EC2 metadata address fd00:ec2::254.
  ['fc00::', 7],
  ['ff00::', 8],
  // 6to4 and Teredo carry an IPv4 address (Teredo's obfuscated) that may be a private one.
  ['2002::', 16],
  ['2001::', 32],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** The eight 16-bit groups of an IPv6 address (with an embedded dotted IPv4 tail, if any). */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = `${text.slice(0, -dotted[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const parse = (part: string | undefined) =>
    part ? part.split(':').map((g) => Number.parseInt(g, 16)) : [];
  const left = parse(head);
  const right = parse(tail);
  const groups =
    tail === undefined ? left : [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff)
    ? groups
    : undefined;
}

/** The IPv4 address an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) IPv6 address carries. */
function embeddedIpv4(groups: number[]): string | undefined {
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0);
  if (!mapped && !nat64) return undefined;
  return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join('.');
}

/** True when the address is one a tenant-named connection must not reach (or not an address at all). */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address.replace(/%.*$/, ''));
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const groups = ipv6Groups(address);
  if (!groups) return true;
  const v4 = embeddedIpv4(groups);
  if (v4) return blocked.check(v4, 'ipv4');
  return blocked.check(address.replace(/%.*$/, ''), 'ipv6');
}

/**
 * A host name's lookup is given up after this long and treated as not resolving (a save is
 * refused, a send retried later): a tenant-chosen name whose DNS never answers must not hold a
 * request, or a job, for the resolver's own timeouts (tens of seconds).
 */
export const RESOLVE_TIMEOUT_MS = 5_000;

export type HostCheck =
  | { ok: true; addresses: ResolvedAddress[] }
  /** `unresolved` may pass later (DNS); `forbidden` stays refused. */
  | { ok: false; reason: 'unresolved' | 'forbidden'; issue: string };

/**
 * The addresses `host` (a name or an IP literal, IPv6 with or without brackets) may be reached
 * at: every one it resolves to, each checked unless private targets are allowed.
 */
export async function checkHost(
  host: string,
  options: { allowPrivate: boolean; resolve: HostResolver; timeoutMs?: number },
): Promise<HostCheck> {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  let addresses: ResolvedAddress[];
  if (isIP(bare)) {
    addresses = [{ address: bare, family: isIP(bare) }];
  } else {
    const timeoutMs = options.timeoutMs ?? RESOLVE_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    try {
      addresses = await Promise.race([
        options.resolve(bare),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
        }),
      ]);
    } catch {
      return { ok: false, reason: 'unresolved', issue: `the host ${bare} does not resolve.` };
    } finally {
      clearTimeout(timer);
    }
    if (addresses.length === 0) {
      return { ok: false, reason: 'unresolved', issue: `the host ${bare} does not resolve.` };
    }
  }
  if (!options.allowPrivate && addresses.some((a) => isForbiddenAddress(a.address))) {
    return {
      ok: false,
      reason: 'forbidden',
      issue: 'must not point at a loopback, private, link-local or metadata address.',
    };
  }
  return { ok: true, addresses };
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | ResolvedAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for node:http(s) that answers the addresses already checked, never asking DNS again:
 * the connection goes where the guard looked.
 */
export function lookupFor(addresses: ResolvedAddress[]) {
  return (_hostname: string, options: { all?: boolean }, callback: LookupCallback) => {
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  };
}
