/**
 * Timestamps and durations as the reference (cel-go) has them, on cel-js's own types: a timestamp
 * is a `Date` (a `Timestamp`, below, when it has nanoseconds below the millisecond), a duration
 * cel-js's `Duration` (seconds and nanoseconds of the same sign).
 *
 *   timestamp('9999-12-31T23:59:59.999999999Z')        nanosecond precision (RFC 3339)
 *   timestamp('0001-01-01T00:00:00Z') + duration('-1s')  error: out of range
 *   string(timestamp('2009-02-13T23:31:30Z'))           '2009-02-13T23:31:30Z'
 *   int(timestamp('2009-02-13T23:31:30Z'))              1234567890 (Unix seconds)
 *   string(duration('1h1.5s'))                          '3601.5s'
 *   int(duration('1s'))                                 1000000000 (nanoseconds)
 *   timestamp(...).getHours('-02:30'), ('Asia/Kathmandu') fixed offsets and IANA zones
 *
 * Ranges: timestamps from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z, durations
 * those of Go's time.Duration (int64 nanoseconds, about ±292 years); results beyond are errors.
 * cel-js's own overloads for these (parsing, arithmetic, comparison, time-zone selectors) keep
 * milliseconds only and check no range, so their handlers are replaced (src/cel/lib/builtins.ts).
 */
import { type Environment, EvaluationError } from '@marcbachmann/cel-js';
import { Duration } from '@marcbachmann/cel-js/evaluator';
import { replaceFunction, replaceOperator } from './builtins.ts';

const TS = 'google.protobuf.Timestamp';
const DUR = 'google.protobuf.Duration';

const NS_PER_S = 1_000_000_000n;
const NS_PER_MS = 1_000_000n;
const MIN_TS_NS = -62_135_596_800n * NS_PER_S; // 0001-01-01T00:00:00Z
const MAX_TS_NS = 253_402_300_799n * NS_PER_S + 999_999_999n; // 9999-12-31T23:59:59.999999999Z
const MAX_DUR_NS = 2n ** 63n - 1n;
const MIN_DUR_NS = -(2n ** 63n);

/** A timestamp with nanoseconds below the millisecond (0 to 999999); cel-js sees a Date. */
export class Timestamp extends Date {
  readonly subMillisNanos: number;
  constructor(ms: number, subMillisNanos: number) {
    super(ms);
    this.subMillisNanos = subMillisNanos;
  }
}
// cel-js finds a value's type by `value.constructor`: a Timestamp is a google.protobuf.Timestamp.
Object.defineProperty(Timestamp.prototype, 'constructor', { value: Date, writable: true, configurable: true });

/** Nanoseconds since the Unix epoch. */
export function timestampNanos(d: Date): bigint {
  return BigInt(d.getTime()) * NS_PER_MS + BigInt(d instanceof Timestamp ? d.subMillisNanos : 0);
}

/** The timestamp `ns` nanoseconds after the epoch; an error outside the range. */
export function timestampOf(ns: bigint): Date {
  if (ns < MIN_TS_NS || ns > MAX_TS_NS) throw new EvaluationError('timestamp out of range');
  let ms = ns / NS_PER_MS;
  let sub = ns - ms * NS_PER_MS;
  if (sub < 0n) {
    ms -= 1n;
    sub += NS_PER_MS;
  }
  return sub === 0n ? new Date(Number(ms)) : new Timestamp(Number(ms), Number(sub));
}

export function durationNanos(d: Duration): bigint {
  return d.seconds * NS_PER_S + BigInt(d.nanos);
}

/** The duration of `ns` nanoseconds; an error outside Go's time.Duration. */
export function durationOf(ns: bigint): Duration {
  if (ns < MIN_DUR_NS || ns > MAX_DUR_NS) throw new EvaluationError('duration out of range');
  return new Duration(ns / NS_PER_S, Number(ns % NS_PER_S));
}

// ---------------------------------------------------------------------------------------------
// Calendar arithmetic on proleptic Gregorian dates (no Date: it reads years 0-99 as 1900-1999).

/** Days from 1970-01-01 to the given date (month 1-12); H. Hinnant's days_from_civil. */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(y: number, m: number): number {
  return m === 2 && isLeap(y) ? 29 : (DAYS_IN_MONTH[m - 1] ?? 0);
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:(Z)|([+-])(\d{2}):(\d{2}))$/;

