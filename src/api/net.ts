/**
 * IP addresses and CIDRs: parsing as the reference's netutils.ParseCIDRSloppy (IPv4 octets may
 * carry leading zeros), the strict checks of IsValidCIDRForLegacyField (StrictIPCIDRValidation
 * on: no leading zeros, no IPv4-mapped IPv6, no bits set beyond the prefix length), and the
 * IPv4 service range (--service-cluster-ip-range) as numbers the allocator counts in.
 */
import { type FieldError, invalidValue } from './validation';

export interface Cidr {
  /** 4 or 16 bytes, masked to the prefix. */
  net: number[];
  /** The address as written (unmasked). */
  ip: number[];
  bits: number;
  /** Leading zeros somewhere (IPv4 octet or prefix length). */
  leadingZeros: boolean;
}

function parseIPv4(s: string): { bytes: number[]; leadingZeros: boolean } | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const bytes: number[] = [];
  let leadingZeros = false;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    if (p.length > 1 && p.startsWith('0')) leadingZeros = true;
    bytes.push(n);
  }
  return { bytes, leadingZeros };
}

function parseIPv6(s: string): { bytes: number[]; leadingZeros: boolean } | undefined {
  let leadingZeros = false;
  let tail: number[] = [];
  let text = s;
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    const v4 = parseIPv4(text.slice(lastColon + 1));
    if (!v4) return undefined;
    leadingZeros = v4.leadingZeros;
    tail = v4.bytes;
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0] as string);
  const rest = halves.length === 2 ? groups(halves[1] as string) : [];
  const all = [...head, ...rest];
  if (all.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
  const missing = 8 - all.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const words = [
    ...head.map((g) => parseInt(g, 16)),
    ...new Array(halves.length === 2 ? missing : 0).fill(0),
    ...rest.map((g) => parseInt(g, 16)),
  ];
  const bytes = words.flatMap((w) => [w >> 8, w & 0xff]);
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return { bytes, leadingZeros };
}

export function parseIP(s: string): { bytes: number[]; leadingZeros: boolean } | undefined {
  return s.includes(':') ? parseIPv6(s) : parseIPv4(s);
}

export function parseCidr(s: string): Cidr | undefined {
  const slash = s.indexOf('/');
  if (slash < 0 || s.indexOf('/', slash + 1) >= 0) return undefined;
  const ipText = s.slice(0, slash);
  const prefix = s.slice(slash + 1);
  if (!/^\d+$/.test(prefix)) return undefined;
  const ip = parseIP(ipText);
  if (!ip) return undefined;
  const bits = Number(prefix);
  if (bits > ip.bytes.length * 8) return undefined;
  const net = ip.bytes.map((b, i) => {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    return b & ((0xff << (8 - keep)) & 0xff);
  });
  return { net, ip: ip.bytes, bits, leadingZeros: ip.leadingZeros || (prefix.length > 1 && prefix.startsWith('0')) };
}

const isV4Mapped = (b: number[]): boolean => b.length === 16 && b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;

