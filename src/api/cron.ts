/**
 * Cron schedules as the reference reads them (github.com/robfig/cron/v3 ParseStandard, which
 * CronJob validation and the CronJob controller use): five fields (minute, hour, day of month,
 * month, day of week) with `*`, `?`, lists, ranges, steps and month/day names, or one of the
 * descriptors @yearly/@annually, @monthly, @weekly, @daily/@midnight, @hourly, `@every <duration>`.
 * An error is the parser's own text (CronJob validation prints it after the schedule).
 *
 * `next(schedule, after, timeZone)` is the first activation strictly after `after`, in an IANA
 * zone (UTC when none), computed on the zone's wall clock as the reference's SpecSchedule.Next.
 * A wall time inside a daylight-saving gap is skipped (as the reference does); one inside a
 * fall-back overlap fires once, at its first instant (the reference may fire in both).
 */

interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const MINUTES: Bounds = { min: 0, max: 59 };
const HOURS: Bounds = { min: 0, max: 23 };
const DOM: Bounds = { min: 1, max: 31 };
const MONTHS: Bounds = { min: 1, max: 12, names: Object.fromEntries(MONTH_NAMES.map((n, i) => [n, i + 1])) };
const DOW: Bounds = { min: 0, max: 6, names: Object.fromEntries(DAY_NAMES.map((n, i) => [n, i])) };

/** One field: the values it allows, and whether it was `*`/`?` (robfig's star bit). */
export interface Field {
  values: ReadonlySet<number>;
  star: boolean;
}

export type Schedule =
  | { kind: 'spec'; minute: Field; hour: Field; dom: Field; month: Field; dow: Field }
  | { kind: 'every'; delayMs: number };

export class CronError extends Error {}

function all(b: Bounds): Field {
  const values = new Set<number>();
  for (let i = b.min; i <= b.max; i++) values.add(i);
  return { values, star: true };
}
const one = (v: number): Field => ({ values: new Set([v]), star: false });

/** Go's strconv.Atoi, with its error text. */
function atoi(expr: string): number {
  if (!/^[+-]?[0-9]+$/.test(expr))
    throw new CronError(`failed to parse int from ${expr}: strconv.Atoi: parsing ${goQuote(expr)}: invalid syntax`);
  const n = Number(expr);
  if (!Number.isSafeInteger(n) || Math.abs(n) > 2 ** 63 - 1)
    throw new CronError(`failed to parse int from ${expr}: strconv.Atoi: parsing ${goQuote(expr)}: value out of range`);
  if (n < 0) throw new CronError(`negative number (${n}) not allowed: ${expr}`);
  return n;
}

const goQuote = (s: string): string => JSON.stringify(s);

function intOrName(expr: string, b: Bounds): number {
  const named = b.names?.[expr.toLowerCase()];
  return named ?? atoi(expr);
}

/** robfig getRange: `*`, `?`, `a`, `a-b`, each optionally `/step`. */
function range(expr: string, b: Bounds, into: Set<number>): boolean {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = (rangeAndStep[0] as string).split('-');
  const single = lowAndHigh.length === 1;
  let start: number;
  let end: number;
  let star = false;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = b.min;
    end = b.max;
    star = true;
  } else {
    start = intOrName(lowAndHigh[0] as string, b);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = intOrName(lowAndHigh[1] as string, b);
    else throw new CronError(`too many hyphens: ${expr}`);
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    step = atoi(rangeAndStep[1] as string);
    if (single) end = b.max;
    if (step > 1) star = false;
  } else if (rangeAndStep.length > 2) throw new CronError(`too many slashes: ${expr}`);
  if (start < b.min) throw new CronError(`beginning of range (${start}) below minimum (${b.min}): ${expr}`);
  if (end > b.max) throw new CronError(`end of range (${end}) above maximum (${b.max}): ${expr}`);
  if (start > end) throw new CronError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new CronError(`step of range should be a positive number: ${expr}`);
  for (let i = start; i <= end; i += step) into.add(i);
  return star;
}

function field(text: string, b: Bounds): Field {
  const values = new Set<number>();
  let star = false;
  for (const expr of text.split(',').filter((e) => e !== '')) if (range(expr, b, values)) star = true;
  return { values, star };
}

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration, in milliseconds, with its error texts. */
export function parseGoDuration(s: string): number {
  const bad = () => new CronError(`time: invalid duration ${goQuote(s)}`);
  let rest = s;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest[0] === '-' ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw bad();
  let total = 0;
  while (rest !== '') {
    const num = /^([0-9]*)(\.([0-9]*))?/.exec(rest) as RegExpExecArray;
    const [text, whole = '', , frac = ''] = num;
    if (whole === '' && frac === '') throw bad();
    rest = rest.slice(text.length);
    const unit = /^[^0-9.]*/.exec(rest)?.[0] ?? '';
    if (unit === '') throw new CronError(`time: missing unit in duration ${goQuote(s)}`);
    const factor = UNITS[unit];
    if (factor === undefined) throw new CronError(`time: unknown unit ${goQuote(unit)} in duration ${goQuote(s)}`);
    rest = rest.slice(unit.length);
    total += Number(`${whole || '0'}.${frac || '0'}`) * factor;
  }
  return sign * total;
}