/** Go's time.Parse(time.RFC3339, s) as nanoseconds (fraction digits past the ninth are dropped, as Go). */
function parseTimestamp(s: string): bigint {
  const m = RFC3339.exec(s);
  if (!m) throw new EvaluationError(`timestamp() requires an RFC 3339 string, got '${s}'`);
  const [y, mo, d, h, mi, sec] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || sec > 59) {
    throw new EvaluationError(`timestamp() requires an RFC 3339 string, got '${s}'`);
  }
  let offset = 0;
  if (!m[8] && m[9]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) throw new EvaluationError(`timestamp() requires an RFC 3339 string, got '${s}'`);
    offset = (m[9] === '-' ? -1 : 1) * (oh * 3600 + om * 60);
  }
  const seconds = BigInt(daysFromCivil(y, mo, d)) * 86_400n + BigInt(h * 3600 + mi * 60 + sec - offset);
  const frac = BigInt((m[7] ?? '').slice(0, 9).padEnd(9, '0'));
  return seconds * NS_PER_S + frac;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Go's Time.Format(time.RFC3339Nano) in UTC: trailing zeros of the fraction dropped. */
export function formatTimestamp(d: Date): string {
  const ns = timestampNanos(d);
  let secs = ns / NS_PER_S;
  let frac = ns - secs * NS_PER_S;
  if (frac < 0n) {
    secs -= 1n;
    frac += NS_PER_S;
  }
  const t = new Date(Number(secs) * 1000);
  const date = `${pad(t.getUTCFullYear(), 4)}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())}`;
  const time = `${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}:${pad(t.getUTCSeconds())}`;
  const fraction = frac === 0n ? '' : `.${frac.toString().padStart(9, '0').replace(/0+$/, '')}`;
  return `${date}T${time}${fraction}Z`;
}

/** A finite double in plain decimal notation with the fewest digits that round-trip (Go 'f', -1). */
function plainDecimal(f: number): string {
  const s = String(f);
  const e = s.indexOf('e');
  if (e < 0) return s;
  const exp = Number(s.slice(e + 1));
  const neg = s.startsWith('-');
  const digits = s.slice(neg ? 1 : 0, e).replace('.', '');
  const point = (s.slice(neg ? 1 : 0, e).indexOf('.') + 1 || digits.length + 1) - 1 + exp;
  const body =
    point <= 0
      ? `0.${'0'.repeat(-point)}${digits}`
      : point >= digits.length
        ? digits + '0'.repeat(point - digits.length)
        : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return neg ? `-${body}` : body;
}

/** cel-go's string(duration): the seconds as a float64 in plain notation, then `s`. */
export function formatDuration(d: Duration): string {
  const ns = durationNanos(d);
  const seconds = Number(ns / NS_PER_S) + Number(ns % NS_PER_S) / 1e9;
  return `${plainDecimal(seconds)}s`;
}

// ---------------------------------------------------------------------------------------------
// Time zones: cel-go's inTimeZone. A name without ':' is an IANA zone ('' and 'UTC' are UTC);
// otherwise `[+-]HH:MM` (the sign applies to both parts; '02:00' is +2h).

/** The calendar fields of an instant in a zone. */
interface Fields {
  readonly year: number;
  readonly month: number; // 0-11
  readonly day: number; // 1-31
  readonly weekday: number; // 0 = Sunday
  readonly hours: number;
  readonly minutes: number;
  readonly seconds: number;
  readonly millis: number;
  readonly dayOfYear: number; // 0-365
}

function fieldsAt(shifted: Date): Fields {
  const year = shifted.getUTCFullYear();
  const month = shifted.getUTCMonth();
  const day = shifted.getUTCDate();
  return {
    year,
    month,
    day,
    weekday: shifted.getUTCDay(),
    hours: shifted.getUTCHours(),
    minutes: shifted.getUTCMinutes(),
    seconds: shifted.getUTCSeconds(),
    millis: shifted.getUTCMilliseconds(),
    dayOfYear: daysFromCivil(year, month + 1, day) - daysFromCivil(year, 1, 1),
  };
}

const ZONE_FORMATS = new Map<string, Intl.DateTimeFormat>();
/** Zone formatters kept (each costs tens of microseconds to build); beyond, the oldest goes. */
const ZONE_FORMATS_MAX = 64;

