/**
 * Object initializers of mutating admission policies (the reference's mutation library:
 * `Object{...}`, `Object.spec{...}`, `JSONPatch{...}`). The engine has no message creation, so
 * an expression is desugared before it is compiled: each initializer becomes a call of
 * OBJECT_FUNCTION with the type name and a map of its fields, each field's value as `dyn` (the
 * fields of one object have different types):
 *
 *   Object{spec: Object.spec{replicas: 2}}
 *     → __object("Object", {"spec": dyn(__object("Object.spec", {"replicas": dyn(2)}))})
 *
 * List elements and map values are wrapped as `dyn` too: cel-go's homogeneous aggregate literals
 * accept a dyn value beside typed ones (`{"team": variables.team, "env": "prod"}`), this engine's
 * do not (a mutation's literals are thereby laxer than the reference's: `[1, "a"]` is accepted).
 *
 * The call returns the map tagged with its type name (typeNameOf), so the result can be checked
 * as the reference does: an initializer's type name must be the path of field names from the root
 * `Object` (`Object.spec.containers` for an item of spec.containers), a JSONPatch has only op,
 * path, from and value. Only a qualified name directly followed by `{` is an initializer (a map
 * literal never follows a name in CEL); strings and comments are copied untouched.
 *
 * What differs from the reference: the fields of an Object initializer are not checked against
 * the target kind's schema when the policy is written (its kinds are known only from the
 * request), and optional field initializers (`?field: value`) are refused.
 */

export const OBJECT_FUNCTION = '__object';
export const JSONPATCH_TYPE = 'JSONPatch';
const JSONPATCH_FIELDS = new Set(['op', 'path', 'from', 'value']);
const TYPE_NAME = Symbol('celObjectType');

export type Desugared = { ok: true; expr: string } | { ok: false; error: string };

interface Frame {
  /** `idx`: an index `x[...]`; `[`: a list literal. */
  kind: '(' | '[' | 'idx' | 'map' | 'msg';
  type?: string;
  /** A message frame waiting for its next field name. */
  expectField?: boolean;
  /** Inside a field's value, a list element or a map value (`dyn(` to close). */
  valueOpen?: boolean;
  /** A list element or a map value starts at the next token. */
  pending?: boolean;
  /** A map frame reading an entry's key (up to its `:`); `optional`: the entry is `?key: value`. */
  inKey?: boolean;
  keyStart?: boolean;
  optional?: boolean;
}

const isIdentStart = (c: string | undefined): boolean => c !== undefined && /[A-Za-z_]/.test(c);
const isIdentPart = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9_]/.test(c);
const isSpace = (c: string | undefined): boolean => c !== undefined && /\s/.test(c);

/** The end of the string literal starting at `i` (its quote), `raw` without escapes. */
function stringEnd(src: string, i: number, raw: boolean): number {
  const q = src[i] as string;
  const triple = src.startsWith(q.repeat(3), i);
  const close = triple ? q.repeat(3) : q;
  let j = i + close.length;
  while (j < src.length) {
    if (!raw && src[j] === '\\') {
      j += 2;
      continue;
    }
    if (src.startsWith(close, j)) return j + close.length;
    if (!triple && src[j] === '\n') return j;
    j++;
  }
  return src.length;
}

function skipSpace(src: string, i: number): number {
  while (isSpace(src[i])) i++;
  return i;
}

function identEnd(src: string, i: number): number {
  while (isIdentPart(src[i])) i++;
  return i;
}

/** Whether a type name may be initialized: `Object`, `Object.<field>...`, `JSONPatch`. */
function knownType(name: string): boolean {
  return name === 'Object' || name.startsWith('Object.') || name === JSONPATCH_TYPE;
}