function descriptor(spec: string): Schedule {
  const min0 = one(0);
  switch (spec) {
    case '@yearly':
    case '@annually':
      return { kind: 'spec', minute: min0, hour: one(0), dom: one(1), month: one(1), dow: all(DOW) };
    case '@monthly':
      return { kind: 'spec', minute: min0, hour: one(0), dom: one(1), month: all(MONTHS), dow: all(DOW) };
    case '@weekly':
      return { kind: 'spec', minute: min0, hour: one(0), dom: all(DOM), month: all(MONTHS), dow: one(0) };
    case '@daily':
    case '@midnight':
      return { kind: 'spec', minute: min0, hour: one(0), dom: all(DOM), month: all(MONTHS), dow: all(DOW) };
    case '@hourly':
      return { kind: 'spec', minute: min0, hour: all(HOURS), dom: all(DOM), month: all(MONTHS), dow: all(DOW) };
  }
  const every = '@every ';
  if (spec.startsWith(every)) {
    let ms: number;
    try {
      ms = parseGoDuration(spec.slice(every.length));
    } catch (e) {
      throw new CronError(`failed to parse duration ${spec}: ${(e as Error).message}`);
    }
    // Every(): at least one second, whole seconds.
    return { kind: 'every', delayMs: ms < 1000 ? 1000 : ms - (ms % 1000) };
  }
  throw new CronError(`unrecognized descriptor: ${spec}`);
}

/** Go's %s of a []string: `[a b c]`. */
const goList = (v: string[]): string => `[${v.join(' ')}]`;

/**
 * ParseStandard. A leading `TZ=zone`/`CRON_TZ=zone` is read as robfig reads it (CronJob
 * validation forbids it separately); returns the schedule or the parser's error.
 */
export function parseSchedule(input: string): Schedule | CronError {
  try {
    let spec = input;
    if (spec.length === 0) throw new CronError('empty spec string');
    if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
      const sp = spec.indexOf(' ');
      const eq = spec.indexOf('=');
      const zone = sp < 0 ? spec.slice(eq + 1) : spec.slice(eq + 1, sp);
      if (!isTimeZone(zone)) throw new CronError(`provided bad location ${zone}: unknown time zone ${zone}`);
      spec = sp < 0 ? '' : spec.slice(sp).trim();
    }
    if (spec.startsWith('@')) return descriptor(spec);
    const fields = spec.split(/\s+/).filter((f) => f !== '');
    if (fields.length !== 5) throw new CronError(`expected exactly 5 fields, found ${fields.length}: ${goList(fields)}`);
    const [mi, h, dom, mo, dow] = fields as [string, string, string, string, string];
    return {
      kind: 'spec',
      minute: field(mi, MINUTES),
      hour: field(h, HOURS),
      dom: field(dom, DOM),
      month: field(mo, MONTHS),
      dow: field(dow, DOW),
    };
  } catch (e) {
    if (e instanceof CronError) return e;
    throw e;
  }
}

/** Whether `name` is a time zone the runtime's IANA database knows (UTC included). */
export function isTimeZone(name: string): boolean {
  if (name === '') return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

// ---- next activation ---------------------------------------------------------------------

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(tz, f);
  }
  return f;
}

/** The wall clock of instant `ms` in `tz`, as a UTC timestamp carrying those fields. */
function wallOf(ms: number, tz: string): number {
  const p: Record<string, number> = {};
  for (const part of formatter(tz).formatToParts(new Date(ms))) if (part.type !== 'literal') p[part.type] = Number(part.value);
  return Date.UTC(p.year ?? 1970, (p.month ?? 1) - 1, p.day ?? 1, p.hour ?? 0, p.minute ?? 0, p.second ?? 0);
}

/** The instant whose wall clock in `tz` is `wall`, or undefined inside a DST gap. */
function instantOf(wall: number, tz: string): number | undefined {
  let guess = wall - (wallOf(wall, tz) - wall);
  for (let i = 0; i < 3; i++) {
    const off = wallOf(guess, tz) - guess;
    const next = wall - off;
    if (next === guess) break;
    guess = next;
  }
  return wallOf(guess, tz) === wall ? guess : undefined;
}

function dayMatches(s: Extract<Schedule, { kind: 'spec' }>, d: Date): boolean {
  const domMatch = s.dom.values.has(d.getUTCDate());
  const dowMatch = s.dow.values.has(d.getUTCDay());
  return s.dom.star || s.dow.star ? domMatch && dowMatch : domMatch || dowMatch;
}

/**
 * The first activation strictly after `after` (robfig Schedule.Next), on the wall clock of `tz`
 * (default UTC); undefined when there is none within five years (e.g. February 30th).
 */
export function next(schedule: Schedule, after: Date, tz = 'UTC'): Date | undefined {
  const t0 = after.getTime();
  if (schedule.kind === 'every') return new Date(Math.floor(t0 / 1000) * 1000 + schedule.delayMs);
  // Start at the next whole minute of the wall clock.
  const wall0 = wallOf(t0, tz);
  let d = new Date(Math.floor(wall0 / 60_000) * 60_000 + 60_000);
  const limit = d.getUTCFullYear() + 5;
  const s = schedule;
  while (d.getUTCFullYear() <= limit) {
    if (!s.month.values.has(d.getUTCMonth() + 1)) {
      d = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
      continue;
    }
    if (!dayMatches(s, d)) {
      d = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1));
      continue;
    }
    if (!s.hour.values.has(d.getUTCHours())) {
      d = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours() + 1));
      continue;
    }
    if (!s.minute.values.has(d.getUTCMinutes())) {
      d = new Date(d.getTime() + 60_000);
      continue;
    }
    const at = instantOf(d.getTime(), tz);
    if (at !== undefined && at > t0) return new Date(at);
    d = new Date(d.getTime() + 60_000);
  }
  return undefined;
}