function zoneFormat(zone: string): Intl.DateTimeFormat {
  let f = ZONE_FORMATS.get(zone);
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      throw new EvaluationError(`unknown time zone '${zone}'`);
    }
    if (ZONE_FORMATS.size >= ZONE_FORMATS_MAX) ZONE_FORMATS.delete(ZONE_FORMATS.keys().next().value as string);
    ZONE_FORMATS.set(zone, f);
  }
  return f;
}

/** The zone's offset from UTC at the instant, in milliseconds. */
function zoneOffsetMs(d: Date, zone: string): number {
  const wholeSeconds = Math.floor(d.getTime() / 1000) * 1000;
  const parts: Record<string, number> = {};
  for (const p of zoneFormat(zone).formatToParts(new Date(wholeSeconds))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const local =
    daysFromCivil(parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1) * 86_400_000 +
    ((parts.hour ?? 0) * 3600 + (parts.minute ?? 0) * 60 + (parts.second ?? 0)) * 1000;
  return local - wholeSeconds;
}

function offsetMs(d: Date, tz: string): number {
  const colon = tz.indexOf(':');
  if (colon < 0) return tz === '' || tz === 'UTC' ? 0 : zoneOffsetMs(d, tz);
  const hourText = tz.slice(0, colon);
  const minuteText = tz.slice(colon + 1);
  if (!/^[+-]?\d+$/.test(hourText) || !/^[+-]?\d+$/.test(minuteText)) throw new EvaluationError(`invalid time zone offset '${tz}'`);
  const h = Number(hourText);
  const m = Number(minuteText);
  return (tz.startsWith('-') ? h * 60 - m : h * 60 + m) * 60_000;
}

function fieldsIn(d: Date, tz?: string): Fields {
  return fieldsAt(tz === undefined ? d : new Date(d.getTime() + offsetMs(d, tz)));
}

const SELECTORS: Record<string, (f: Fields) => number> = {
  getFullYear: (f) => f.year,
  getMonth: (f) => f.month,
  getDayOfYear: (f) => f.dayOfYear,
  getDate: (f) => f.day,
  getDayOfMonth: (f) => f.day - 1,
  getDayOfWeek: (f) => f.weekday,
  getHours: (f) => f.hours,
  getMinutes: (f) => f.minutes,
  getSeconds: (f) => f.seconds,
  getMilliseconds: (f) => f.millis,
};

// ---------------------------------------------------------------------------------------------

const MIN_TS_MS = -62_135_596_800_000;
const MAX_TS_MS = 253_402_300_799_999;

/** t + sign·d; in milliseconds when neither has nanoseconds below the millisecond. */
function addDuration(t: Date, d: Duration, sign: 1 | -1): Date {
  if (!(t instanceof Timestamp) && d.nanos % 1_000_000 === 0) {
    const ms = t.getTime() + sign * (Number(d.seconds) * 1000 + d.nanos / 1_000_000);
    if (ms >= MIN_TS_MS && ms <= MAX_TS_MS) return new Date(ms);
    throw new EvaluationError('timestamp out of range');
  }
  return timestampOf(timestampNanos(t) + (sign === 1 ? durationNanos(d) : -durationNanos(d)));
}

/** Durations whose seconds stay below this sum without leaving Go's time.Duration. */
const SAFE_SECONDS = 9_223_372_035;

/** a + sign·b; in numbers (exact: seconds stay far below 2^53) unless near the range's ends. */
function sumDurations(a: Duration, b: Duration, sign: 1 | -1): Duration {
  let s = Number(a.seconds) + sign * Number(b.seconds);
  let n = a.nanos + sign * b.nanos;
  if (Math.abs(s) > SAFE_SECONDS) return durationOf(durationNanos(a) + (sign === 1 ? durationNanos(b) : -durationNanos(b)));
  if (n >= 1e9) {
    s += 1;
    n -= 1e9;
  } else if (n <= -1e9) {
    s -= 1;
    n += 1e9;
  }
  // Seconds and nanoseconds of the same sign, as cel-js's Duration has them.
  if (s > 0 && n < 0) {
    s -= 1;
    n += 1e9;
  } else if (s < 0 && n > 0) {
    s += 1;
    n -= 1e9;
  }
  return new Duration(BigInt(s), n);
}

/** a - b as a duration; in milliseconds when neither has nanoseconds below the millisecond. */
function between(a: Date, b: Date): Duration {
  if (a instanceof Timestamp || b instanceof Timestamp) return durationOf(timestampNanos(a) - timestampNanos(b));
  const ms = a.getTime() - b.getTime();
  // Go's time.Duration holds about ±9223372036854 ms.
  if (Math.abs(ms) > 9_223_372_036_854) throw new EvaluationError('duration out of range');
  return new Duration(BigInt(Math.trunc(ms / 1000)), (ms % 1000) * 1_000_000);
}

function compareTimestamps(a: Date, b: Date): number {
  const x = a.getTime();
  const y = b.getTime();
  if (x !== y) return x < y ? -1 : 1;
  return (a instanceof Timestamp ? a.subMillisNanos : 0) - (b instanceof Timestamp ? b.subMillisNanos : 0);
}

function compareDurations(a: Duration, b: Duration): number {
  const x = durationNanos(a);
  const y = durationNanos(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

const RELATIONS: Record<'<' | '<=' | '>' | '>=', (c: number) => boolean> = {
  '<': (c) => c < 0,
  '<=': (c) => c <= 0,
  '>': (c) => c > 0,
  '>=': (c) => c >= 0,
};

export function registerTime(env: Environment): void {
  env
    .registerFunction(`string(${TS}): string`, formatTimestamp)
    .registerFunction(`int(${TS}): int`, (d: Date) => {
      const ns = timestampNanos(d);
      const s = ns / NS_PER_S;
      return ns < 0n && s * NS_PER_S !== ns ? s - 1n : s;
    })
    .registerFunction(`timestamp(${TS}): ${TS}`, (d: Date) => d)
    .registerFunction(`string(${DUR}): string`, formatDuration)
    .registerFunction(`int(${DUR}): int`, durationNanos)
    .registerFunction(`duration(${DUR}): ${DUR}`, (d: Duration) => d)
    .registerOperator(`-${DUR}`, (d: Duration) => durationOf(-durationNanos(d)));

  replaceFunction(env, `timestamp(string): ${TS}`, () => (s: string) => timestampOf(parseTimestamp(s)));
  replaceFunction(env, `duration(string): ${DUR}`, (original) => (s: string) => {
    const d = original(s) as Duration;
    // cel-js parses without bound; the reference's Go parser refuses what overflows int64 nanos.
    return durationOf(durationNanos(d));
  });
  for (const [name, select] of Object.entries(SELECTORS)) {
    replaceFunction(env, `${TS}.${name}(string): int`, () => (d: Date, tz: string) => BigInt(select(fieldsIn(d, tz))));
  }
  // cel-js's getDayOfYear() reads the process's local time zone.
  replaceFunction(env, `${TS}.getDayOfYear(): int`, () => (d: Date) => BigInt(fieldsIn(d).dayOfYear));

  replaceOperator(env, '==', `${TS} == ${TS}: bool`, () => (a: Date, b: Date) => compareTimestamps(a, b) === 0);
  replaceOperator(env, '!=', `${TS} != ${TS}: bool`, () => (a: Date, b: Date) => compareTimestamps(a, b) !== 0);
  for (const [op, holds] of Object.entries(RELATIONS)) {
    replaceOperator(env, op, `${TS} ${op} ${TS}: bool`, () => (a: Date, b: Date) => holds(compareTimestamps(a, b)));
    replaceOperator(env, op, `${DUR} ${op} ${DUR}: bool`, () => (a: Duration, b: Duration) => holds(compareDurations(a, b)));
  }
  replaceOperator(env, '-', `${TS} - ${TS}: ${DUR}`, () => between);
  replaceOperator(env, '-', `${TS} - ${DUR}: ${TS}`, () => (a: Date, b: Duration) => addDuration(a, b, -1));
  replaceOperator(env, '+', `${TS} + ${DUR}: ${TS}`, () => (a: Date, b: Duration) => addDuration(a, b, 1));
  // cel-js declares this sum a duration: it is a timestamp.
  replaceOperator(env, '+', `${DUR} + ${TS}: ${DUR}`, () => (a: Duration, b: Date) => addDuration(b, a, 1), `${TS} + ${DUR}: ${TS}`);
  replaceOperator(env, '+', `${DUR} + ${DUR}: ${DUR}`, () => (a: Duration, b: Duration) => sumDurations(a, b, 1));
  replaceOperator(env, '-', `${DUR} - ${DUR}: ${DUR}`, () => (a: Duration, b: Duration) => sumDurations(a, b, -1));
}
