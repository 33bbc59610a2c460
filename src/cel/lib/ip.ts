/**
 * IP and CIDR libraries (the reference's library.IP and library.CIDR, Kubernetes 1.30+).
 *
 *   ip('127.0.0.1').family()                                   4
 *   ip('::ffff:1.2.3.4')                                       error (IPv4-mapped IPv6 is refused)
 *   ip.isCanonical('2001:DB8::ABCD')                           false
 *   string(ip('2001:db8:0:0:0::abcd'))                         '2001:db8::abcd'
 *   cidr('192.168.0.0/16').containsCIDR('192.168.10.0/24')     true
 *   cidr('192.168.0.1/24').masked()                            cidr('192.168.0.0/24')
 *
 * Types `net.IP` and `net.CIDR` (the names `type()` reports; `net.IP` and `net.CIDR` are usable as
 * type values, e.g. `type(x) == net.IP`). Parsing follows Go's net/netip (ParseAddr, ParsePrefix)
 * step by step, error texts included; an address is held as a bigint with its family (4 or 6).
 * `==` compares addresses (and, for CIDRs, the prefix length and the address as written).
 */
import type { Environment } from '@marcbachmann/cel-js';

const IPV4_BITS = 32;
const IPV6_BITS = 128;

/** An IPv4 or IPv6 address (never zoned, never IPv4-mapped IPv6 once built by `ip()`). */
export class IPAddr {
  constructor(
    readonly family: 4 | 6,
    /** The address as an unsigned integer of 32 (IPv4) or 128 (IPv6) bits. */
    readonly value: bigint,
  ) {}

  get bitLen(): number {
    return this.family === 4 ? IPV4_BITS : IPV6_BITS;
  }

  toString(): string {
    return formatAddr(this);
  }
}

/** A network: an address (as written, host bits possibly set) and a prefix length. */
export class CIDR {
  constructor(
    readonly addr: IPAddr,
    readonly bits: number,
  ) {}

  toString(): string {
    return `${formatAddr(this.addr)}/${this.bits}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Go's strconv.Quote, for the %q in error texts.

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
const SHORT_ESCAPES: Record<string, string> = {
  '\u0007': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '\\': '\\\\',
  '"': '\\"',
};

function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const short = SHORT_ESCAPES[ch];
    if (short !== undefined) out += short;
    else if (PRINTABLE.test(ch)) out += ch;
    else {
      const cp = ch.codePointAt(0) as number;
      if (cp >= 0xd800 && cp <= 0xdfff) out += '\ufffd';
      else if (cp < 0x80) out += `\\x${cp.toString(16).padStart(2, '0')}`;
      else if (cp <= 0xffff) out += `\\u${cp.toString(16).padStart(4, '0')}`;
      else out += `\\U${cp.toString(16).padStart(8, '0')}`;
    }
  }
  return `${out}"`;
}

// ---------------------------------------------------------------------------------------------
// Go's netip.ParseAddr.

type Parsed<T> = { ok: true; value: T } | { ok: false; msg: string };

/** Go's parseAddrError text. */
function addrError(input: string, msg: string, at = ''): { ok: false; msg: string } {
  return { ok: false, msg: `ParseAddr(${goQuote(input)}): ${msg}${at === '' ? '' : ` (at ${goQuote(at)})`}` };
}

const isDigit = (c: string): boolean => c >= '0' && c <= '9';

/** Go's parseIPv4Fields: the dotted quad `input.slice(start, end)`, as a 32-bit number. */
function parseIPv4Fields(input: string, start: number, end: number): Parsed<bigint> {
  const s = input.slice(start, end);
  let value = 0n;
  let field = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (isDigit(c)) {
      if (digits === 1 && field === 0) return addrError(input, 'IPv4 field has octet with leading zero');
      field = field * 10 + (c.charCodeAt(0) - 48);
      digits++;
      if (field > 255) return addrError(input, 'IPv4 field has value >255');
    } else if (c === '.') {
      if (i === 0 || i === s.length - 1 || s[i - 1] === '.') {
        return addrError(input, 'IPv4 field must have at least one digit', s.slice(i));
      }
      if (dots === 3) return addrError(input, 'IPv4 address too long');
      value = (value << 8n) | BigInt(field);
      dots++;
      field = 0;
      digits = 0;
    } else {
      return addrError(input, 'unexpected character', s.slice(i));
    }
  }
  if (dots < 3) return addrError(input, 'IPv4 address too short');
  return { ok: true, value: (value << 8n) | BigInt(field) };
}

function hexValue(c: string): number {
  if (isDigit(c)) return c.charCodeAt(0) - 48;
  if (c >= 'a' && c <= 'f') return c.charCodeAt(0) - 87;
  if (c >= 'A' && c <= 'F') return c.charCodeAt(0) - 55;
  return -1;
}