/** IsValidCIDRForLegacyField with strict validation; values in `allowed` are not checked again. */
export function validateCidr(path: string, value: string, allowed: readonly string[] = []): FieldError[] {
  if (allowed.includes(value)) return [];
  const c = parseCidr(value);
  if (!c) return [invalidValue(path, value, 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)')];
  if (c.leadingZeros) return [invalidValue(path, value, 'must not have leading 0s in IP or prefix length')];
  if (isV4Mapped(c.ip)) return [invalidValue(path, value, 'must not have an IPv4-mapped IPv6 address')];
  if (c.ip.some((b, i) => b !== c.net[i])) return [invalidValue(path, value, 'must not have bits set beyond the prefix length')];
  return [];
}

/** Whether `inner` lies inside `outer` and is strictly smaller (NetworkPolicy ipBlock.except). */
export function strictSubset(outer: Cidr, inner: Cidr): boolean {
  if (outer.net.length !== inner.net.length) return false;
  const contains = outer.net.every((b, i) => {
    const keep = Math.max(0, Math.min(8, outer.bits - i * 8));
    const mask = (0xff << (8 - keep)) & 0xff;
    return ((inner.net[i] as number) & mask) === b;
  });
  return contains && outer.bits < inner.bits;
}

/** An IPv4 range as numbers: its first address (the network's) and how many addresses it holds. */
export interface IPv4Range {
  base: number;
  size: number;
  /** As given. */
  text: string;
}

/** An IPv4 CIDR of at most /30 ("10.0.0.0/24"); throws on anything else (a flag's value). */
export function parseIPv4Range(s: string): IPv4Range {
  if (!/^\d{1,3}(?:\.\d{1,3}){3}\/\d{1,2}$/.test(s)) throw new Error(`invalid IPv4 CIDR ${JSON.stringify(s)}`);
  const c = parseCidr(s);
  if (c === undefined || c.bits > 30) throw new Error(`invalid service IP range ${s}: at most /30 IPv4`);
  return { base: c.net.reduce((a, o) => a * 256 + o, 0), size: 2 ** (32 - c.bits), text: s };
}

/** An IPv4 address as a number (dotted quad, octets up to 255), or undefined. */
export function ipv4ToNumber(s: string): number | undefined {
  const ip = s.includes(':') ? undefined : parseIP(s);
  return ip === undefined ? undefined : ip.bytes.reduce((a, o) => a * 256 + o, 0);
}

/** The dotted quad of an IPv4 address given as a number. */
export function ipv4ToString(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** An address as Go's net.IP.String() prints it: dotted IPv4, RFC 5952 IPv6 (longest zero run as ::). */
export function formatIP(bytes: readonly number[]): string {
  if (bytes.length === 4) return bytes.join('.');
  const words: number[] = [];
  for (let i = 0; i < 16; i += 2) words.push(((bytes[i] as number) << 8) | (bytes[i + 1] as number));
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && words[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (ws: number[]) => ws.map((w) => w.toString(16)).join(':');
  if (best < 0) return hex(words);
  return `${hex(words.slice(0, best))}::${hex(words.slice(best + bestLen))}`;
}

const IP_EXAMPLE = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';

/** IsValidIPForLegacyField (strict): a parseable address without leading 0s, not IPv4-mapped; `allowed` (the stored values) pass. */
export function validateIPForLegacyField(path: string, value: string, allowed: readonly string[] = []): FieldError[] {
  if (allowed.includes(value)) return [];
  const ip = parseIP(value);
  if (!ip) return [invalidValue(path, value, IP_EXAMPLE)];
  const errs: FieldError[] = [];
  if (ip.leadingZeros) errs.push(invalidValue(path, value, 'must not have leading 0s'));
  if (isV4Mapped(ip.bytes)) errs.push(invalidValue(path, value, 'must not be an IPv4-mapped IPv6 address'));
  return errs;
}

/** IsValidIP (apimachinery util/validation, strict): a valid address in canonical form. */
export function validateIP(path: string, value: string): FieldError[] {
  const ip = parseIP(value);
  const errs = validateIPForLegacyField(path, value);
  if (!ip || errs.length > 0) return errs;
  const canonical = formatIP(ip.bytes);
  return value === canonical ? [] : [invalidValue(path, value, `must be in canonical form (${JSON.stringify(canonical)})`)];
}

/** IsValidCIDR (strict): a valid CIDR in canonical form (no bits beyond the prefix). */
export function validateCanonicalCidr(path: string, value: string): FieldError[] {
  const c = parseCidr(value);
  if (!c) return [invalidValue(path, value, 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)')];
  if (c.leadingZeros) return [invalidValue(path, value, 'must not have leading 0s in IP or prefix length')];
  if (isV4Mapped(c.ip)) return [invalidValue(path, value, 'must not have an IPv4-mapped IPv6 address')];
  const canonical = `${formatIP(c.net)}/${c.bits}`;
  return value === canonical ? [] : [invalidValue(path, value, `must be in canonical form (${JSON.stringify(canonical)})`)];
}

/** The IP family of a CIDR or address text (4, 6), or 0 when it does not parse. */
export function ipFamily(s: string): 0 | 4 | 6 {
  const ip = parseIP(s.split('/')[0] ?? '');
  return ip ? (ip.bytes.length === 4 ? 4 : 6) : 0;
}
