/**
 * Label and field selectors: parsing (the reference's grammar and error texts) and matching, in
 * both forms the API has.
 *
 * The query form (`?labelSelector=`, `?fieldSelector=`), label terms comma separated (all must hold):
 *   key=v  key==v  key!=v  key in (a,b)  key notin (a,b)  key  !key  key>n  key<n
 * Field selector terms: field=v  field==v  field!=v (only the fields a kind declares selectable).
 *
 * The object form (metav1.LabelSelector: matchLabels and matchExpressions with In, NotIn, Exists,
 * DoesNotExist), as objects carry it: a Deployment's selector, a PodDisruptionBudget's, an
 * aggregated ClusterRole's, an admission policy binding's.
 */
import { isObject } from './meta';
import { badRequest, type StatusError } from './status';
import { labelValue, qualifiedName } from './validation';

export type Requirement =
  | { key: string; op: 'eq' | 'neq'; value: string }
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'exists' | 'notexists' }
  | { key: string; op: 'gt' | 'lt'; value: number };

export type LabelSelector = Requirement[];

const QUALIFIED_NAME = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function selectorError(msg: string): StatusError {
  return badRequest(`unable to parse requirement: ${msg}`);
}

function checkKey(key: string): string {
  const name = key.includes('/') ? key.slice(key.indexOf('/') + 1) : key;
  if (!QUALIFIED_NAME.test(key) || name.length > 63 || key.length > 253 + 64) {
    throw selectorError(
      `key: Invalid value: "${key}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    );
  }
  return key;
}

function checkValue(v: string, key: string, index = 0): string {
  if (v.length > 63 || !LABEL_VALUE.test(v)) {
    throw selectorError(
      `values[${index}][${key}]: Invalid value: "${v}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
    );
  }
  return v;
}

/** Split on commas that are not inside parentheses. */
function splitTerms(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out;
}

/** The term forms, tried in order; each builds a requirement from its match (checking keys/values). */
const TERMS: [RegExp, (m: string[]) => Requirement][] = [
  [/^!\s*([^\s!=<>(),]+)$/, ([, key]) => ({ key: checkKey(key as string), op: 'notexists' })],
  [
    /^([^\s!=<>(),]+)\s+(in|notin)\s*\(([^()]*)\)$/,
    ([, key, op, list]) => {
      // As the reference's parser: `()` is the set {""}; values are a sorted set.
      const values = [...new Set((list as string).split(',').map((v) => v.trim()))].sort();
      checkKey(key as string);
      for (let i = 0; i < values.length; i++) checkValue(values[i] as string, key as string, i);
      return { key: key as string, op: op as 'in' | 'notin', values };
    },
  ],
  [
    /^([^\s!=<>(),]+)\s*(==|=|!=)\s*([^\s!=<>(),]*)$/,
    ([, key, op, value]) => ({
      key: checkKey(key as string),
      op: op === '!=' ? 'neq' : 'eq',
      value: checkValue(value as string, key as string),
    }),
  ],
  [
    /^([^\s!=<>(),]+)\s*(<|>)\s*([^\s!=<>(),]+)$/,
    ([, key, op, value]) => {
      const n = Number(value);
      if (!Number.isInteger(n)) throw selectorError(`for 'Gt', 'Lt' operators, the value must be an integer`);
      return { key: checkKey(key as string), op: op === '>' ? 'gt' : 'lt', value: n };
    },
  ],
  [/^([^\s!=<>(),]+)$/, ([, key]) => ({ key: checkKey(key as string), op: 'exists' })],
];

export function parseLabelSelector(raw: string): LabelSelector {
  const s = raw.trim();
  if (s === '') return [];
  return splitTerms(s).map((termRaw) => {
    const term = termRaw.trim();
    if (term === '') throw badRequest(`found '', expected: identifier`);
    for (const [re, build] of TERMS) {
      const m = re.exec(term);
      if (m) return build(m);
    }
    throw badRequest(`unable to parse requirement: found '${term}', expected: in, notin, =, ==, !=, gt, lt`);
  });
}