interface RawAddr {
  readonly addr: IPAddr;
  readonly zone: string;
}

/** Go's parseIPv6: 16 bytes, '::' expanded, an IPv4 tail allowed in the last 4 bytes. */
function parseIPv6(input: string): Parsed<RawAddr> {
  let s = input;
  let zone = '';
  const pct = s.indexOf('%');
  if (pct >= 0) {
    zone = s.slice(pct + 1);
    s = s.slice(0, pct);
    if (zone === '') return addrError(input, 'zone must be a non-empty string');
  }
  const bytes = new Array<number>(16).fill(0);
  let ellipsis = -1;
  if (s.length >= 2 && s[0] === ':' && s[1] === ':') {
    ellipsis = 0;
    s = s.slice(2);
    if (s.length === 0) return { ok: true, value: { addr: new IPAddr(6, 0n), zone } };
  }
  let i = 0;
  while (i < 16) {
    let off = 0;
    let acc = 0;
    for (; off < s.length; off++) {
      const h = hexValue(s[off] as string);
      if (h < 0) break;
      acc = acc * 16 + h;
      if (off > 3) return addrError(input, 'each group must have 4 or less digits', s);
      if (acc > 0xffff) return addrError(input, 'IPv6 field has value >=2^16', s);
    }
    if (off === 0) return addrError(input, 'each colon-separated field must have at least one digit', s);

    if (off < s.length && s[off] === '.') {
      if (ellipsis < 0 && i !== 12) {
        return addrError(input, 'embedded IPv4 address must replace the final 2 fields of the address', s);
      }
      if (i + 4 > 16) {
        return addrError(input, 'too many hex fields to fit an embedded IPv4 at the end of the address', s);
      }
      const end = input.length - (zone.length > 0 ? zone.length + 1 : 0);
      const v4 = parseIPv4Fields(input, end - s.length, end);
      if (!v4.ok) return v4;
      for (let k = 0; k < 4; k++) bytes[i + k] = Number((v4.value >> BigInt(8 * (3 - k))) & 0xffn);
      s = '';
      i += 4;
      break;
    }

    bytes[i] = acc >> 8;
    bytes[i + 1] = acc & 0xff;
    i += 2;

    s = s.slice(off);
    if (s.length === 0) break;
    if (s[0] !== ':') return addrError(input, 'unexpected character, want colon', s);
    if (s.length === 1) return addrError(input, 'colon must be followed by more characters', s);
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) return addrError(input, 'multiple :: in address', s);
      ellipsis = i;
      s = s.slice(1);
      if (s.length === 0) break;
    }
  }

  if (s.length !== 0) return addrError(input, 'trailing garbage after address', s);

  if (i < 16) {
    if (ellipsis < 0) return addrError(input, 'address string too short');
    const n = 16 - i;
    for (let j = i - 1; j >= ellipsis; j--) bytes[j + n] = bytes[j] as number;
    for (let j = ellipsis; j < ellipsis + n; j++) bytes[j] = 0;
  } else if (ellipsis >= 0) {
    return addrError(input, 'the :: must expand to at least one field of zeros');
  }
  let value = 0n;
  for (const b of bytes) value = (value << 8n) | BigInt(b);
  return { ok: true, value: { addr: new IPAddr(6, value), zone } };
}

/** Go's netip.ParseAddr: the address and its zone (IPv6 only), or the error text. */
function goParseAddr(s: string): Parsed<RawAddr> {
  for (const c of s) {
    if (c === '.') {
      const v4 = parseIPv4Fields(s, 0, s.length);
      return v4.ok ? { ok: true, value: { addr: new IPAddr(4, v4.value), zone: '' } } : v4;
    }
    if (c === ':') return parseIPv6(s);
    if (c === '%') return addrError(s, 'missing IPv6 address');
  }
  return addrError(s, 'unable to parse IP');
}

// ---------------------------------------------------------------------------------------------
// Address properties (Go's netip.Addr methods).

const is4In6 = (a: IPAddr): boolean => a.family === 6 && a.value >> 32n === 0xffffn;

function group(a: IPAddr, i: number): number {
  return Number((a.value >> BigInt(16 * (7 - i))) & 0xffffn);
}

function octet(a: IPAddr, i: number): number {
  return Number((a.value >> BigInt(8 * (3 - i))) & 0xffn);
}

function formatV4(v: bigint): string {
  return [24n, 16n, 8n, 0n].map((sh) => String((v >> sh) & 0xffn)).join('.');
}

