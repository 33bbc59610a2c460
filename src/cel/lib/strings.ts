/**
 * CEL libraries the reference adds on top of the standard environment (spec 1, "Options and
 * libraries"). Each file registers one library on a cel-js Environment through its public API.
 *
 * strings.ts: the ext strings library (cel-go ext.Strings) for the members cel-js does not provide:
 * charAt, replace, reverse and strings.quote (indices count Unicode code points, as cel-go).
 * cel-js already has lowerAscii, upperAscii, trim, split, indexOf, lastIndexOf, substring and join
 * and refuses overlapping overloads, so those are its own, except that the handlers of lowerAscii
 * and upperAscii (cel-js maps non-ASCII letters too) and trim (JavaScript's white space is not
 * Go's unicode.IsSpace) are replaced by the reference's (src/cel/lib/builtins.ts). Known
 * difference left: its indexOf counts UTF-16 units.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { replaceFunction } from './builtins.ts';

function cps(s: string): string[] {
  return Array.from(s);
}

function idx(n: bigint, max: number): number {
  if (n < 0n || n > BigInt(max)) throw new Error(`index out of range: ${n}`);
  return Number(n);
}

function replaceN(s: string, from: string, to: string, n: bigint): string {
  if (n === 0n) return s;
  if (n < 0n) return s.split(from).join(to);
  if (from === '') {
    // Go strings.Replace with empty old inserts `to` before each code point, up to n times.
    const parts = cps(s);
    let out = '';
    let k = 0n;
    for (let i = 0; i <= parts.length; i++) {
      if (k < n) {
        out += to;
        k++;
      }
      if (i < parts.length) out += parts[i];
    }
    return out;
  }
  let out = '';
  let rest = s;
  let k = 0n;
  while (k < n) {
    const at = rest.indexOf(from);
    if (at < 0) break;
    out += rest.slice(0, at) + to;
    rest = rest.slice(at + from.length);
    k++;
  }
  return out + rest;
}

/** strings.quote: a double-quoted CEL string literal with escapes, as cel-go. */
export function quote(s: string): string {
  let out = '"';
  for (const ch of s) {
    switch (ch) {
      case '\u0007':
        out += '\\a';
        break;
      case '\b':
        out += '\\b';
        break;
      case '\f':
        out += '\\f';
        break;
      case '\n':
        out += '\\n';
        break;
      case '\r':
        out += '\\r';
        break;
      case '\t':
        out += '\\t';
        break;
      case '\v':
        out += '\\v';
        break;
      case '\\':
        out += '\\\\';
        break;
      case '"':
        out += '\\"';
        break;
      default:
        out += ch;
    }
  }
  return `${out}"`;
}

/** Go's unicode.IsSpace: ASCII white space, NEL, NBSP and the Unicode White_Space separators. */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0x85) return false;
  return (
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

/** Go's strings.TrimSpace (all the spaces above are single UTF-16 units). */
export function trimSpace(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isSpace(s.charCodeAt(start))) start++;
  while (end > start && isSpace(s.charCodeAt(end - 1))) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** ASCII letters only (cel-js maps every letter): 'TacoCÆt' is 'tacocÆt'. */
const lowerAscii = (s: string) => (isAscii(s) ? s.toLowerCase() : s.replace(/[A-Z]+/g, (m) => m.toLowerCase()));
const upperAscii = (s: string) => (isAscii(s) ? s.toUpperCase() : s.replace(/[a-z]+/g, (m) => m.toUpperCase()));

/** The receiver of `strings.quote(...)`. */
class StringsNamespace {}

export function registerStrings(env: Environment): void {
  env
    .registerFunction('string.charAt(int): string', (s: string, i: bigint) => {
      const p = cps(s);
      const n = idx(i, p.length);
      return p[n] ?? '';
    })
    .registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) => replaceN(s, a, b, -1n))
    .registerFunction('string.replace(string, string, int): string', replaceN)
    .registerFunction('string.reverse(): string', (s: string) => cps(s).reverse().join(''))
    .registerType('StringsNamespace', StringsNamespace)
    .registerConstant('strings', 'StringsNamespace', new StringsNamespace())
    .registerFunction('StringsNamespace.quote(string): string', (_ns: StringsNamespace, s: string) => quote(s));
  replaceFunction(env, 'string.lowerAscii(): string', () => lowerAscii);
  replaceFunction(env, 'string.upperAscii(): string', () => upperAscii);
  replaceFunction(env, 'string.trim(): string', () => trimSpace);
}