export function matchesLabels(sel: LabelSelector, labels: Record<string, string> | undefined): boolean {
  for (const r of sel) {
    const v = labels?.[r.key];
    switch (r.op) {
      case 'eq':
        if (v !== r.value) return false;
        break;
      case 'neq':
        if (v === r.value) return false;
        break;
      case 'in':
        if (v === undefined || !r.values.includes(v)) return false;
        break;
      case 'notin':
        if (v !== undefined && r.values.includes(v)) return false;
        break;
      case 'exists':
        if (v === undefined) return false;
        break;
      case 'notexists':
        if (v !== undefined) return false;
        break;
      case 'gt':
      case 'lt': {
        if (v === undefined) return false;
        const n = Number(v);
        if (!Number.isInteger(n)) return false;
        if (r.op === 'gt' ? !(n > r.value) : !(n < r.value)) return false;
      }
    }
  }
  return true;
}

export interface FieldRequirement {
  field: string;
  op: 'eq' | 'neq';
  value: string;
}

/** Parse a field selector; `allowed` are the kind's selectable fields. */
export function parseFieldSelector(raw: string, allowed: ReadonlySet<string>): FieldRequirement[] {
  const s = raw.trim();
  if (s === '') return [];
  const out: FieldRequirement[] = [];
  for (const termRaw of s.split(',')) {
    const term = termRaw.trim();
    const m = /^([^=!]+?)\s*(==|=|!=)\s*(.*)$/.exec(term);
    if (!m) throw badRequest(`invalid selector: '${raw}'; can't understand '${term}'`);
    const field = m[1] as string;
    if (!allowed.has(field)) throw badRequest(`field label not supported: ${field}`);
    out.push({ field, op: m[2] === '!=' ? 'neq' : 'eq', value: (m[3] as string).trim() });
  }
  return out;
}

export function matchesFields(reqs: FieldRequirement[], fields: (name: string) => string): boolean {
  for (const r of reqs) {
    const v = fields(r.field);
    if (r.op === 'eq' ? v !== r.value : v === r.value) return false;
  }
  return true;
}

/** What a metav1.LabelSelector selects. */
export interface SelectorMatcher {
  /** The selector is `{}` (selects everything). */
  empty: boolean;
  matches(labels: Record<string, string>): boolean;
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * metav1.LabelSelectorAsSelector then Matches: `undefined` when the selector cannot be converted
 * (the reference then reports "invalid label selector"). A nil selector selects nothing; `{}`
 * selects everything (and is `empty`).
 */
export function selectorMatcher(sel: unknown): SelectorMatcher | undefined {
  if (!isObject(sel)) return { empty: false, matches: () => false };
  const ml = isObject(sel.matchLabels) ? (sel.matchLabels as Record<string, string>) : {};
  const exprs = Array.isArray(sel.matchExpressions) ? (sel.matchExpressions as Record<string, unknown>[]) : [];
  if (Object.keys(ml).length + exprs.length === 0) return { empty: true, matches: () => true };
  for (const [k, v] of Object.entries(ml)) if (qualifiedName(k).length > 0 || labelValue(String(v)).length > 0) return undefined;
  for (const r of exprs) {
    const values = Array.isArray(r.values) ? (r.values as string[]) : [];
    if (qualifiedName(text(r.key)).length > 0) return undefined;
    if (values.some((v) => labelValue(v).length > 0)) return undefined;
    if ((r.operator === 'In' || r.operator === 'NotIn') && values.length === 0) return undefined;
    if ((r.operator === 'Exists' || r.operator === 'DoesNotExist') && values.length > 0) return undefined;
    if (!['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(text(r.operator))) return undefined;
  }
  // Taken once: matches runs per pod in the scheduler's loops.
  const pairs = Object.entries(ml);
  return {
    empty: false,
    matches: (labels) => {
      for (const [k, v] of pairs) if (labels[k] !== v) return false;
      for (const r of exprs) {
        const key = text(r.key);
        const has = Object.hasOwn(labels, key);
        const values = Array.isArray(r.values) ? (r.values as string[]) : [];
        switch (r.operator) {
          case 'In':
            if (!has || !values.includes(labels[key] as string)) return false;
            break;
          case 'NotIn':
            if (has && values.includes(labels[key] as string)) return false;
            break;
          case 'Exists':
            if (!has) return false;
            break;
          case 'DoesNotExist':
            if (has) return false;
            break;
        }
      }
      return true;
    },
  };
}