/** Go's Addr.String: dotted quad, or RFC 5952 (lowercase, longest zero run of 2+ groups as '::'). */
function formatAddr(a: IPAddr): string {
  if (a.family === 4) return formatV4(a.value);
  if (is4In6(a)) return `::ffff:${formatV4(a.value & 0xffffffffn)}`;
  let zeroStart = -1;
  let zeroLen = 0;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && group(a, j) === 0) j++;
    if (j - i >= 2 && j - i > zeroLen) {
      zeroStart = i;
      zeroLen = j - i;
    }
  }
  let out = '';
  for (let i = 0; i < 8; i++) {
    if (i === zeroStart) {
      out += '::';
      i += zeroLen - 1;
      continue;
    }
    if (i > 0 && !out.endsWith(':')) out += ':';
    out += group(a, i).toString(16);
  }
  return out;
}

const isLoopback = (a: IPAddr): boolean => (a.family === 4 ? octet(a, 0) === 127 : a.value === 1n);
const isMulticast = (a: IPAddr): boolean => (a.family === 4 ? (octet(a, 0) & 0xf0) === 0xe0 : group(a, 0) >> 8 === 0xff);
const isLinkLocalUnicast = (a: IPAddr): boolean =>
  a.family === 4 ? octet(a, 0) === 169 && octet(a, 1) === 254 : (group(a, 0) & 0xffc0) === 0xfe80;
const isLinkLocalMulticast = (a: IPAddr): boolean =>
  a.family === 4 ? octet(a, 0) === 224 && octet(a, 1) === 0 && octet(a, 2) === 0 : (group(a, 0) & 0xff0f) === 0xff02;

function isGlobalUnicast(a: IPAddr): boolean {
  if (a.family === 4 && (a.value === 0n || a.value === 0xffffffffn)) return false;
  return !(a.family === 6 && a.value === 0n) && !isLoopback(a) && !isMulticast(a) && !isLinkLocalUnicast(a);
}

/** The network mask of `bits` leading ones for the address's width. */
function mask(bitLen: number, bits: number): bigint {
  const all = (1n << BigInt(bitLen)) - 1n;
  return all ^ ((1n << BigInt(bitLen - bits)) - 1n);
}

/** Go's Prefix.Masked. */
function masked(c: CIDR): CIDR {
  return new CIDR(new IPAddr(c.addr.family, c.addr.value & mask(c.addr.bitLen, c.bits)), c.bits);
}

/** Go's Prefix.Contains: same family and the first `bits` bits equal. */
function containsIP(c: CIDR, a: IPAddr): boolean {
  if (c.addr.family !== a.family) return false;
  const m = mask(a.bitLen, c.bits);
  return (c.addr.value & m) === (a.value & m);
}

/**
 * The reference's containsCIDR as fixed in kubernetes#130450: `other` lies in `c` when `c` is no
 * longer than `other` and both agree on `c`'s first bits (same family).
 */
function containsCIDR(c: CIDR, other: CIDR): boolean {
  if (c.addr.family !== other.addr.family || c.bits > other.bits) return false;
  const m = mask(c.addr.bitLen, c.bits);
  return (c.addr.value & m) === (other.addr.value & m);
}

const sameAddr = (a: IPAddr, b: IPAddr): boolean => a.family === b.family && a.value === b.value;

// ---------------------------------------------------------------------------------------------
// The reference's parseIPAddr and parseCIDR.

/** ip(): the error texts of the reference's parseIPAddr. */
export function parseIP(raw: string): Parsed<IPAddr> {
  const p = goParseAddr(raw);
  if (!p.ok) return { ok: false, msg: `IP Address ${goQuote(raw)} parse error during conversion from string: ${p.msg}` };
  if (p.value.zone !== '') return { ok: false, msg: `IP address ${goQuote(raw)} with zone value is not allowed` };
  if (is4In6(p.value.addr)) return { ok: false, msg: `IPv4-mapped IPv6 address ${goQuote(raw)} is not allowed` };
  return { ok: true, value: p.value.addr };
}

const BITS = /^(?:0|[1-9][0-9]*)$/;
const MAX_INT64 = 9223372036854775807n;

/** Go's netip.ParsePrefix: host bits are kept as written. */
function goParsePrefix(s: string): Parsed<CIDR> {
  const fail = (msg: string): { ok: false; msg: string } => ({ ok: false, msg: `netip.ParsePrefix(${goQuote(s)}): ${msg}` });
  const slash = s.lastIndexOf('/');
  if (slash < 0) return fail("no '/'");
  const a = goParseAddr(s.slice(0, slash));
  if (!a.ok) return fail(a.msg);
  if (a.value.zone !== '') return fail('IPv6 zones cannot be present in a prefix');
  const bitsText = s.slice(slash + 1);
  // strconv.Atoi's failures (empty, sign, non-digit, beyond int64) and the explicit leading-zero check.
  if (!BITS.test(bitsText) || BigInt(bitsText) > MAX_INT64) return fail(`bad bits after slash: ${goQuote(bitsText)}`);
  const bits = BigInt(bitsText);
  if (bits > BigInt(a.value.addr.bitLen)) return fail('prefix length out of range');
  return { ok: true, value: new CIDR(a.value.addr, Number(bits)) };
}

