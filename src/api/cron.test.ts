import { describe, expect, test } from 'bun:test';
import { CronError, isTimeZone, next, parseGoDuration, parseSchedule, type Schedule } from './cron';

const ok = (s: string): Schedule => {
  const r = parseSchedule(s);
  if (r instanceof CronError) throw r;
  return r;
};

describe('parseSchedule: errors as robfig/cron ParseStandard words them', () => {
  const cases: [string, string][] = [
    ['', 'empty spec string'],
    ['foo', 'expected exactly 5 fields, found 1: [foo]'],
    ['* * * *', 'expected exactly 5 fields, found 4: [* * * *]'],
    ['0 0 0 0 0 0', 'expected exactly 5 fields, found 6: [0 0 0 0 0 0]'],
    ['60 * * * *', 'end of range (60) above maximum (59): 60'],
    ['* 24 * * *', 'end of range (24) above maximum (23): 24'],
    ['* * 0 * *', 'beginning of range (0) below minimum (1): 0'],
    ['* * * 13 *', 'end of range (13) above maximum (12): 13'],
    ['* * * * 7', 'end of range (7) above maximum (6): 7'],
    ['5-1 * * * *', 'beginning of range (5) beyond end of range (1): 5-1'],
    ['*/0 * * * *', 'step of range should be a positive number: */0'],
    ['1-2-3 * * * *', 'too many hyphens: 1-2-3'],
    ['*/2/3 * * * *', 'too many slashes: */2/3'],
    ['x * * * *', 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'],
    ['* * * foo *', 'failed to parse int from foo: strconv.Atoi: parsing "foo": invalid syntax'],
    ['@fortnightly', 'unrecognized descriptor: @fortnightly'],
    ['@every 5', 'failed to parse duration @every 5: time: missing unit in duration "5"'],
    ['@every 5x', 'failed to parse duration @every 5x: time: unknown unit "x" in duration "5x"'],
    ['@every ', 'failed to parse duration @every : time: invalid duration ""'],
  ];
  for (const [spec, msg] of cases) {
    test(JSON.stringify(spec), () => {
      const r = parseSchedule(spec);
      expect(r).toBeInstanceOf(CronError);
      expect((r as CronError).message).toBe(msg);
    });
  }
});

describe('parseSchedule: accepted', () => {
  for (const spec of [
    '* * * * *',
    '*/15 * * * *',
    '0 0 * * 0',
    '0 9-17 * * mon-fri',
    '0 0 1 jan,JUL *',
    '5/10 * ? * *',
    '0 0 1,15 * *',
    '@hourly',
    '@daily',
    '@midnight',
    '@weekly',
    '@monthly',
    '@yearly',
    '@annually',
    '@every 1h30m',
    'TZ=UTC * * * * *',
    'CRON_TZ=Europe/Paris 0 0 * * *',
  ]) {
    test(spec, () => {
      expect(parseSchedule(spec)).not.toBeInstanceOf(CronError);
    });
  }
  test('an unknown zone in TZ= is the parser error', () => {
    expect((parseSchedule('TZ=Nowhere/Land * * * * *') as CronError).message).toBe(
      'provided bad location Nowhere/Land: unknown time zone Nowhere/Land',
    );
  });
});

describe('next', () => {
  const at = (iso: string) => new Date(iso);
  const cases: [string, string, string | undefined, string][] = [
    ['* * * * *', '2026-01-01T00:00:00Z', undefined, '2026-01-01T00:01:00.000Z'],
    ['* * * * *', '2026-01-01T00:00:30Z', undefined, '2026-01-01T00:01:00.000Z'],
    ['*/15 * * * *', '2026-01-01T00:16:00Z', undefined, '2026-01-01T00:30:00.000Z'],
    ['0 0 * * *', '2026-01-01T10:00:00Z', undefined, '2026-01-02T00:00:00.000Z'],
    ['@hourly', '2026-01-01T10:00:00Z', undefined, '2026-01-01T11:00:00.000Z'],
    ['@weekly', '2026-01-01T10:00:00Z', undefined, '2026-01-04T00:00:00.000Z'], // a Sunday
    ['@monthly', '2026-01-31T10:00:00Z', undefined, '2026-02-01T00:00:00.000Z'],
    ['@yearly', '2026-06-01T00:00:00Z', undefined, '2027-01-01T00:00:00.000Z'],
    ['0 0 29 2 *', '2026-03-01T00:00:00Z', undefined, '2028-02-29T00:00:00.000Z'],
    // Day of month and day of week both restricted: either matches (the 13th or a Friday).
    ['0 0 13 * 5', '2026-02-01T00:00:00Z', undefined, '2026-02-06T00:00:00.000Z'],
    ['0 9 * * mon-fri', '2026-01-03T12:00:00Z', undefined, '2026-01-05T09:00:00.000Z'],
    // In a zone: 09:00 in Paris is 08:00 UTC in winter, 07:00 UTC in summer.
    ['0 9 * * *', '2026-01-10T12:00:00Z', 'Europe/Paris', '2026-01-11T08:00:00.000Z'],
    ['0 9 * * *', '2026-07-10T12:00:00Z', 'Europe/Paris', '2026-07-11T07:00:00.000Z'],
    // 02:30 does not exist in New York on 2026-03-08 (spring forward): the next day's.
    ['30 2 * * *', '2026-03-07T12:00:00Z', 'America/New_York', '2026-03-09T06:30:00.000Z'],
    ['@every 90s', '2026-01-01T00:00:00.500Z', undefined, '2026-01-01T00:01:30.000Z'],
  ];
  for (const [spec, after, tz, want] of cases) {
    test(`${spec} after ${after}${tz ? ` in ${tz}` : ''}`, () => {
      expect(next(ok(spec), at(after), tz)?.toISOString()).toBe(want);
    });
  }
  test('no activation: February 30th', () => {
    expect(next(ok('0 0 30 2 *'), at('2026-01-01T00:00:00Z'))).toBeUndefined();
  });
});

test('parseGoDuration', () => {
  expect(parseGoDuration('1h30m')).toBe(5_400_000);
  expect(parseGoDuration('1.5s')).toBe(1500);
  expect(parseGoDuration('0')).toBe(0);
  expect(parseGoDuration('-2m')).toBe(-120_000);
});

test('isTimeZone', () => {
  expect(isTimeZone('Europe/Paris')).toBe(true);
  expect(isTimeZone('UTC')).toBe(true);
  expect(isTimeZone('Europe/Pariss')).toBe(false);
  expect(isTimeZone('')).toBe(false);
});
