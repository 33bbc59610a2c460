/**
 * Escaping of property names into CEL identifiers (spec 1, "Escaping"): only names matching
 * `[a-zA-Z_.-/][a-zA-Z0-9_.-/]*` are accessible; `__` becomes `__underscores__`, `.` `__dot__`,
 * `-` `__dash__`, `/` `__slash__`, and a name equal to a reserved word `__{word}__`.
 */

/** CEL reserved words (the reference's celReservedSymbols). */
export const RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

const ACCESSIBLE = /^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$/;

/** The CEL identifier for a property name, or undefined when the name is not accessible. */
export function escapeName(name: string): string | undefined {
  if (!ACCESSIBLE.test(name)) return undefined;
  if (RESERVED.has(name)) return `__${name}__`;
  let out = '';
  for (let i = 0; i < name.length; i++) {
    const c = name[i];
    if (c === '_' && name[i + 1] === '_') {
      out += '__underscores__';
      i++;
    } else if (c === '.') out += '__dot__';
    else if (c === '-') out += '__dash__';
    else if (c === '/') out += '__slash__';
    else out += c;
  }
  return out;
}

const ESCAPES: [string, string][] = [
  ['__underscores__', '__'],
  ['__dot__', '.'],
  ['__dash__', '-'],
  ['__slash__', '/'],
];

/** The property name a CEL identifier stands for (inverse of escapeName). */
export function unescapeName(ident: string): string {
  if (ident.length > 4 && ident.startsWith('__') && ident.endsWith('__') && RESERVED.has(ident.slice(2, -2))) return ident.slice(2, -2);
  let out = '';
  let i = 0;
  outer: while (i < ident.length) {
    if (ident.startsWith('__', i)) {
      for (const [esc, raw] of ESCAPES) {
        if (ident.startsWith(esc, i)) {
          out += raw;
          i += esc.length;
          continue outer;
        }
      }
    }
    out += ident[i];
    i++;
  }
  return out;
}
