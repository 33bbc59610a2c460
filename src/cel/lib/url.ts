/**
 * URL library (spec 1; the reference's library.URLs): `url(string)` and `isURL(string)` accept
 * what Go's url.ParseRequestURI accepts (an absolute URI or an absolute path), and a URL's
 * getScheme, getHost, getHostname, getPort, getEscapedPath, getQuery answer as Go's url.URL does:
 *
 *   url('https://user:pass@example.com:80/path?query=val#fragment').getHost()  'example.com:80'
 *   url('https://[::1]:80/').getHostname()                                   '::1'
 *   url('https://example.com/path with spaces/').getEscapedPath()             '/path%20with%20spaces/'
 *   url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()                 {'k1': ['a'], 'k2': ['b', 'c']}
 *   url('https://a:b:c/')  error;  url('../relative-path')  error
 *
 * The parser follows net/url's steps (scheme, query, authority with userinfo, host and port,
 * path with %-escapes); the fragment is split off first, as the reference's second parse does.
 */
import type { Environment } from '@marcbachmann/cel-js';

export class URLValue {
  constructor(
    readonly scheme: string,
    /** Host with port, IPv6 in brackets (Go's URL.Host). */
    readonly host: string,
    /** The path as written (escaped form). */
    readonly rawPath: string,
    readonly rawQuery: string,
  ) {}
}

class URLError extends Error {}

const SCHEME_START = /^[A-Za-z]/;
const SCHEME_CHAR = /^[A-Za-z0-9+\-.]$/;

function hasControl(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** Go's unescape: every % must start a valid escape. */
function percentDecode(s: string, what: string, plusSpace = false): string {
  if (!s.includes('%') && !(plusSpace && s.includes('+'))) return s;
  const bytes: number[] = [];
  const enc = new TextEncoder();
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c === '%') {
      const h = s.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(h)) throw new URLError(`invalid URL escape "${s.slice(i, i + 3)}"${what ? ` in ${what}` : ''}`);
      bytes.push(Number.parseInt(h, 16));
      i += 2;
    } else if (plusSpace && c === '+') bytes.push(0x20);
    else for (const b of enc.encode(c)) bytes.push(b);
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/** Go's validOptionalPort: empty, or ':' and digits. */
const validPort = (p: string): boolean => p === '' || /^:\d*$/.test(p);

function parseHost(host: string): string {
  if (host.startsWith('[')) {
    const end = host.lastIndexOf(']');
    if (end < 0) throw new URLError("missing ']' in host");
    const port = host.slice(end + 1);
    if (!validPort(port)) throw new URLError(`invalid port "${port}" after host`);
    return host;
  }
  const i = host.lastIndexOf(':');
  if (i >= 0) {
    const port = host.slice(i);
    if (!validPort(port)) throw new URLError(`invalid port "${port}" after host`);
  }
  percentDecode(host, 'host');
  return host;
}

/** Go's url.ParseRequestURI (after the fragment is split off). */
export function parseRequestURI(raw: string): URLValue {
  if (hasControl(raw)) throw new URLError('net/url: invalid control character in URL');
  if (raw === '') throw new URLError('empty url');
  const hash = raw.indexOf('#');
  let rest = hash >= 0 ? raw.slice(0, hash) : raw;
  if (rest === '*') return new URLValue('', '', '*', '');
  let scheme = '';
  for (let i = 0; i < rest.length; i++) {
    const c = rest[i] as string;
    if (c === ':') {
      if (i === 0) throw new URLError('missing protocol scheme');
      scheme = rest.slice(0, i).toLowerCase();
      rest = rest.slice(i + 1);
      break;
    }
    if (!SCHEME_CHAR.test(c) || (i === 0 && !SCHEME_START.test(c))) break;
  }
  let rawQuery = '';
  const q = rest.indexOf('?');
  if (q >= 0) {
    rawQuery = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  if (!rest.startsWith('/')) {
    // An opaque URI (`mailto:x`) has a scheme; a request URI otherwise starts with '/'.
    if (scheme !== '') return new URLValue(scheme, '', '', rawQuery);
    throw new URLError('invalid URI for request');
  }
  let host = '';
  if (scheme !== '' && rest.startsWith('//')) {
    const authEnd = rest.indexOf('/', 2);
    const authority = authEnd < 0 ? rest.slice(2) : rest.slice(2, authEnd);
    rest = authEnd < 0 ? '' : rest.slice(authEnd);
    const at = authority.lastIndexOf('@');
    if (at >= 0) {
      const userinfo = authority.slice(0, at);
      if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo)) throw new URLError('net/url: invalid userinfo');
      percentDecode(userinfo, 'userinfo');
    }
    host = parseHost(at >= 0 ? authority.slice(at + 1) : authority);
  }
  percentDecode(rest, 'path');
  return new URLValue(scheme, host, rest, rawQuery);
}

