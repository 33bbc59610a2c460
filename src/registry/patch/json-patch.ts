/**
 * JSON Patch (RFC 6902, `application/json-patch+json`) over decoded JSON values.
 *
 * Semantics follow the RFC and the community suite (json-patch/json-patch-tests) exactly; errors
 * carry what the reference API server answers (see errors.ts). Where the reference's library
 * (evanphx/json-patch v4) is laxer than the RFC we follow the RFC: negative and zero-padded array
 * indices, `add` without `value` and `replace` of an absent member are errors here, and the root
 * pointer "" is accepted for add/replace/test/copy (the library refuses it).
 */
import { MAX_JSON_PATCH_OPERATIONS, PatchError, unprocessable } from './errors';
import { cloneJson, deepEqual, getOwn, goJsonType, hasOwn, isObject, type JsonObject, setOwn } from './json';

export { PatchError } from './errors';

/** The request's fieldValidation; it only changes the wording of 400s for undecodable patches. */
export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

export interface JsonPatchOptions {
  /** Default 'Warn', the server's default when the request does not say. */
  fieldValidation?: FieldValidation;
}

const OP_FIELDS = new Set(['op', 'path', 'from', 'value']);

/**
 * Applies the operations `ops` to `doc` and returns the result. Neither input is modified and the
 * result shares no structure with them.
 *
 * @throws PatchError kind 'invalid' (400) when `ops` is not a list of objects, 'too-large' (413)
 *   beyond 10000 operations, 'operation' / 'path' / 'test-failed' (422) when an operation is
 *   malformed, does not resolve, or a test does not match. `null` is an empty patch, as in the
 *   reference.
 */
export function applyJsonPatch(doc: unknown, ops: unknown, opts: JsonPatchOptions = {}): unknown {
  const list = decodeOperations(ops, opts.fieldValidation ?? 'Warn');
  if (list.length === 0) return cloneJson(doc);
  let root = cloneJson(doc);
  for (let i = 0; i < list.length; i++) root = applyOne(root, list[i], i);
  return root;
}

/**
 * The strict-decoding warnings the reference emits for a JSON patch under fieldValidation=Warn
 * (and rejects under Strict): one `json patch unknown field "x"` per member other than
 * op/path/from/value (member names are case-sensitive). Duplicate members cannot be seen after
 * JSON.parse and are not reported.
 */
export function jsonPatchUnknownFields(ops: unknown): string[] {
  const out: string[] = [];
  if (!Array.isArray(ops)) return out;
  for (const op of ops) {
    if (!isObject(op)) continue;
    for (const k of Object.keys(op)) if (!OP_FIELDS.has(k)) out.push(`json patch unknown field "${k}"`);
  }
  return out;
}

function decodeOperations(ops: unknown, fv: FieldValidation): unknown[] {
  if (ops === null) return [];
  const strict = fv !== 'Ignore';
  if (!Array.isArray(ops)) {
    throw new PatchError(
      'invalid',
      strict
        ? `error decoding patch: json: cannot unmarshal ${goJsonType(ops)} into Go value of type []handlers.jsonPatchOp`
        : `json: cannot unmarshal ${goJsonType(ops)} into Go value of type jsonpatch.Patch`,
    );
  }
  // Go's decoder keeps going after a type mismatch and reports the first one.
  let first: string | undefined;
  for (const op of ops) {
    if (first !== undefined) break;
    if (op === null) continue;
    if (!isObject(op)) {
      first = strict
        ? `error decoding patch: json: cannot unmarshal ${goJsonType(op)} into Go value of type handlers.jsonPatchOp`
        : `json: cannot unmarshal ${goJsonType(op)} into Go value of type jsonpatch.Operation`;
      continue;
    }
    if (!strict) continue;
    for (const f of ['op', 'path', 'from']) {
      const v = getOwn(op, f);
      if (v !== undefined && v !== null && typeof v !== 'string') {
        first = `error decoding patch: json: cannot unmarshal ${goJsonType(v)} into Go struct field jsonPatchOp.${f} of type string`;
        break;
      }
    }
  }
  if (first !== undefined) throw new PatchError('invalid', first);
  if (ops.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new PatchError(
      'too-large',
      `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${ops.length}`,
    );
  }
  return ops;
}

