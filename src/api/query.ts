/**
 * Query parameters as the reference parses them: booleans with Go's strconv.ParseBool and
 * integers with strconv.ParseInt (base 10, 64 bits). A value that does not parse is the client's
 * error: 400 BadRequest naming the parameter, with Go's error text.
 *
 *   ?watch=1 ?watch=t ?watch=True   → true      ?watch=0 ?watch=F ?watch=false → false
 *   ?watch=yes ?watch= ?watch       → 400       (absent → undefined)
 */
import { badRequest, StatusError } from './status';

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** Go's strconv.ParseBool; undefined for any other text. */
export function parseGoBool(s: string): boolean | undefined {
  if (TRUE.has(s)) return true;
  if (FALSE.has(s)) return false;
  return undefined;
}

/** A boolean query parameter: undefined when absent, 400 when not a Go boolean. */
export function queryBool(q: URLSearchParams, name: string): boolean | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  const b = parseGoBool(v);
  if (b === undefined) throw badRequest(`${name}: Invalid value: "${v}": strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
  return b;
}

const INT_RE = /^[+-]?[0-9]+$/;
const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

/** Go's strconv.ParseInt(s, 10, 64): the number, or the text of Go's error. */
export function parseGoInt64(s: string): number | string {
  if (!INT_RE.test(s)) return `strconv.ParseInt: parsing ${JSON.stringify(s)}: invalid syntax`;
  const big = BigInt(s);
  if (big > INT64_MAX || big < INT64_MIN) return `strconv.ParseInt: parsing ${JSON.stringify(s)}: value out of range`;
  return Number(big);
}

/** An int64 query parameter: undefined when absent, 400 when not an integer in range. */
export function queryInt(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  const n = parseGoInt64(v);
  if (typeof n === 'string') throw badRequest(`${name}: Invalid value: "${v}": ${n}`);
  return n;
}

/** The Table rows' `includeObject` (default Metadata); another value is 406, as the reference's asTable. */
export function includeObject(q: URLSearchParams): 'None' | 'Metadata' | 'Object' {
  const v = q.get('includeObject') ?? '';
  if (v === '' || v === 'Metadata') return 'Metadata';
  if (v === 'None' || v === 'Object') return v;
  throw new StatusError(406, 'NotAcceptable', `unrecognized includeObject value: ${JSON.stringify(v)}`);
}

/**
 * Whether an answer is indented (the reference's isPrettyPrint): `pretty` when given (a
 * malformed one is false there), else for browsers and command-line tools by their user agent
 * (curl, Wget, Mozilla/5.0).
 */
export function prettyPrint(q: URLSearchParams, userAgent: string | null): boolean {
  const p = q.get('pretty');
  if (p !== null && p !== '') return parseGoBool(p) === true;
  const ua = userAgent ?? '';
  return ua.startsWith('curl') || ua.startsWith('Wget') || ua.startsWith('Mozilla/5.0');
}
