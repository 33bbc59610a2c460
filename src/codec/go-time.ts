/**
 * Go-compatible text forms of times and durations, as the protobuf codec (./protobuf) reads and
 * writes them: RFC 3339 times (metav1.Time to the second, MicroTime to the microsecond) and Go's
 * time.ParseDuration / time.Duration.String. Error messages keep the codec's `protobuf:` prefix.
 */

const TIME_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Days since 1970-01-01 of a proleptic Gregorian date (month 1–12). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Nanoseconds of the last parseTime. */
export let parsedNanos = 0;

function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/** RFC 3339 → seconds since the epoch (the nanoseconds in parsedNanos). */
export function parseTime(s: string, field: string): number {
  let y: number;
  let mo: number;
  let d: number;
  let h: number;
  let mi: number;
  let sec: number;
  let offset = 0;
  parsedNanos = 0;
  if (s.length === 20 && s[4] === '-' && s[7] === '-' && s[10] === 'T' && s[13] === ':' && s[16] === ':' && s[19] === 'Z') {
    // The common form, as Go writes metav1.Time.
    y = digits(s, 0, 4);
    mo = digits(s, 5, 2);
    d = digits(s, 8, 2);
    h = digits(s, 11, 2);
    mi = digits(s, 14, 2);
    sec = digits(s, 17, 2);
  } else {
    const m = TIME_RE.exec(s);
    if (!m) throw new Error(`protobuf: ${field}: ${JSON.stringify(s)} is not an RFC 3339 time`);
    y = Number(m[1]);
    mo = Number(m[2]);
    d = Number(m[3]);
    h = Number(m[4]);
    mi = Number(m[5]);
    sec = Number(m[6]);
    if (m[7]) parsedNanos = Number(m[7].padEnd(9, '0'));
    if (m[9]) offset = (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 3600 + Number(m[11]) * 60);
  }
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59) {
    throw new Error(`protobuf: ${field}: ${JSON.stringify(s)} is not an RFC 3339 time`);
  }
  return daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset;
}

function pad(n: number, w: number): string {
  return String(n).padStart(w, '0');
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** Seconds (and nanoseconds) → RFC 3339 in UTC, to the second or (micro) the microsecond. */
export function formatTime(secs: number, nanos: number, micro: boolean): string {
  const d = new Date(secs * 1000);
  const y = d.getUTCFullYear();
  const year = y >= 1000 && y <= 9999 ? String(y) : y < 0 ? `-${pad(-y, 4)}` : pad(y, 4);
  let s = `${year}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}T${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}`;
  if (micro) s += `.${pad(Math.floor(nanos / 1000), 6)}`;
  return `${s}Z`;
}

const DURATION_UNITS: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, μs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

/** Go's time.ParseDuration → nanoseconds. */
export function parseDuration(s: string, field = 'duration'): number {
  const bad = () => new Error(`protobuf: ${field}: ${JSON.stringify(s)} is not a duration`);
  let rest = s;
  let sign = 1;
  if (rest[0] === '-' || rest[0] === '+') {
    if (rest[0] === '-') sign = -1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw bad();
  let total = 0;
  const re = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/;
  while (rest !== '') {
    const m = re.exec(rest);
    if (!m || (m[1] === '' && (m[2] === undefined || m[2] === ''))) throw bad();
    const unit = DURATION_UNITS[m[3]!]!;
    total += Number(m[1] || '0') * unit;
    if (m[2]) total += Math.round(Number(`0.${m[2]}`) * unit);
    rest = rest.slice(m[0].length);
  }
  return sign * total;
}

/** Go's time.Duration.String. */
export function formatDuration(ns: number): string {
  if (ns === 0) return '0s';
  const neg = ns < 0;
  let u = Math.abs(ns);
  let out: string;
  if (u < 1e9) {
    // Sub-second: one unit with a fraction.
    let unit: string;
    let scale: number;
    if (u < 1e3) {
      unit = 'ns';
      scale = 1;
    } else if (u < 1e6) {
      unit = 'µs';
      scale = 1e3;
    } else {
      unit = 'ms';
      scale = 1e6;
    }
    out = fraction(u, scale) + unit;
  } else {
    const h = Math.floor(u / 3600e9);
    u -= h * 3600e9;
    const m = Math.floor(u / 60e9);
    u -= m * 60e9;
    out = `${fraction(u, 1e9)}s`;
    if (h > 0) out = `${h}h${m}m${out}`;
    else if (m > 0) out = `${m}m${out}`;
  }
  return neg ? `-${out}` : out;
}

function fraction(v: number, scale: number): string {
  const whole = Math.floor(v / scale);
  const frac = v - whole * scale;
  if (frac === 0) return String(whole);
  const digits = Math.round(Math.log10(scale));
  return `${whole}.${pad(frac, digits).replace(/0+$/, '')}`;
}
