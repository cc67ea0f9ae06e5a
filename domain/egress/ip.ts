/**
 * IP address literals as an egress check must read them — every spelling a URL parser, a resolver
 * or the kernel would accept for the same address, so none slips past the policy:
 * - IPv4 in the forms inet_aton (and the WHATWG URL parser) accept: 1 to 4 parts, each decimal,
 *   octal (leading 0) or hex (0x): `127.0.0.1`, `2130706433`, `0177.0.0.1`, `0x7f.1`, `127.1`;
 * - IPv6, bracketed or not, with a zone (`%eth0`, dropped) and a trailing dotted IPv4 part
 *   (`::ffff:127.0.0.1`).
 * An IPv6 address that carries an IPv4 one (IPv4-mapped `::ffff:0:0/96`, IPv4-compatible `::/96`,
 * NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) is checked as that IPv4 address too (embeddedIpv4).
 * Pure: no resolver, no network.
 */

export interface IpAddress {
  readonly family: 4 | 6;
  /** 4 or 16 bytes, network order. */
  readonly bytes: readonly number[];
}

function ipv4Part(text: string): number | undefined {
  if (text === '') return undefined;
  let digits = text;
  let radix = 10;
  if (/^0[xX]/.test(text)) {
    digits = text.slice(2);
    radix = 16;
    if (digits === '') return 0;
    if (!/^[0-9a-fA-F]+$/.test(digits)) return undefined;
  } else if (text.length > 1 && text.startsWith('0')) {
    digits = text.slice(1);
    radix = 8;
    if (!/^[0-7]+$/.test(digits)) return undefined;
  } else if (!/^[0-9]+$/.test(text)) {
    return undefined;
  }
  // Long digit strings stay exact enough: anything over 2^32 is refused below anyway.
  const value = digits.length > 12 ? Number.POSITIVE_INFINITY : parseInt(digits, radix);
  return Number.isFinite(value) ? value : Number.POSITIVE_INFINITY;
}

/** IPv4 in inet_aton's forms; undefined when `text` is not one (a host name, or out of range). */
export function parseIpv4(text: string): IpAddress | undefined {
  const parts = text.split('.');
  if (parts.length > 4) return undefined;
  const values: number[] = [];
  for (const part of parts) {
    const value = ipv4Part(part);
    if (value === undefined) return undefined;
    values.push(value);
  }
  const last = values.pop()!;
  if (values.some((v) => v > 255)) return undefined;
  if (last >= 256 ** (4 - values.length)) return undefined;
  const bytes = [...values];
  for (let i = 4 - values.length - 1; i >= 0; i--) bytes.push(Math.floor(last / 256 ** i) % 256);
  return { family: 4, bytes };
}

/** IPv6 (brackets and a zone allowed); undefined when `text` is not one. */
export function parseIpv6(text: string): IpAddress | undefined {
  let body = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = body.indexOf('%');
  if (zone >= 0) body = body.slice(0, zone);
  if (!body.includes(':') || !/^[0-9a-fA-F:.]+$/.test(body)) return undefined;
  const halves = body.split('::');
  if (halves.length > 2) return undefined;
  const groupsOf = (half: string): number[] | undefined => {
    if (half === '') return [];
    const out: number[] = [];
    const pieces = half.split(':');
    for (const [i, piece] of pieces.entries()) {
      if (piece.includes('.')) {
        // A dotted IPv4 tail, in strict dotted-quad form only (as RFC 4291 writes it).
        if (i !== pieces.length - 1 || !/^\d{1,3}(\.\d{1,3}){3}$/.test(piece)) return undefined;
        const v4 = piece.split('.').map(Number);
        if (v4.some((n) => n > 255)) return undefined;
        out.push(v4[0] * 256 + v4[1], v4[2] * 256 + v4[3]);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(piece)) return undefined;
        out.push(parseInt(piece, 16));
      }
    }
    return out;
  };
  const head = groupsOf(halves[0]);
  const tail = halves.length === 2 ? groupsOf(halves[1]) : [];
  if (head === undefined || tail === undefined) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  return { family: 6, bytes: groups.flatMap((g) => [g >> 8, g & 0xff]) };
}

/** An IP literal in any of the forms above; undefined for a host name. */
export function parseIp(text: string): IpAddress | undefined {
  return parseIpv6(text) ?? parseIpv4(text);
}

function startsWith(bytes: readonly number[], prefix: readonly number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

/** The IPv4 address an IPv6 one carries (mapped, compatible, NAT64, 6to4); undefined when none. */
export function embeddedIpv4(ip: IpAddress): IpAddress | undefined {
  if (ip.family === 4) return undefined;
  const b = ip.bytes;
  const zeros = (n: number) => b.slice(0, n).every((x) => x === 0);
  if (zeros(10) && b[10] === 0xff && b[11] === 0xff) return { family: 4, bytes: b.slice(12) };
  // IPv4-compatible (`::a.b.c.d`), but not `::` and `::1`, which are IPv6's own.
  if (zeros(12) && !(b[12] === 0 && b[13] === 0 && b[14] === 0 && b[15] <= 1))
    return { family: 4, bytes: b.slice(12) };
  if (startsWith(b, [0x00, 0x64, 0xff, 0x9b]) && b.slice(4, 12).every((x) => x === 0))
    return { family: 4, bytes: b.slice(12) };
  if (b[0] === 0x20 && b[1] === 0x02) return { family: 4, bytes: b.slice(2, 6) };
  return undefined;
}

/** The address a connection to `ip` reaches: an IPv4-mapped IPv6 address is its IPv4 address. */
export function canonicalIp(ip: IpAddress): IpAddress {
  const b = ip.bytes;
  if (ip.family === 6 && b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff)
    return { family: 4, bytes: b.slice(12) };
  return ip;
}

export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) return ip.bytes.join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(ip.bytes[i] * 256 + ip.bytes[i + 1]);
  // The longest run of zero groups (two or more) becomes `::` (RFC 5952).
  let best = { at: -1, len: 0 };
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.len && j - i > 1) best = { at: i, len: j - i };
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.at < 0) return hex.join(':');
  return `${hex.slice(0, best.at).join(':')}::${hex.slice(best.at + best.len).join(':')}`;
}

export interface Cidr {
  readonly ip: IpAddress;
  readonly bits: number;
}

/** `10.0.0.0/8`, `fd00::/8`; undefined when not a CIDR (the address part in strict dotted or IPv6 form). */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const addressText = text.slice(0, slash);
  const bitsText = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bitsText)) return undefined;
  const ip = addressText.includes(':')
    ? parseIpv6(addressText)
    : /^\d{1,3}(\.\d{1,3}){3}$/.test(addressText)
      ? parseIpv4(addressText)
      : undefined;
  if (ip === undefined) return undefined;
  const bits = Number(bitsText);
  if (bits > ip.bytes.length * 8) return undefined;
  return { ip, bits };
}

export function cidrContains(cidr: Cidr, address: IpAddress): boolean {
  const ip = canonicalIp(address);
  if (cidr.ip.family !== ip.family) return false;
  for (let bit = 0; bit < cidr.bits; bit++) {
    const byte = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if ((cidr.ip.bytes[byte] & mask) !== (ip.bytes[byte] & mask)) return false;
  }
  return true;
}

export function formatCidr(cidr: Cidr): string {
  return `${formatIp(cidr.ip)}/${cidr.bits}`;
}