/** Characters Go's escape(…, encodePath) keeps as they are. */
const PATH_KEEP = /[A-Za-z0-9\-_.~$&+,/:;=@]/;
/** Characters Go's validEncoded accepts in a raw path besides escapes. */
const PATH_VALID = /^[A-Za-z0-9\-_.~!$&'()*+,;=:@[\]/]$/;

function escapePath(p: string): string {
  let out = '';
  for (const b of new TextEncoder().encode(p)) {
    const c = String.fromCharCode(b);
    out += b < 0x80 && PATH_KEEP.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Go's URL.EscapedPath: the path as written when it is a valid encoding, else escaped. */
function escapedPath(raw: string): string {
  let valid = true;
  for (let i = 0; i < raw.length && valid; i++) {
    const c = raw[i] as string;
    if (c === '%') i += 2;
    else if (!PATH_VALID.test(c)) valid = false;
  }
  return valid ? raw : escapePath(percentDecode(raw, 'path'));
}

/** Go's url.ParseQuery, keeping the pairs that parse (as URL.Query does). */
function query(raw: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of raw.split('&')) {
    if (part === '' || part.includes(';')) continue;
    const eq = part.indexOf('=');
    let k: string;
    let v: string;
    try {
      k = percentDecode(eq < 0 ? part : part.slice(0, eq), '', true);
      v = percentDecode(eq < 0 ? '' : part.slice(eq + 1), '', true);
    } catch {
      continue;
    }
    const list = out.get(k);
    if (list) list.push(v);
    else out.set(k, [v]);
  }
  return out;
}

function hostname(host: string): string {
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end < 0 ? host.slice(1) : host.slice(1, end);
  }
  const i = host.lastIndexOf(':');
  return i < 0 ? host : host.slice(0, i);
}

function port(host: string): string {
  const start = host.startsWith('[') ? host.indexOf(']') + 1 : 0;
  const i = host.indexOf(':', start);
  if (i < 0) return '';
  const p = host.slice(i + 1);
  return /^\d*$/.test(p) ? p : '';
}

export function registerUrl(env: Environment): void {
  env
    .registerType('net.URL', URLValue)
    .registerFunction('url(string): net.URL', (s: string) => {
      try {
        return parseRequestURI(s);
      } catch (e) {
        throw new Error(`URL parse error during conversion from string: parse "${s}": ${(e as Error).message}`);
      }
    })
    .registerFunction('isURL(string): bool', (s: string) => {
      try {
        parseRequestURI(s);
        return true;
      } catch {
        return false;
      }
    })
    .registerFunction('net.URL.getScheme(): string', (u: URLValue) => u.scheme)
    .registerFunction('net.URL.getHost(): string', (u: URLValue) => u.host)
    .registerFunction('net.URL.getHostname(): string', (u: URLValue) => hostname(u.host))
    .registerFunction('net.URL.getPort(): string', (u: URLValue) => port(u.host))
    .registerFunction('net.URL.getEscapedPath(): string', (u: URLValue) => escapedPath(u.rawPath))
    .registerFunction('net.URL.getQuery(): map<string, list<string>>', (u: URLValue) => query(u.rawQuery));
}
