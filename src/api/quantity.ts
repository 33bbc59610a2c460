/**
 * resource.Quantity, the one grammar of the server: parsing ("100m", "1.5Gi", "2e3"), exact
 * comparison, the rounded-up Value/MilliValue, and the canonical text the reference prints
 * ("1500m", "1Gi", "2"). Schema validation (src/schema/engine.ts), the validation rules, quota
 * and limit-range admission, the quota controller and the table printers all read quantities
 * here.
 *
 * The grammar is the reference's published one (the OpenAPI pattern of a Quantity):
 *
 *   <sign>? ( <digits> [ . <digits>? ] | . <digits> ) <suffix>?
 *   suffix: Ki Mi Gi Ti Pi Ei (×1024^n) | n u m k M G T P E (×10^3n) | e|E <sign>? <digits>
 *
 * so "1.", ".5" and "+1" parse, "." and "" do not (the reference's scanner alone reads "." and
 * "-" as zero; its pattern refuses them). JSON values are trimmed first, as
 * Quantity.UnmarshalJSON does.
 *
 * A quantity is kept exactly as mantissa × 10^exp (binary suffixes multiply the mantissa by
 * 1024^n). Precision below nano is rounded up in magnitude (away from zero), as ParseQuantity
 * rounds: "0.0000000001" is 1n and "-0.0000000001" is -1n.
 */

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

export interface Quantity {
  /** value = mant × 10^exp */
  mant: bigint;
  exp: number;
  format: QuantityFormat;
}

const BINARY: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DECIMAL_SUFFIX: Record<number, string> = Object.fromEntries(Object.entries(DECIMAL).map(([s, e]) => [e, s]));
const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$/;

/**
 * Parsed quantities by text: objects of one template repeat the same few texts ("100m", "256Mi"),
 * and quota admission and the limit ranger parse each of them per create. Quantities are never
 * mutated (every operation returns a new one), so they are shared. Bounded: cleared when full.
 */
const parsed = new Map<string, Quantity | null>();
const PARSED_MAX = 4096;

/** Parse a quantity string (or a JSON number); undefined when it does not parse. */
export function parseQuantity(v: unknown): Quantity | undefined {
  if (typeof v === 'string') {
    const hit = parsed.get(v);
    if (hit !== undefined) return hit ?? undefined;
    const q = parseText(v.trim());
    if (parsed.size >= PARSED_MAX) parsed.clear();
    parsed.set(v, q ?? null);
    return q;
  }
  return typeof v === 'number' ? parseText(String(v)) : undefined;
}

/** parseQuantity without the memo, for texts that rarely repeat (a quota's usage as it grows). */
export function parseQuantityText(v: unknown): Quantity | undefined {
  if (typeof v === 'string') return parseText(v.trim());
  return typeof v === 'number' ? parseText(String(v)) : undefined;
}

/** Whether `s` (trimmed) is a quantity: the check of a schema's quantity fields, without parsing. */
export function isQuantity(s: string): boolean {
  return QUANTITY.test(s.trim());
}

function parseText(s: string): Quantity | undefined {
  const m = QUANTITY.exec(s);
  if (!m) return undefined;
  const [, sign, digits = '', suffix = ''] = m;
  const dot = digits.indexOf('.');
  const whole = dot < 0 ? digits : digits.slice(0, dot);
  const frac = dot < 0 ? '' : digits.slice(dot + 1);
  let mant = BigInt(`${whole}${frac}` || '0');
  let exp = -frac.length;
  let format: QuantityFormat = 'DecimalSI';
  if (suffix in BINARY) {
    mant *= 1024n ** BigInt(BINARY[suffix] as number);
    format = 'BinarySI';
  } else if (suffix.startsWith('e') || suffix.startsWith('E')) {
    exp += Number(suffix.slice(1));
    format = 'DecimalExponent';
  } else {
    exp += DECIMAL[suffix] as number;
  }
  // The reference keeps at most nano precision, rounding the magnitude up.
  if (exp < -9) {
    const d = 10n ** BigInt(-9 - exp);
    const q = mant / d;
    mant = mant % d === 0n ? q : q + 1n;
    exp = -9;
  }
  if (sign === '-') mant = -mant;
  return { mant, exp, format };
}

function align(a: Quantity, b: Quantity): [bigint, bigint] {
  if (a.exp === b.exp) return [a.mant, b.mant];
  const e = Math.min(a.exp, b.exp);
  return [a.mant * 10n ** BigInt(a.exp - e), b.mant * 10n ** BigInt(b.exp - e)];
}

/** -1, 0 or 1. */
export function cmpQuantity(a: Quantity, b: Quantity): number {
  if (a.exp === b.exp) return a.mant < b.mant ? -1 : a.mant > b.mant ? 1 : 0;
  const [x, y] = align(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The value scaled to 10^scale, rounded up (ceiling), as the reference's ScaledValue. */
function scaled(q: Quantity, scale: number): bigint {
  const shift = q.exp - scale;
  if (shift >= 0) return q.mant * 10n ** BigInt(shift);
  const d = 10n ** BigInt(-shift);
  const r = q.mant / d;
  return q.mant % d !== 0n && q.mant > 0n ? r + 1n : r;
}

export const quantityValue = (q: Quantity): bigint => scaled(q, 0);
export const quantityMilliValue = (q: Quantity): bigint => scaled(q, -3);
export const isNegative = (q: Quantity): boolean => q.mant < 0n;

/** The canonical text (Quantity.String()). */
export function formatQuantity(q: Quantity): string {
  if (q.mant === 0n) return '0';
  let format = q.format;
  if (format === 'BinarySI') {
    const abs = q.mant < 0n ? -q.mant : q.mant;
    const exact = q.exp >= 0 || abs % 10n ** BigInt(-q.exp) === 0n;
    if (cmpQuantity(q, { mant: 1024n, exp: 0, format }) < 0 && cmpQuantity(q, { mant: -1024n, exp: 0, format }) > 0) format = 'DecimalSI';
    else if (!exact) format = 'DecimalSI';
  }
  if (format === 'BinarySI') {
    let n = scaled(q, 0);
    let e = 0;
    while (n % 1024n === 0n && e < 6) {
      n /= 1024n;
      e++;
    }
    return `${n}${Object.keys(BINARY)[e - 1] ?? ''}`;
  }
  let mant = q.mant;
  let exp = q.exp;
  while (mant % 10n === 0n) {
    mant /= 10n;
    exp++;
  }
  const r = ((exp % 3) + 3) % 3;
  if (r === 1) {
    mant *= 10n;
    exp -= 1;
  } else if (r === 2) {
    mant *= 100n;
    exp -= 2;
  }
  if (exp === 0) return `${mant}`;
  if (format === 'DecimalSI' && exp in DECIMAL_SUFFIX) return `${mant}${DECIMAL_SUFFIX[exp]}`;
  return `${mant}e${exp}`;
}
