import { describe, expect, test } from 'bun:test';
import { escapeName, unescapeName } from './escaping.ts';

describe('escaping of property names', () => {
  const cases: [name: string, ident: string | undefined][] = [
    ['foo', 'foo'],
    ['foo_bar', 'foo_bar'],
    ['foo__bar', 'foo__underscores__bar'],
    ['a.b', 'a__dot__b'],
    ['a-b', 'a__dash__b'],
    ['a/b', 'a__slash__b'],
    ['foo___bar', 'foo__underscores___bar'],
    ['true', '__true__'],
    ['namespace', '__namespace__'],
    ['return', '__return__'],
    ['trueful', 'trueful'],
    ['int', 'int'],
    ['.dotfirst', '__dot__dotfirst'],
    ['x-kubernetes-a', 'x__dash__kubernetes__dash__a'],
    ['1digitfirst', undefined],
    ['', undefined],
    ['has space', undefined],
    ['a:b', undefined],
  ];
  for (const [name, ident] of cases) {
    test(`${JSON.stringify(name)} -> ${ident}`, () => {
      expect(escapeName(name)).toBe(ident);
      if (ident !== undefined) expect(unescapeName(ident)).toBe(name);
    });
  }
});