/** Parses a JSON Pointer (RFC 6901) into unescaped tokens; null when malformed. */
function parsePointer(p: string): string[] | null {
  if (p === '') return [];
  if (p.charCodeAt(0) !== 47 /* / */) return null;
  const raw = p.slice(1).split('/');
  for (let i = 0; i < raw.length; i++) {
    const t = raw[i]!;
    if (t.indexOf('~') < 0) continue;
    if (/~(?![01])/.test(t)) return null;
    raw[i] = t.replace(/~1/g, '/').replace(/~0/g, '~');
  }
  return raw;
}

/** An array index token: `0` or digits without a leading zero; -1 otherwise. */
function arrayIndex(t: string): number {
  const n = t.length;
  if (n === 0 || n > 15) return -1;
  if (n > 1 && t.charCodeAt(0) === 48) return -1;
  for (let i = 0; i < n; i++) {
    const c = t.charCodeAt(i);
    if (c < 48 || c > 57) return -1;
  }
  return Number(t);
}

class Fail {
  constructor(
    readonly kind: 'operation' | 'path' | 'test-failed',
    readonly detail: string,
  ) {}
}

/** The container holding the target of `tokens` (all but the last token resolved). */
function parentOf(root: unknown, tokens: string[], path: string): unknown {
  let cur = root;
  for (let i = 0; i < tokens.length - 1; i++) {
    const t = tokens[i]!;
    if (Array.isArray(cur)) {
      const idx = arrayIndex(t);
      if (idx < 0 || idx >= cur.length) throw new Fail('path', `doc is missing path: "${path}": invalid index "${t}"`);
      cur = cur[idx];
    } else if (isObject(cur)) {
      if (!hasOwn(cur, t)) throw new Fail('path', `doc is missing path: "${path}"`);
      cur = cur[t];
    } else {
      throw new Fail('path', `doc is missing path: "${path}"`);
    }
  }
  if (typeof cur !== 'object' || cur === null) throw new Fail('path', `doc is missing path: "${path}"`);
  return cur;
}

function getValue(root: unknown, tokens: string[], path: string): unknown {
  if (tokens.length === 0) return root;
  const parent = parentOf(root, tokens, path);
  const key = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    const idx = arrayIndex(key);
    if (idx < 0 || idx >= parent.length) throw new Fail('path', `Unable to access invalid index: "${key}" in "${path}"`);
    return parent[idx];
  }
  const o = parent as JsonObject;
  if (!hasOwn(o, key)) throw new Fail('path', `doc is missing key: "${path}"`);
  return o[key];
}

function addValue(root: unknown, tokens: string[], path: string, value: unknown): unknown {
  if (tokens.length === 0) return value;
  const parent = parentOf(root, tokens, path);
  const key = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    if (key === '-') {
      parent.push(value);
    } else {
      const idx = arrayIndex(key);
      if (idx < 0 || idx > parent.length) throw new Fail('path', `Unable to access invalid index: "${key}" in "${path}"`);
      if (idx === parent.length) parent.push(value);
      else parent.splice(idx, 0, value);
    }
  } else {
    setOwn(parent as JsonObject, key, value);
  }
  return root;
}

function removeValue(root: unknown, tokens: string[], path: string): unknown {
  if (tokens.length === 0) throw new Fail('path', 'unable to remove the whole document');
  const parent = parentOf(root, tokens, path);
  const key = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    const idx = arrayIndex(key);
    if (idx < 0 || idx >= parent.length) throw new Fail('path', `Unable to access invalid index: "${key}" in "${path}"`);
    parent.splice(idx, 1);
  } else {
    const o = parent as JsonObject;
    if (!hasOwn(o, key)) throw new Fail('path', `Unable to remove nonexistent key: "${key}" in "${path}"`);
    delete o[key];
  }
  return root;
}

