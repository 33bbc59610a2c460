/**
 * ext strings `format` (cel-go ext.Strings): `'%s %d'.format([a, b])` with the clauses %s, %d,
 * %f and %e (with precision), %b, %o, %x, %X and %%. Errors on too few arguments or a clause that
 * does not fit the argument's type.
 */
import type { Environment } from '@marcbachmann/cel-js';

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

function asString(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  if (isUint(v)) return String((v as { valueOf(): bigint }).valueOf());
  if (typeof v === 'number') return special(v) ?? (Number.isInteger(v) ? String(v) : String(v));
  if (v === null) return 'null';
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (Array.isArray(v)) return `[${v.map(inner).join(', ')}]`;
  if (v instanceof Map) return `{${[...v.entries()].map(([k, x]) => `${inner(k)}: ${inner(x)}`).join(', ')}}`;
  return String(v);
}

function inner(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : asString(v);
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
        out += special(f) ?? f.toFixed(precision ?? 6);
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
