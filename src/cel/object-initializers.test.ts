import { describe, expect, test } from 'bun:test';
import { celEnv, compile, costedExecutable, fromCel, toCel } from './index';
import { desugarObjectInitializers, typeNameMismatch, typeNameOf } from './object-initializers';

/** Desugars, compiles and runs `expr` on `object`; answers the raw CEL value. */
function run(expr: string, object: unknown = {}): unknown {
  const d = desugarObjectInitializers(expr);
  if (!d.ok) throw new Error(d.error);
  const c = compile(d.expr, celEnv({ object: 'dyn' }));
  if (!c.ok) throw new Error(c.errors.join('; '));
  return costedExecutable(c.program).run({ object: toCel(object) });
}

describe('object initializers', () => {
  test.each([
    ['Object{}', {}],
    ['Object{spec: Object.spec{replicas: 2}}', { spec: { replicas: 2 } }],
    ['Object{ spec : Object . spec { replicas : 1 + 1 , } }', { spec: { replicas: 2 } }],
    ['Object{metadata: Object.metadata{labels: {"a{": "}b", "c": r"d}"}}}', { metadata: { labels: { 'a{': '}b', c: 'd}' } } }],
    ['Object{spec: Object.spec{xs: [Object.spec.xs{n: "a"}, Object.spec.xs{n: "b"}]}}', { spec: { xs: [{ n: 'a' }, { n: 'b' }] } }],
    ['Object{spec: Object.spec{n: object.n}} // a comment with Foo{', { spec: { n: 5 } }],
    ["Object{data: Object.data{s: '''x{y}'''}}", { data: { s: 'x{y}' } }],
    ['true ? Object{a: 1} : Object{a: 2}', { a: 1 }],
  ])('%s', (expr, want) => {
    const v = run(expr, { n: 5 });
    expect(fromCel(v)).toEqual(want);
    expect(typeNameOf(v)).toBe('Object');
    expect(typeNameMismatch(v)).toBeUndefined();
  });

  test('JSONPatch values and jsonpatch.escapeKey', () => {
    const v = run(
      '[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("a/b~c"), value: Object.metadata{x: 1}}]',
    ) as unknown[];
    expect(fromCel(v)).toEqual([{ op: 'add', path: '/metadata/labels/a~1b~0c', value: { x: 1 } }]);
    expect(typeNameOf(v[0])).toBe('JSONPatch');
  });

  test('a type name that is not the field path is a mismatch', () => {
    expect(typeNameMismatch(run('Object{spec: Object.wrong{a: 1}}'))).toBe(
      'unexpected type name "Object.wrong", expected "Object.spec", which matches field name path from root Object type',
    );
    expect(typeNameMismatch(run('Object{spec: Object.spec{xs: [Object.spec.ys{}]}}'))).toContain('"Object.spec.ys"');
  });

  test.each([
    ['Foo{a: 1}', "undeclared reference to 'Foo' (in container '')"],
    ['JSONPatch{op: "add", pth: "/x"}', "undefined field 'pth' in JSONPatch (fields: op, path, from, value)"],
    ['Object{?a: optional.none()}', 'optional field initializers are not supported (in Object initializer)'],
    ['Object{"a": 1}', "Syntax error: expected a field name in Object initializer, got '\"'"],
    ['Object{a 1}', "Syntax error: expected ':' after field 'a' in Object initializer"],
  ])('%s is refused', (expr, error) => {
    expect(desugarObjectInitializers(expr)).toEqual({ ok: false, error });
  });

  test('expressions without initializers or literals are unchanged', () => {
    for (const e of [
      'object.spec.replicas > 1',
      'object.x.exists(y, y == "Object{")',
      'object.items[0].name + m["k"]',
      'f(a)[1][2]',
      '[]',
      '{}',
    ])
      expect(desugarObjectInitializers(e)).toEqual({ ok: true, expr: e });
  });

  test.each([
    ['{"a": 1}.a == 1', '{"a": dyn(1)}.a == 1'],
    ['[1, 2].map(x, {x: x})', '[dyn(1), dyn(2)].map(x, {x: dyn(x)})'],
    ['{"a": c ? "x" : "y", "b": [m[0], 2]}', '{"a": dyn(c ? "x" : "y"), "b": dyn([dyn(m[0]), dyn(2)])}'],
    ['[?optional.of(1), 2]', '[?optional.of(1), dyn(2)]'],
    ['{?"a": optional.none(), "b": 1}', '{?"a": optional.none(), "b": dyn(1)}'],
  ])('literal elements as dyn: %s', (expr, want) => {
    expect(desugarObjectInitializers(expr)).toEqual({ ok: true, expr: want });
  });

  test('a literal mixing dyn and typed values compiles, as cel-go accepts it', () => {
    const v = run('Object{metadata: Object.metadata{labels: {"n": object.n, "env": "prod"}}}', { n: 'five' });
    expect(fromCel(v)).toEqual({ metadata: { labels: { n: 'five', env: 'prod' } } });
    expect(fromCel(run('[object.n, "x", 1][1]', { n: 1 }))).toBe('x');
  });
});
