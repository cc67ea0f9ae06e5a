/**
 * The egress policy: which addresses convoy's outbound clients may connect to on a tenant's behalf
 * (Git over HTTP(S), Helm repositories, OCI registries and their token realms, ECR). A tenant names
 * the URL; without this policy a Release could make the functions knock on the management network
 * (the apiserver, convoy's own API, a metadata endpoint) and read the answer's class in its status.
 *
 * The decision for one connection — the host as the URL names it, the port, and the address the
 * name resolved to (or the literal) — in this order:
 * 1. `unspecified` (0.0.0.0/8, ::) and `multicast` are refused, whatever the allow list says
 *    (a connection to 0.0.0.0 reaches the local host);
 * 2. an allow entry naming this host or this IP (with this port, when the entry has one) allows it;
 * 3. an address in the cluster's networks (`clusterNetworks`: Service and Pod CIDRs) is refused
 *    (`cluster-network`) — a wider allowed CIDR does not open it, only an exact entry (2) does;
 * 4. an allowed CIDR containing the address (with this port, when the entry has one) allows it;
 * 5. `loopback` (127.0.0.0/8, ::1), `link-local` (169.254.0.0/16, fe80::/10), `reserved`
 *    (192.0.0.0/24, 198.18.0.0/15, 240.0.0.0/4, 100::/64) and `private` (10/8, 172.16/12, 192.168/16,
 *    100.64/10, fc00::/7, fec0::/10) are refused;
 * 6. anything else (a public address) is allowed.
 * IPv6 addresses that carry an IPv4 address (mapped, compatible, NAT64, 6to4) are judged as that
 * IPv4 address too. Pure: the adapter (adapters/egress/) resolves and connects.
 */
import {
  canonicalIp,
  cidrContains,
  embeddedIpv4,
  formatCidr,
  formatIp,
  parseCidr,
  parseIp,
  type Cidr,
  type IpAddress,
} from './ip.ts';

export type EgressRule =
  'unspecified' | 'multicast' | 'loopback' | 'link-local' | 'reserved' | 'private' | 'cluster-network';

/** One entry of the allow list. */
export type AllowEntry =
  | { readonly kind: 'host'; readonly host: string; readonly port?: number | undefined }
  | { readonly kind: 'suffix'; readonly suffix: string; readonly port?: number | undefined }
  | { readonly kind: 'ip'; readonly ip: IpAddress; readonly port?: number | undefined }
  | { readonly kind: 'cidr'; readonly cidr: Cidr };

export interface EgressPolicy {
  readonly allow: readonly AllowEntry[];
  /** The cluster's Service and Pod CIDRs, refused even inside an allowed CIDR. */
  readonly clusterNetworks: readonly Cidr[];
}

/** Nothing allowed beyond public addresses: what an installation that sets nothing gets. */
export const STRICT_EGRESS: EgressPolicy = Object.freeze({
  allow: Object.freeze([]),
  clusterNetworks: Object.freeze([]),
});

/**
 * Every address but the unspecified one and multicast: for requests made from a user's own machine
 * with the user's own network access (the CLI's local render), where convoy's network position is
 * not what is at stake.
 */
export const USER_MACHINE_EGRESS: EgressPolicy = Object.freeze({
  allow: Object.freeze([
    { kind: 'cidr', cidr: { ip: { family: 4, bytes: [0, 0, 0, 0] }, bits: 0 } },
    { kind: 'cidr', cidr: { ip: { family: 6, bytes: Array<number>(16).fill(0) }, bits: 0 } },
  ] as const),
  clusterNetworks: Object.freeze([]),
});

export type EgressDecision =
  { readonly allowed: true } | { readonly allowed: false; readonly rule: EgressRule };

