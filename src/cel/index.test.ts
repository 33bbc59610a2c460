import { describe, expect, test } from 'bun:test';
import { cacheSizes, celEnv, compile, evaluate } from './index.ts';

const env = celEnv({ object: 'dyn', request: 'map<string, dyn>', n: 'int' });

describe('cel engine boundary', () => {
  const cases: [string, Record<string, unknown>, unknown][] = [
    ['object.spec.replicas <= 5', { object: { spec: { replicas: 3 } } }, true],
    ['object.spec.replicas <= 5', { object: { spec: { replicas: 7 } } }, false],
    ['n + 1', { n: 41 }, 42],
    [
      "object.spec.containers.all(c, c.image.startsWith('reg/'))",
      { object: { spec: { containers: [{ image: 'reg/a' }, { image: 'reg/b' }] } } },
      true,
    ],
    ['object.spec.containers.map(c, c.name)', { object: { spec: { containers: [{ name: 'a' }, { name: 'b' }] } } }, ['a', 'b']],
    ["has(object.metadata.labels) && 'app' in object.metadata.labels", { object: { metadata: { labels: { app: 'x' } } } }, true],
    ["'abc'.matches('^a.c$')", {}, true],
    ['size(request.name) > 2', { request: { name: 'abcd' } }, true],
    ['9223372036854775807 + n', { n: 0 }, '9223372036854775807'],
  ];
  for (const [expr, act, want] of cases) {
    test(`${expr} on ${JSON.stringify(act)}`, () => {
      const c = compile(expr, env);
      if (!c.ok) throw new Error(c.errors.join('; '));
      const r = evaluate(c.program, act);
      expect(r.ok ? r.value : r.error).toEqual(want);
    });
  }

  const failing: [string, string][] = [
    ["n + 'a'", 'compile'],
    ['n +', 'compile'],
    ['undeclared == 1', 'compile'],
  ];
  for (const [expr, phase] of failing) {
    test(`${expr} fails at ${phase}`, () => {
      const c = compile(expr, env);
      expect(c.ok).toBe(false);
    });
  }

  test('int64 overflow is an evaluation error', () => {
    const c = compile('9223372036854775807 + n', env);
    if (!c.ok) throw new Error(c.errors.join('; '));
    const r = evaluate(c.program, { n: 1 });
    expect(r.ok).toBe(false);
  });

  test('program is plain data and re-compiles from a fresh copy', () => {
    const c = compile('n * 2', env);
    if (!c.ok) throw new Error(c.errors.join('; '));
    const copy = JSON.parse(JSON.stringify(c.program));
    const r = evaluate(copy, { n: 21 });
    expect(r.ok && r.value).toBe(42);
  });
});

describe('cel caches', () => {
  test('programs and environments stay bounded under ever new expressions; an evicted program compiles again on use', () => {
    const first = compile('n + first', celEnv({ n: 'int', first: 'int' }));
    if (!first.ok) throw new Error(first.errors.join('; '));
    for (let i = 0; i < 4200; i++) compile(`n + ${i}`, env);
    for (let i = 0; i < 600; i++) compile('x + 1', celEnv({ [`v${i}`]: 'int', x: 'int' }));
    const sizes = cacheSizes();
    expect(sizes.programs).toBe(4096);
    expect(sizes.environments).toBe(512);
    // `first` and its environment were evicted long ago: evaluating it compiles both again.
    const r = evaluate(first.program, { n: 41, first: 1 });
    expect(r.ok ? r.value : r.error).toEqual(42);
  });
});