/** `src` with its object initializers as calls (see the file comment), or the first error. */
export function desugarObjectInitializers(src: string): Desugared {
  let out = '';
  let i = 0;
  let prevDot = false;
  /** The previous token ends a value (a `[` after it indexes, else it opens a list). */
  let prevValue = false;
  const stack: Frame[] = [];
  const n = src.length;
  while (i < n) {
    const c = src[i] as string;
    const top = stack[stack.length - 1];
    if (c === '/' && src[i + 1] === '/') {
      const nl = src.indexOf('\n', i);
      const end = nl < 0 ? n : nl;
      out += src.slice(i, end);
      i = end;
      continue;
    }
    if (isSpace(c)) {
      out += c;
      i++;
      continue;
    }
    if (top?.kind === 'map' && top.keyStart) {
      top.keyStart = false;
      top.optional = c === '?';
    }
    if ((top?.kind === '[' || top?.kind === 'map') && top.pending) {
      // Each element and map value as dyn: a literal may mix dyn values with typed ones, which
      // cel-go's homogeneous literals accept and this engine's do not. Optional entries stay as written.
      top.pending = false;
      if (c !== (top.kind === '[' ? ']' : '}') && c !== '?' && !top.optional) {
        out += 'dyn(';
        top.valueOpen = true;
      }
    }
    if (top?.kind === 'msg' && top.expectField) {
      if (c === '}') {
        stack.pop();
        out += '})';
        i++;
        prevDot = false;
        prevValue = true;
        continue;
      }
      if (c === '?') return { ok: false, error: `optional field initializers are not supported (in ${top.type} initializer)` };
      if (!isIdentStart(c)) return { ok: false, error: `Syntax error: expected a field name in ${top.type} initializer, got '${c}'` };
      const end = identEnd(src, i);
      const field = src.slice(i, end);
      const colon = skipSpace(src, end);
      if (src[colon] !== ':') return { ok: false, error: `Syntax error: expected ':' after field '${field}' in ${top.type} initializer` };
      if (top.type === JSONPATCH_TYPE && !JSONPATCH_FIELDS.has(field)) {
        return { ok: false, error: `undefined field '${field}' in ${JSONPATCH_TYPE} (fields: op, path, from, value)` };
      }
      out += `${JSON.stringify(field)}: dyn(`;
      i = colon + 1;
      top.expectField = false;
      top.valueOpen = true;
      prevDot = false;
      prevValue = false;
      continue;
    }
    if (c === '"' || c === "'") {
      const end = stringEnd(src, i, false);
      out += src.slice(i, end);
      i = end;
      prevDot = false;
      prevValue = true;
      continue;
    }
    if (isIdentStart(c)) {
      let end = identEnd(src, i);
      const word = src.slice(i, end);
      if (/^[rRbB]{1,2}$/.test(word) && (src[end] === '"' || src[end] === "'")) {
        const close = stringEnd(src, end, /[rR]/.test(word));
        out += src.slice(i, close);
        i = close;
        prevDot = false;
        prevValue = true;
        continue;
      }
      if (!prevDot) {
        // A qualified name: does a `{` follow it?
        let name = word;
        let k = end;
        for (;;) {
          const dot = skipSpace(src, k);
          if (src[dot] !== '.') break;
          const next = skipSpace(src, dot + 1);
          if (!isIdentStart(src[next])) break;
          k = identEnd(src, next);
          name += `.${src.slice(next, k)}`;
        }
        const brace = skipSpace(src, k);
        if (src[brace] === '{') {
          if (!knownType(name)) return { ok: false, error: `undeclared reference to '${name}' (in container '')` };
          out += `${OBJECT_FUNCTION}(${JSON.stringify(name)}, {`;
          stack.push({ kind: 'msg', type: name, expectField: true });
          i = brace + 1;
          prevDot = false;
          prevValue = false;
          continue;
        }
        end = identEnd(src, i);
      }
      out += word;
      i = end;
      prevDot = false;
      prevValue = true;
      continue;
    }
    if (c === '{') stack.push({ kind: 'map', inKey: true, keyStart: true });
    else if (c === '(') stack.push({ kind: '(' });
    else if (c === '[') stack.push(prevValue ? { kind: 'idx' } : { kind: '[', pending: true });
    else if (c === ')') stack.pop();
    else if (c === ']' || c === '}') {
      stack.pop();
      if (top?.kind === 'msg') out += top.valueOpen ? ')})' : '})';
      else out += top?.valueOpen ? `)${c}` : c;
      i++;
      prevDot = false;
      prevValue = true;
      continue;
    } else if (c === ',' && (top?.kind === 'msg' || top?.kind === '[' || top?.kind === 'map')) {
      out += top.valueOpen ? '),' : ',';
      top.valueOpen = false;
      if (top.kind === 'msg') top.expectField = true;
      else if (top.kind === '[') top.pending = true;
      else {
        top.inKey = true;
        top.keyStart = true;
      }
      i++;
      prevDot = false;
      prevValue = false;
      continue;
    } else if (c === ':' && top?.kind === 'map' && top.inKey) {
      top.inKey = false;
      top.pending = true;
    }
    out += c;
    prevDot = c === '.';
    prevValue = /[0-9)]/.test(c);
    i++;
  }
  return { ok: true, expr: out };
}

/** The function behind OBJECT_FUNCTION: the fields' map, tagged with its type name. */
export function makeObject(typeName: string, fields: unknown): unknown {
  if (fields !== null && typeof fields === 'object') Object.defineProperty(fields, TYPE_NAME, { value: typeName, enumerable: false });
  return fields;
}

/** The type name of a value made by an initializer (undefined for any other value). */
export function typeNameOf(v: unknown): string | undefined {
  return v !== null && typeof v === 'object' ? ((v as Record<symbol, unknown>)[TYPE_NAME] as string | undefined) : undefined;
}

/** jsonpatch.escapeKey: `~` as `~0` and `/` as `~1` (RFC 6901). */
export function escapeJsonPatchKey(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * The reference's check of an ApplyConfiguration's type names: each initializer below the root
 * must be named by the path of field names that leads to it. Returns the first mismatch.
 */
export function typeNameMismatch(v: unknown, path = 'Object'): string | undefined {
  if (Array.isArray(v)) {
    for (const x of v) {
      const m = typeNameMismatch(x, path);
      if (m) return m;
    }
    return undefined;
  }
  if (v === null || typeof v !== 'object') return undefined;
  const name = typeNameOf(v);
  if (name === undefined) return undefined;
  if (name !== path) return `unexpected type name "${name}", expected "${path}", which matches field name path from root Object type`;
  for (const [k, x] of Object.entries(v)) {
    const m = typeNameMismatch(x, `${path}.${k}`);
    if (m) return m;
  }
  return undefined;
}
