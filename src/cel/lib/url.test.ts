/**
 * The URL library against the reference's documented examples (library/urls.go) and Go's
 * url.ParseRequestURI edge cases.
 */
import { describe, expect, test } from 'bun:test';
import { celEnv, compile, executable, fromCel } from '../index';

const env = celEnv({});
const run = (expr: string): unknown => {
  const r = compile(expr, env);
  if (!r.ok) throw new Error(r.errors.join('; '));
  return fromCel(executable(r.program)({}));
};

describe('url library', () => {
  test.each([
    ["isURL('https://user:pass@example.com:80/path?query=val#fragment')", true],
    ["isURL('/absolute-path')", true],
    ["isURL('https://a:b:c/')", false],
    ["isURL('../relative-path')", false],
    ["isURL('')", false],
    ["isURL('relative')", false],
    ["isURL('https://example.com/%zz')", false],
    ["isURL('mailto:someone@example.com')", true],
    ["isURL('https://example.com/a\\tb')", false],
    ["url('/path').getScheme()", ''],
    ["url('https://example.com/').getScheme()", 'https'],
    ["url('HTTPS://example.com/').getScheme()", 'https'],
    ["url('https://example.com:80/').getHost()", 'example.com:80'],
    ["url('https://example.com/').getHost()", 'example.com'],
    ["url('https://[::1]:80/').getHost()", '[::1]:80'],
    ["url('https://[::1]/').getHost()", '[::1]'],
    ["url('/path').getHost()", ''],
    ["url('https://example.com:80/').getHostname()", 'example.com'],
    ["url('https://127.0.0.1:80/').getHostname()", '127.0.0.1'],
    ["url('https://[::1]:80/').getHostname()", '::1'],
    ["url('/path').getHostname()", ''],
    ["url('https://example.com:80/').getPort()", '80'],
    ["url('https://example.com/').getPort()", ''],
    ["url('/path').getPort()", ''],
    ["url('https://example.com/path').getEscapedPath()", '/path'],
    ["url('https://example.com/path with spaces/').getEscapedPath()", '/path%20with%20spaces/'],
    ["url('https://example.com').getEscapedPath()", ''],
    ["url('https://example.com/a%2Fb').getEscapedPath()", '/a%2Fb'],
    ["url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()", { k1: ['a'], k2: ['b', 'c'] }],
    ["url('https://example.com/path?key with spaces=value with spaces').getQuery()", { 'key with spaces': ['value with spaces'] }],
    ["url('https://example.com/path?').getQuery()", {}],
    ["url('https://example.com/path').getQuery()", {}],
    ["url('https://example.com/path?a=1+2&b=%41').getQuery()", { a: ['1 2'], b: ['A'] }],
    ["url('https://example.com/p#frag?x=1').getQuery()", {}],
    ["url('https://user:pass@example.com:80/path?query=val#fragment').getEscapedPath()", '/path'],
  ])('%s', (expr, want) => {
    expect(run(expr as string)).toEqual(want);
  });

  test.each([
    ["url('https://a:b:c/')", 'URL parse error during conversion from string: parse "https://a:b:c/": invalid port ":c" after host'],
    ["url('../relative-path')", 'URL parse error during conversion from string: parse "../relative-path": invalid URI for request'],
    ["url(':no-scheme')", 'missing protocol scheme'],
  ])('%s is an error', (expr, message) => {
    expect(() => run(expr)).toThrow(message);
  });

  test('url values are typed: unknown members do not compile', () => {
    expect(compile("url('/x').getFragment()", env).ok).toBe(false);
    expect(compile("url('/x').getHost() == 1", env).ok).toBe(false);
  });
});
