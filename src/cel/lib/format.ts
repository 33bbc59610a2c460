/**
 * ext strings `format` (cel-go ext.Strings): `'%s %d'.format([a, b])` with the clauses %s, %d,
 * %f and %e (with precision), %b, %o, %x, %X and %%. Errors on too few arguments or a clause that
 * does not fit the argument's type. %s prints lists and maps in brackets with their elements
 * unquoted and map entries sorted by key (`{6: 422s, strKey: x}`), timestamps in RFC 3339,
 * durations in seconds and types by name; %f rounds exact ties to even, as Go.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { Duration } from '@marcbachmann/cel-js/evaluator';
import { formatDuration, formatTimestamp } from './time.ts';

function isUint(v: unknown): boolean {
  return v !== null && typeof v === 'object' && v.constructor?.name === 'UnsignedInt';
}

function intOf(v: unknown, clause: string): bigint {
  if (typeof v === 'bigint') return v;
  if (isUint(v)) return (v as { valueOf(): bigint }).valueOf();
  if (clause === 'b' && typeof v === 'boolean') return v ? 1n : 0n;
  throw new Error(`error during formatting: only integers${clause === 'b' ? ' and bools' : ''} can be formatted as ${clause}`);
}

function special(f: number): string | undefined {
  if (Number.isNaN(f)) return 'NaN';
  if (f === Number.POSITIVE_INFINITY) return 'Infinity';
  if (f === Number.NEGATIVE_INFINITY) return '-Infinity';
  return undefined;
}

function floatOf(v: unknown): number {
  if (typeof v === 'number') return v;
  throw new Error('error during formatting: only floating-point numbers can be formatted with fixed-point or scientific notation');
}

function exp(f: number, p: number): string {
  const s = f.toExponential(p);
  return s.replace(/e([+-])(\d)$/, 'e$10$2');
}

/** The `%s` text of a value (cel-go's string clause): lists and maps in brackets, map keys sorted. */
function asString(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (isUint(v)) return String((v as { valueOf(): bigint }).valueOf());
  if (typeof v === 'number') return special(v) ?? String(v);
  if (v === null) return 'null';
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (v instanceof Date) return formatTimestamp(v);
  if (v instanceof Duration) return formatDuration(v);
  if (Array.isArray(v)) return `[${v.map(asString).join(', ')}]`;
  if (v instanceof Map) return formatEntries([...v.entries()]);
  if (v !== null && typeof v === 'object' && (v.constructor === Object || v.constructor === undefined)) {
    return formatEntries(Object.entries(v));
  }
  // A type value: its name (cel-js prints `Type<name>`).
  const name = (v as { name?: unknown }).name;
  if (typeof name === 'string' && String(v) === `Type<${name}>`) return name === 'null' ? 'null_type' : name;
  return String(v);
}

function formatEntries(entries: [unknown, unknown][]): string {
  const texts = entries.map(([k, x]) => [asString(k), asString(x)] as const);
  texts.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return `{${texts.map(([k, x]) => `${k}: ${x}`).join(', ')}}`;
}

/**
 * Go's %.<p>f: the double's exact value rounded to p digits, ties to even (JS toFixed breaks
 * exact ties upwards: (2.5).toFixed(0) is '3' where Go prints '2').
 */
function fixed(f: number, p: number): string {
  const s = f.toFixed(p);
  if (Math.abs(f) >= 1e21) return s;
  const exact = Math.abs(f).toFixed(100);
  const dot = exact.indexOf('.');
  const rest = exact.slice(dot + 1 + p);
  if (!/^50*$/.test(rest)) return s;
  // An exact tie: keep the truncated digits when their last digit is even.
  const truncated = exact.slice(0, p === 0 ? dot : dot + 1 + p);
  const last = Number(truncated[truncated.length - 1]);
  if (last % 2 === 1) return s;
  return `${f < 0 ? '-' : ''}${truncated}`;
}

function hex(v: unknown, upper: boolean): string {
  let s: string;
  if (typeof v === 'string') s = Buffer.from(v, 'utf8').toString('hex');
  else if (v instanceof Uint8Array) s = Buffer.from(v).toString('hex');
  else {
    const n = intOf(v, 'x');
    s = n < 0n ? `-${(-n).toString(16)}` : n.toString(16);
  }
  return upper ? s.toUpperCase() : s;
}

export function format(fmt: string, args: unknown[]): string {
  let out = '';
  let next = 0;
  for (let i = 0; i < fmt.length; i++) {
    const c = fmt[i];
    if (c !== '%') {
      out += c;
      continue;
    }
    i++;
    if (fmt[i] === '%') {
      out += '%';
      continue;
    }
    let precision: number | undefined;
    if (fmt[i] === '.') {
      let digits = '';
      i++;
      while (i < fmt.length && /[0-9]/.test(fmt[i] as string)) digits += fmt[i++];
      precision = Number(digits);
    }
    const clause = fmt[i];
    if (next >= args.length) throw new Error(`index ${next} out of range`);
    const v = args[next++];
    switch (clause) {
      case 's':
        out += asString(v);
        break;
      case 'd': {
        if (typeof v === 'number') {
          const sp = special(v);
          if (sp === undefined) throw new Error('error during formatting: decimal clause can only be used on integers');
          out += sp;
        } else out += String(intOf(v, 'd'));
        break;
      }
      case 'f': {
        const f = floatOf(v);
        out += special(f) ?? fixed(f, precision ?? 6);
        break;
      }
      case 'e': {
        const f = floatOf(v);
        out += special(f) ?? exp(f, precision ?? 6);
        break;
      }
      case 'b': {
        const n = intOf(v, 'b');
        out += n < 0n ? `-${(-n).toString(2)}` : n.toString(2);
        break;
      }
      case 'o': {
        const n = intOf(v, 'o');
        out += n < 0n ? `-${(-n).toString(8)}` : n.toString(8);
        break;
      }
      case 'x':
      case 'X':
        out += hex(v, clause === 'X');
        break;
      default:
        throw new Error(`could not parse formatting clause: unrecognized formatting clause "${clause ?? ''}"`);
    }
  }
  return out;
}

export function registerFormat(env: Environment): void {
  env.registerFunction('string.format(list<dyn>): string', format);
}
