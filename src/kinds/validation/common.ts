/**
 * Shared pieces of the per-group validation rules (src/kinds/validation/<group>.ts): reading decoded
 * JSON safely, the reference's generic value checks (ports, percents, DNS-1035 labels, config keys,
 * label selectors) and the Go `%#v` text the reference prints for structs, slices and maps.
 *
 * Every rule returns FieldErrors with the reference's path, type and detail; the registry turns them
 * into one 422 Invalid (src/api/status.ts). Objects reach the rules after the schema pass, so a field
 * that is present has its declared JSON type; absent fields (and nulls, which the schema drops) read
 * as Go zero values.
 */
import { isObject, type JsonObject, type Obj } from '../../api/meta';
import { type FieldError, forbiddenField, invalidValue, labelValue, qualifiedName, required } from '../../api/validation';

export type J = JsonObject;
export type Errs = FieldError[];

/** The object at `v`, or undefined (Go: a nil pointer to a struct). */
export const obj = (v: unknown): J | undefined => (isObject(v) ? v : undefined);
/** The list at `v`, or an empty list (Go: a nil slice). */
export const list = <T = unknown>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);
const NO_ITEMS: readonly never[] = Object.freeze([]);
/** `list` for the rules that only read the list: absent, it is one shared (frozen) empty list. */
export const items = <T = unknown>(v: unknown): readonly T[] => (Array.isArray(v) ? (v as T[]) : NO_ITEMS);
/** The map at `v`, or an empty map. */
export const map = <T = unknown>(v: unknown): Record<string, T> => (isObject(v) ? (v as Record<string, T>) : {});
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
/** A map's keys in order (the reference ranges over sorted keys). */
export function sortedKeys(m: Record<string, unknown>): string[] {
  const keys = Object.keys(m);
  // The maps of objects are small: an insertion sort (code unit order, as sort()'s) spares the builtin's setup.
  if (keys.length > 8) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i] as string;
    // Keys already in order are not written (Object.keys' list may be copied on its first write).
    if ((keys[i - 1] as string) <= k) continue;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > k) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = k;
  }
  return keys;
}

// ---- bad values as the reference prints them -------------------------------------------

/**
 * The symbol under which a bad value carries the text Go's `%#v` prints for it (the reference
 * renders structs, slices and maps that way: `[]string{"*", "get"}`, `map[string]string{"a":"b"}`).
 * status.ts prints that text when present; otherwise JSON (what `toJSON` returns).
 */
export const GO_SYNTAX = Symbol.for('svc.validation.goSyntax');

export class GoValue {
  readonly [GO_SYNTAX]: string;
  constructor(
    syntax: string,
    private readonly json: unknown,
  ) {
    this[GO_SYNTAX] = syntax;
  }
  toJSON(): unknown {
    return this.json;
  }
  toString(): string {
    return this[GO_SYNTAX];
  }
}

/** Go's %q for the strings the API carries (JSON escaping agrees for printable text). */
export const goQuote = (s: string): string => JSON.stringify(s);

/** `[]T{"a", "b"}`; `[]T(nil)` when absent. */
export function goStrings(v: unknown, type = '[]string'): string {
  if (!Array.isArray(v)) return `${type}(nil)`;
  return `${type}{${v.map((s) => goQuote(String(s))).join(', ')}}`;
}

/** `map[string]string{"a":"b"}` with sorted keys; `map[string]string(nil)` when absent. */
export function goStringMap(v: unknown): string {
  if (!isObject(v)) return 'map[string]string(nil)';
  return `map[string]string{${sortedKeys(v)
    .map((k) => `${goQuote(k)}:${goQuote(String(v[k]))}`)
    .join(', ')}}`;
}

export const stringsValue = (v: unknown, type = '[]string'): GoValue => new GoValue(goStrings(v, type), v ?? null);
export const stringMapValue = (v: unknown): GoValue => new GoValue(goStringMap(v), v ?? null);

/** A metav1.LabelSelector as `v1.LabelSelector{MatchLabels:..., MatchExpressions:...}`. */
export function goLabelSelector(sel: J): string {
  const exprs = sel.matchExpressions;
  const e = Array.isArray(exprs)
    ? `[]v1.LabelSelectorRequirement{${exprs
        .map(
          (r: J) =>
            `v1.LabelSelectorRequirement{Key:${goQuote(str(r.key))}, Operator:${goQuote(str(r.operator))}, Values:${goStrings(r.values)}}`,
        )
        .join(', ')}}`
    : '[]v1.LabelSelectorRequirement(nil)';
  return `v1.LabelSelector{MatchLabels:${goStringMap(sel.matchLabels)}, MatchExpressions:${e}}`;
}