function replaceValue(root: unknown, tokens: string[], path: string, value: unknown): unknown {
  if (tokens.length === 0) return value;
  const parent = parentOf(root, tokens, path);
  const key = tokens[tokens.length - 1]!;
  if (Array.isArray(parent)) {
    const idx = arrayIndex(key);
    if (idx < 0 || idx >= parent.length) throw new Fail('path', `Unable to access invalid index: "${key}" in "${path}"`);
    parent[idx] = value;
  } else {
    const o = parent as JsonObject;
    if (!hasOwn(o, key)) throw new Fail('path', `replace operation does not apply: doc is missing key: "${path}"`);
    setOwn(o, key, value);
  }
  return root;
}

function pointerMember(op: JsonObject, name: 'path' | 'from', kind: string): { raw: string; tokens: string[] } {
  const v = getOwn(op, name);
  if (typeof v !== 'string') throw new Fail('operation', `${kind} operation missing or invalid ${name} member`);
  const tokens = parsePointer(v);
  if (tokens === null) throw new Fail('path', `${kind} operation has a malformed JSON pointer in ${name}: "${v}"`);
  return { raw: v, tokens };
}

function valueMember(op: JsonObject, kind: string): unknown {
  if (!hasOwn(op, 'value')) throw new Fail('operation', `${kind} operation missing value member`);
  return op['value'];
}

function applyOne(root: unknown, op: unknown, index: number): unknown {
  try {
    if (!isObject(op)) throw new Fail('operation', 'Unexpected kind: unknown');
    const kind = getOwn(op, 'op');
    switch (kind) {
      case 'add': {
        const p = pointerMember(op, 'path', kind);
        return addValue(root, p.tokens, p.raw, cloneJson(valueMember(op, kind)));
      }
      case 'remove': {
        const p = pointerMember(op, 'path', kind);
        return removeValue(root, p.tokens, p.raw);
      }
      case 'replace': {
        const p = pointerMember(op, 'path', kind);
        return replaceValue(root, p.tokens, p.raw, cloneJson(valueMember(op, kind)));
      }
      case 'move': {
        const f = pointerMember(op, 'from', kind);
        const p = pointerMember(op, 'path', kind);
        if (p.raw === f.raw) {
          getValue(root, f.tokens, f.raw);
          return root;
        }
        if (p.raw.startsWith(`${f.raw}/`)) throw new Fail('path', `move operation cannot move "${f.raw}" into its own child "${p.raw}"`);
        const v = getValue(root, f.tokens, f.raw);
        return addValue(removeValue(root, f.tokens, f.raw), p.tokens, p.raw, v);
      }
      case 'copy': {
        const f = pointerMember(op, 'from', kind);
        const p = pointerMember(op, 'path', kind);
        return addValue(root, p.tokens, p.raw, cloneJson(getValue(root, f.tokens, f.raw)));
      }
      case 'test': {
        const p = pointerMember(op, 'path', kind);
        const want = valueMember(op, kind);
        let got: unknown;
        try {
          got = getValue(root, p.tokens, p.raw);
        } catch (e) {
          if (e instanceof Fail) throw new Fail('test-failed', `testing value ${p.raw} failed: ${e.detail}`);
          throw e;
        }
        if (!deepEqual(got, want)) throw new Fail('test-failed', `testing value ${p.raw} failed: test failed`);
        return root;
      }
      default:
        throw new Fail('operation', `Unexpected kind: ${typeof kind === 'string' ? kind : 'unknown'}`);
    }
  } catch (e) {
    if (e instanceof Fail) throw unprocessable(e.kind, `operation ${index}: ${e.detail}`, index);
    throw e;
  }
}
