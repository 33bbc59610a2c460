/**
 * The first syntax error of a JSON text, worded as Go's encoding/json scanner words it
 * (`invalid character '}' looking for beginning of object key string`, `unexpected end of JSON
 * input`): the reference decodes every JSON body with it (or with sigs.k8s.io/json, its fork with
 * the same scanner), and clients match these texts. The scanner reads bytes, so the text is
 * scanned as UTF-8 bytes; each state below is one of the scanner's states.
 */

const END = 'unexpected end of JSON input';

/** Go's quoteChar: a byte as a quoted character (`'x'`, `'\n'`, `'\x01'`, `'"'`, `'\''`). */
export function goQuoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return `'"'`;
  // strconv.Quote(string(rune(c))), without its quotes.
  const named: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r', 92: '\\\\' };
  const n = named[c];
  if (n) return `'${n}'`;
  if (c < 0x20 || c === 0x7f) return `'\\x${c.toString(16).padStart(2, '0')}'`;
  // 0x80-0x9f are control characters as runes (U+0080-U+009F); higher ones are printable Latin-1.
  if (c >= 0x80 && c < 0xa0) return `'\\u00${c.toString(16).padStart(2, '0')}'`;
  if (c === 0xa0 || c === 0xad) return `'\\u00${c.toString(16)}'`;
  return `'${String.fromCharCode(c)}'`;
}

class Syntax extends Error {}

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

/** The Go scanner's error for `text`, or undefined when it is valid JSON. */
export function goJsonSyntaxError(text: string | Uint8Array): string | undefined {
  const b = typeof text === 'string' ? Buffer.from(text) : text;
  let i = 0;
  const fail = (context: string): never => {
    if (i >= b.length) throw new Syntax(END);
    throw new Syntax(`invalid character ${goQuoteChar(b[i]!)} ${context}`);
  };
  const skip = () => {
    while (i < b.length && isSpace(b[i]!)) i++;
  };
  const literal = (word: string) => {
    for (let k = 1; k < word.length; k++) {
      i++;
      if (b[i] !== word.charCodeAt(k)) fail(`in literal ${word} (expecting '${word[k]}')`);
    }
    i++;
  };
  const string = () => {
    i++; // opening quote
    for (;;) {
      if (i >= b.length) fail('');
      const c = b[i]!;
      if (c === 0x22) {
        i++;
        return;
      }
      if (c < 0x20) fail('in string literal');
      if (c === 0x5c) {
        i++;
        if (i >= b.length) fail('');
        const e = b[i]!;
        if (e === 0x75) {
          for (let k = 0; k < 4; k++) {
            i++;
            if (i >= b.length || !isHex(b[i]!)) fail('in \\u hexadecimal character escape');
          }
        } else if (!'bfnrt\\/"'.includes(String.fromCharCode(e))) fail('in string escape code');
      }
      i++;
    }
  };
  const number = () => {
    if (b[i] === 0x2d) {
      i++;
      if (i >= b.length || !isDigit(b[i]!)) fail('in numeric literal');
    }
    if (b[i] === 0x30) i++;
    else while (i < b.length && isDigit(b[i]!)) i++;
    if (b[i] === 0x2e) {
      i++;
      if (i >= b.length || !isDigit(b[i]!)) fail('after decimal point in numeric literal');
      while (i < b.length && isDigit(b[i]!)) i++;
    }
    if (b[i] === 0x65 || b[i] === 0x45) {
      i++;
      if (b[i] === 0x2b || b[i] === 0x2d) i++;
      if (i >= b.length || !isDigit(b[i]!)) fail('in exponent of numeric literal');
      while (i < b.length && isDigit(b[i]!)) i++;
    }
  };
  const value = (depth: number): void => {
    skip();
    if (i >= b.length) fail('');
    if (depth > 10000) throw new Syntax('exceeded max depth');
    const c = b[i]!;
    if (c === 0x7b) {
      i++;
      skip();
      if (b[i] === 0x7d) {
        i++;
        return;
      }
      for (;;) {
        if (b[i] !== 0x22) fail('looking for beginning of object key string');
        string();
        skip();
        if (b[i] !== 0x3a) fail('after object key');
        i++;
        value(depth + 1);
        skip();
        if (b[i] === 0x7d) {
          i++;
          return;
        }
        if (b[i] !== 0x2c) fail('after object key:value pair');
        i++;
        skip();
      }
    }
    if (c === 0x5b) {
      i++;
      skip();
      if (b[i] === 0x5d) {
        i++;
        return;
      }
      for (;;) {
        value(depth + 1);
        skip();
        if (b[i] === 0x5d) {
          i++;
          return;
        }
        if (b[i] !== 0x2c) fail('after array element');
        i++;
      }
    }
    if (c === 0x22) string();
    else if (c === 0x2d || isDigit(c)) number();
    else if (c === 0x74) literal('true');
    else if (c === 0x66) literal('false');
    else if (c === 0x6e) literal('null');
    else fail('looking for beginning of value');
  };
  try {
    value(0);
    skip();
    if (i < b.length) fail('after top-level value');
    return undefined;
  } catch (e) {
    if (e instanceof Syntax) return e.message;
    throw e;
  }
}

/**
 * The reference's summarizeData: a body in an error message, at most `max` bytes of it: as text
 * when it starts with `{`, else in hex; `<empty>` when there is none.
 */
export function summarizeBody(body: string | Uint8Array, max = 30): string {
  const b = typeof body === 'string' ? Buffer.from(body) : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (b.length === 0) return '<empty>';
  const head = b.subarray(0, max);
  const more = b.length > max ? ' ...' : '';
  return b[0] === 0x7b ? `${head.toString('utf8')}${more}` : `${head.toString('hex')}${more}`;
}