export const selectorValue = (sel: J): GoValue => new GoValue(goLabelSelector(sel), sel);

/** An intstr.IntOrString as Go prints it (Type 0 int, 1 string). */
export function intOrStringValue(v: number | string): GoValue {
  const syntax =
    typeof v === 'number'
      ? `intstr.IntOrString{Type:0, IntVal:${v}, StrVal:""}`
      : `intstr.IntOrString{Type:1, IntVal:0, StrVal:${goQuote(v)}}`;
  return new GoValue(syntax, v);
}

// ---- generic value checks (apimachinery util/validation) --------------------------------

export const FIELD_IMMUTABLE = 'field is immutable';
export const IS_NEGATIVE = 'must be greater than or equal to 0';

export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

export const maxLenError = (n: number): string => `must be no more than ${n} characters`;

export function isValidPortNum(port: number): string[] {
  return port >= 1 && port <= 65535 ? [] : ['must be between 1 and 65535, inclusive'];
}

/** The valid port names: at most 15 of a-z, 0-9 and single inner hyphens, with a letter. */
const VALID_PORT_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

export function isValidPortName(port: string): string[] {
  if (port.length <= 15 && VALID_PORT_NAME.test(port) && /[a-z]/.test(port)) return [];
  const errs: string[] = [];
  if (port.length > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(port)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  else if (!/[a-z]/.test(port)) errs.push('must contain at least one letter (a-z)');
  if (port.includes('--')) errs.push('must not contain consecutive hyphens');
  if (port.length > 0 && (port.startsWith('-') || port.endsWith('-'))) errs.push('must not begin or end with a hyphen');
  return errs;
}

const DNS1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
export function dns1035Label(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push(maxLenError(63));
  if (!DNS1035.test(v)) {
    errs.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        '[a-z]([-a-z0-9]*[a-z0-9])?',
        'my-name',
        'abc-123',
      ),
    );
  }
  return errs;
}

/** A key of ConfigMap/Secret data (IsConfigMapKey). */
export function configMapKey(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 253) errs.push(maxLenError(253));
  if (!/^[-._a-zA-Z0-9]+$/.test(v)) {
    errs.push(
      regexError(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        '[-._a-zA-Z0-9]+',
        'key.name',
        'KEY_NAME',
        'key-name',
      ),
    );
  }
  if (v === '.') errs.push("must not be '.'");
  else if (v === '..') errs.push("must not be '..'");
  else if (v.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

export function isValidPercent(v: string): string[] {
  return /^[0-9]+%$/.test(v)
    ? []
    : [regexError("a valid percent string must be a numeric string followed by an ending '%'", '[0-9]+%', '1%', '93%')];
}

/** ValidateNonnegativeField. */
export function nonNegative(v: number, path: string): Errs {
  return v < 0 ? [invalidValue(path, v, IS_NEGATIVE)] : [];
}

/** ValidateDNS1123Label / ValidateQualifiedName style: one Invalid per message. */
export function each(path: string, value: unknown, msgs: readonly string[]): Errs {
  return msgs.map((m) => invalidValue(path, value, m));
}

/** Append `more` to `errs` (a loop: cheaper than a spread push for the usual empty list). */
export function pushAll(errs: Errs, more: readonly FieldError[]): void {
  for (let i = 0; i < more.length; i++) errs.push(more[i] as FieldError);
}

/**
 * `each` into `errs`. The hot paths (the pod rules) test the messages first and build the field
 * path only when there is one, as most values are valid.
 */
export function pushEach(errs: Errs, path: string, value: unknown, msgs: readonly string[]): void {
  for (const m of msgs) errs.push(invalidValue(path, value, m));
}

/** apps ValidatePositiveIntOrPercent: a non-negative int or a `N%` string. */
export function positiveIntOrPercent(v: number | string, path: string): Errs {
  if (typeof v === 'string') return each(path, intOrStringValue(v), isValidPercent(v));
  return nonNegative(v, path);
}

/** apps IsNotMoreThan100Percent. */
export function notMoreThan100Percent(v: number | string, path: string): Errs {
  if (typeof v !== 'string' || isValidPercent(v).length > 0) return [];
  return Number(v.slice(0, -1)) <= 100 ? [] : [invalidValue(path, intOrStringValue(v), 'must not be greater than 100%')];
}

/** Semantic equality: absent, null, empty list and empty map are equal (apiequality.Semantic). */
export function semanticEqual(a: unknown, b: unknown): boolean {
  // The same value (a status write's unchanged spec is often the very object it was read as).
  if (a === b) return true;
  if (emptyValue(a) && emptyValue(b)) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!semanticEqual(a[i], b[i])) return false;
    return true;
  }
  if (isObject(a) && isObject(b)) {
    // Every key of either (one missing counts as absent), without building the union.
    for (const k in a) if (!semanticEqual(a[k], b[k])) return false;
    for (const k in b) if (!Object.hasOwn(a, k) && !semanticEqual(undefined, b[k])) return false;
    return true;
  }
  return false;
}