const RANGES: readonly (readonly [EgressRule, string])[] = [
  ['unspecified', '0.0.0.0/8'],
  ['unspecified', '::/128'],
  ['multicast', '224.0.0.0/4'],
  ['multicast', 'ff00::/8'],
  ['loopback', '127.0.0.0/8'],
  ['loopback', '::1/128'],
  ['link-local', '169.254.0.0/16'],
  ['link-local', 'fe80::/10'],
  ['reserved', '192.0.0.0/24'],
  ['reserved', '198.18.0.0/15'],
  ['reserved', '240.0.0.0/4'],
  ['reserved', '100::/64'],
  ['private', '10.0.0.0/8'],
  ['private', '172.16.0.0/12'],
  ['private', '192.168.0.0/16'],
  ['private', '100.64.0.0/10'],
  ['private', 'fc00::/7'],
  ['private', 'fec0::/10'],
];
const CLASSES: readonly (readonly [EgressRule, Cidr])[] = RANGES.map(
  ([rule, text]) => [rule, parseCidr(text)!] as const,
);

/** The rule an address falls under by itself (no allow list), or undefined for a public address. */
export function classifyAddress(address: IpAddress): EgressRule | undefined {
  const ip = canonicalIp(address);
  const own = CLASSES.find(([, cidr]) => cidrContains(cidr, ip))?.[0];
  if (own !== undefined) return own;
  const inner = embeddedIpv4(ip);
  return inner === undefined ? undefined : classifyAddress(inner);
}

/** A host name as entries and URLs are compared: lower case. */
export function normalHost(host: string): string {
  return host.toLowerCase();
}

function portMatches(entryPort: number | undefined, port: number): boolean {
  return entryPort === undefined || entryPort === port;
}

function sameIp(a: IpAddress, b: IpAddress): boolean {
  const x = canonicalIp(a);
  const y = canonicalIp(b);
  return x.family === y.family && x.bytes.every((v, i) => v === y.bytes[i]);
}

/**
 * Whether convoy may connect to `address` (the literal, or what `host` resolved to) on `port` for
 * a URL naming `host`. The order is this file's header's.
 */
export function decideEgress(
  policy: EgressPolicy,
  target: { host: string; port: number; address: IpAddress },
): EgressDecision {
  const { port, address } = target;
  const host = normalHost(target.host);
  const own = classifyAddress(address);
  if (own === 'unspecified' || own === 'multicast') return { allowed: false, rule: own };
  const exact = policy.allow.some(
    (e) =>
      (e.kind === 'host' && e.host === host && portMatches(e.port, port)) ||
      (e.kind === 'suffix' && host.endsWith(e.suffix) && portMatches(e.port, port)) ||
      (e.kind === 'ip' && sameIp(e.ip, address) && portMatches(e.port, port)),
  );
  if (exact) return { allowed: true };
  const inner = embeddedIpv4(canonicalIp(address));
  const inCluster = (ip: IpAddress) => policy.clusterNetworks.some((c) => cidrContains(c, ip));
  if (inCluster(address) || (inner !== undefined && inCluster(inner)))
    return { allowed: false, rule: 'cluster-network' };
  if (policy.allow.some((e) => e.kind === 'cidr' && cidrContains(e.cidr, address))) return { allowed: true };
  return own === undefined ? { allowed: true } : { allowed: false, rule: own };
}

/** A bad egress setting; the message names the setting and the entry. */
export class EgressSettingError extends Error {
  override name = 'EgressSettingError';
}

const HOST_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function parsePort(text: string, entry: string, setting: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 1 && port <= 65535))
    throw new EgressSettingError(`${setting}: ${JSON.stringify(entry)} has no valid port (1-65535)`);
  return port;
}