const CIDR_ERROR = 'network address parse error during conversion from string: ';

/**
 * cidr(): the reference wraps its parseCIDR's error once more with the same words, so a syntax
 * error reads "network address parse error during conversion from string: network address parse
 * error during conversion from string: netip.ParsePrefix(...): ..." (as its own tests expect).
 */
export function parseCIDR(raw: string): Parsed<CIDR> {
  const p = goParsePrefix(raw);
  if (!p.ok) return { ok: false, msg: CIDR_ERROR + CIDR_ERROR + p.msg };
  if (is4In6(p.value.addr)) return { ok: false, msg: `${CIDR_ERROR}IPv4-mapped IPv6 address ${goQuote(raw)} is not allowed` };
  return p;
}

function ipOrThrow(s: string): IPAddr {
  const p = parseIP(s);
  if (!p.ok) throw new Error(p.msg);
  return p.value;
}

function cidrOrThrow(s: string): CIDR {
  const p = parseCIDR(s);
  if (!p.ok) throw new Error(p.msg);
  return p.value;
}

/** The receiver of `ip.isCanonical(...)` (the identifier `ip`; `ip(...)` stays the function). */
class IPNamespace {}

export function registerIp(env: Environment): void {
  env
    .registerType('net.IP', IPAddr)
    .registerType('net.CIDR', CIDR)
    .registerType('IPNamespace', IPNamespace)
    .registerConstant('ip', 'IPNamespace', new IPNamespace())
    .registerFunction('ip(string): net.IP', ipOrThrow)
    .registerFunction('isIP(string): bool', (s: string) => parseIP(s).ok)
    .registerFunction('IPNamespace.isCanonical(string): bool', (_ns: IPNamespace, s: string) => formatAddr(ipOrThrow(s)) === s)
    .registerFunction('net.IP.family(): int', (a: IPAddr) => BigInt(a.family))
    .registerFunction('net.IP.isUnspecified(): bool', (a: IPAddr) => a.value === 0n)
    .registerFunction('net.IP.isLoopback(): bool', isLoopback)
    .registerFunction('net.IP.isLinkLocalMulticast(): bool', isLinkLocalMulticast)
    .registerFunction('net.IP.isLinkLocalUnicast(): bool', isLinkLocalUnicast)
    .registerFunction('net.IP.isGlobalUnicast(): bool', isGlobalUnicast)
    .registerFunction('string(net.IP): string', formatAddr)
    .registerOperator('net.IP == net.IP', sameAddr)
    .registerFunction('cidr(string): net.CIDR', cidrOrThrow)
    .registerFunction('isCIDR(string): bool', (s: string) => parseCIDR(s).ok)
    .registerFunction('net.CIDR.containsIP(net.IP): bool', containsIP)
    .registerFunction('net.CIDR.containsIP(string): bool', (c: CIDR, s: string) => {
      // The reference answers a bad string here with a bare "no such overload" (its string
      // overload hands the parse error to the IP overload, which rejects it as not an IP).
      const p = parseIP(s);
      if (!p.ok) throw new Error('no such overload');
      return containsIP(c, p.value);
    })
    .registerFunction('net.CIDR.containsCIDR(net.CIDR): bool', containsCIDR)
    .registerFunction('net.CIDR.containsCIDR(string): bool', (c: CIDR, s: string) => containsCIDR(c, cidrOrThrow(s)))
    .registerFunction('net.CIDR.ip(): net.IP', (c: CIDR) => c.addr)
    .registerFunction('net.CIDR.masked(): net.CIDR', masked)
    .registerFunction('net.CIDR.prefixLength(): int', (c: CIDR) => BigInt(c.bits))
    .registerFunction('string(net.CIDR): string', (c: CIDR) => c.toString())
    .registerOperator('net.CIDR == net.CIDR', (a: CIDR, b: CIDR) => a.bits === b.bits && sameAddr(a.addr, b.addr));
  // `net.IP` and `net.CIDR` as type values: the very Type objects `type()` returns.
  env.registerConstant('net', 'map<string, type>', {
    IP: env.evaluate("type(ip('0.0.0.0'))"),
    CIDR: env.evaluate("type(cidr('0.0.0.0/0'))"),
  });
}