const emptyValue = (v: unknown): boolean =>
  v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);

/** ValidateImmutableField. */
export function immutable(next: unknown, old: unknown, path: string, bad: unknown = next): Errs {
  return semanticEqual(next, old) ? [] : [invalidValue(path, bad, FIELD_IMMUTABLE)];
}

// ---- label selectors (apimachinery meta/v1/validation) ----------------------------------

/** ValidateLabels: keys are qualified names, values label values; errors on the map's own path. */
export function validateLabels(labels: unknown, path: string): Errs {
  const errs: Errs = [];
  if (!isObject(labels)) return errs;
  for (const k of sortedKeys(labels)) {
    pushEach(errs, path, k, qualifiedName(k));
    const v = labels[k];
    pushEach(errs, path, v, labelValue(String(v)));
  }
  return errs;
}

/** ValidateLabelSelector (strict: label values in expressions must be valid). */
export function validateLabelSelector(sel: unknown, path: string): Errs {
  const s = obj(sel);
  if (!s) return [];
  const errs = isObject(s.matchLabels) ? validateLabels(s.matchLabels, `${path}.matchLabels`) : [];
  const exprs = list<J>(s.matchExpressions);
  for (let i = 0; i < exprs.length; i++) {
    const r = exprs[i] as J;
    const p = `${path}.matchExpressions[${i}]`;
    const values = list<string>(r.values);
    switch (r.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) errs.push(required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0)
          errs.push(forbiddenField(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:
        errs.push(invalidValue(`${p}.operator`, str(r.operator), 'not a valid selector operator'));
    }
    const key = str(r.key);
    const keyMsgs = qualifiedName(key);
    if (keyMsgs.length > 0) pushEach(errs, `${p}.key`, key, keyMsgs);
    for (let j = 0; j < values.length; j++) {
      const v = values[j] as string;
      const msgs = labelValue(v);
      if (msgs.length > 0) pushEach(errs, `${p}.values[${j}]`, v, msgs);
    }
  }
  return errs;
}

/**
 * Whether validate() sees an update: the registry validates the merged object on update, which
 * carries the stored resourceVersion; an object being created has none.
 */
export const isUpdate = (o: Obj): boolean => !!o.metadata.resourceVersion;

/** Lists up to this long find repeats by scanning (sparing a Set per list); longer ones use a Set. */
export const SCAN_MAX = 16;

/** Whether an item before the i-th has the string `value` at `key` (a short list's duplicate check). */
export function seenBefore(list: readonly J[], i: number, key: string, value: string): boolean {
  for (let j = 0; j < i; j++) if (str((list[j] as J)[key]) === value) return true;
  return false;
}

/** A list contains `*` (the reference's hasWildcard). */
export const hasWildcard = (v: unknown[]): boolean => v.includes('*');

// ---- workload status (the status subresource's rules of apps kinds) ---------------------------

const zeroOr = (v: unknown): number => (typeof v === 'number' ? v : 0);
export const STATUS_REPLICAS_MSG = 'cannot be greater than status.replicas';

/** Non-negative counters, then each `[field, bound, message]` not above its bound. */
export function statusCounters(status: J, fields: string[], bounds: [string, string, string][]): Errs {
  const errs: Errs = [];
  for (const f of fields) if (status[f] !== undefined) errs.push(...nonNegative(zeroOr(status[f]), `status.${f}`));
  for (const [f, bound, msg] of bounds)
    if (zeroOr(status[f]) > zeroOr(status[bound])) errs.push(invalidValue(`status.${f}`, zeroOr(status[f]), msg));
  return errs;
}

/** IsDecremented(collisionCount). */
export function statusCollisionCount(status: J, old: J): Errs {
  const next = status.collisionCount;
  const prev = old.collisionCount;
  if (typeof prev !== 'number' || (typeof next === 'number' && next >= prev)) return [];
  return [invalidValue('status.collisionCount', zeroOr(next), 'cannot be decremented')];
}