function parseEntry(entry: string, setting: string): AllowEntry {
  const cidr = parseCidr(entry);
  if (cidr !== undefined) return { kind: 'cidr', cidr };
  if (/^[0-9a-f:.]+\/\d*$/.test(entry))
    throw new EgressSettingError(
      `${setting}: ${JSON.stringify(entry)} is not a CIDR (e.g. 10.0.0.0/8, fd00::/8)`,
    );
  const forms = 'none of CIDR, IP[:port], [IPv6]:port, host[:port] or *.domain[:port]';
  if (/[/@]/.test(entry))
    throw new EgressSettingError(
      `${setting}: ${JSON.stringify(entry)} is ${forms} (no scheme, path or user)`,
    );
  // [v6]:port, [v6], v6 (no port), v4[:port], host[:port], *.suffix[:port]
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracket) {
    const ip = parseIp(bracket[1]);
    if (ip === undefined || ip.family !== 6)
      throw new EgressSettingError(`${setting}: ${JSON.stringify(entry)} is not an IPv6 address in brackets`);
    return {
      kind: 'ip',
      ip,
      port: bracket[2] === undefined ? undefined : parsePort(bracket[2], entry, setting),
    };
  }
  if ((entry.match(/:/g) ?? []).length > 1) {
    const ip = parseIp(entry);
    if (ip === undefined)
      throw new EgressSettingError(
        `${setting}: ${JSON.stringify(entry)} is not an IPv6 address (write [addr]:port for a port)`,
      );
    return { kind: 'ip', ip };
  }
  const colon = entry.lastIndexOf(':');
  const name = colon < 0 ? entry : entry.slice(0, colon);
  const portOf = () => (colon < 0 ? undefined : parsePort(entry.slice(colon + 1), entry, setting));
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(name)) {
    const ip = parseIp(name);
    if (ip === undefined)
      throw new EgressSettingError(`${setting}: ${JSON.stringify(entry)} is not an IPv4 address`);
    return { kind: 'ip', ip, port: portOf() };
  }
  const wildcard = name.startsWith('*.');
  const bare = wildcard ? name.slice(2) : name;
  if (!HOST_NAME.test(bare) || bare.length > 253 || parseIp(bare) !== undefined) {
    throw new EgressSettingError(
      `${setting}: ${JSON.stringify(entry)} is ${forms}` +
        (name.endsWith('.') ? ' (write the host without a trailing dot)' : ''),
    );
  }
  const port = portOf();
  return wildcard ? { kind: 'suffix', suffix: `.${bare}`, port } : { kind: 'host', host: bare, port };
}

/** The allow list from its text: entries separated by commas (or white space); empty: none. */
export function parseEgressAllow(text: string | undefined, setting: string): AllowEntry[] {
  const entries = (text ?? '')
    .split(/[\s,]+/)
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== '');
  return entries.map((e) => parseEntry(e, setting));
}

/** The cluster's networks from their text: CIDRs separated by commas; empty: none known. */
export function parseClusterNetworks(text: string | undefined, setting: string): Cidr[] {
  const entries = (text ?? '')
    .split(/[\s,]+/)
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== '');
  return entries.map((e) => {
    const cidr = parseCidr(e);
    if (cidr === undefined)
      throw new EgressSettingError(`${setting}: ${JSON.stringify(e)} is not a CIDR (e.g. 10.96.0.0/12)`);
    return cidr;
  });
}

/** An entry as the settings write it (for banners and messages). */
export function formatAllowEntry(entry: AllowEntry): string {
  const withPort = (text: string, port: number | undefined) =>
    port === undefined ? text : `${text}:${port}`;
  switch (entry.kind) {
    case 'host':
      return withPort(entry.host, entry.port);
    case 'suffix':
      return withPort(`*${entry.suffix}`, entry.port);
    case 'ip':
      return entry.ip.family === 6 && entry.port !== undefined
        ? `[${formatIp(entry.ip)}]:${entry.port}`
        : withPort(formatIp(entry.ip), entry.port);
    case 'cidr':
      return formatCidr(entry.cidr);
  }
}

/** What each rule means, for messages: `refused by the egress policy (loopback address)`. */
export function describeRule(rule: EgressRule): string {
  switch (rule) {
    case 'cluster-network':
      return "an address in the cluster's Service or Pod network";
    case 'unspecified':
      return 'the unspecified address';
    default:
      return `a ${rule} address`;
  }
}
