/**
 * Bad input never gets a 5xx and never takes the server down. Two parts, one server:
 *   - hand-picked malformed requests (escapes, selectors, resourceVersions, limits, every patch
 *     type, YAML, bodies of the wrong shape);
 *   - seeded random mutations of the reference fixtures (a field deleted, nulled, wrapped in a
 *     list, duplicated, or replaced by an odd value: huge or negative numbers, long or odd
 *     strings, deep nesting, 2,000-item lists), sent as create, update, merge / strategic merge /
 *     apply patch and JSON patch operations at the mutated path.
 * The only 500s allowed are the ones the reference itself answers for those patch inputs
 * (strategic merge errors it passes through, apply's "failed to create typed patch object"),
 * with its texts; src/registry/patch/errors.ts documents them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FIXTURE_KINDS, FIXTURES, isNamespacedCollection, sanitizeFixture } from './helpers/fixtures';
import { needs } from './helpers/needs';
import { rng } from './helpers/rng';
import { type Server, STATIC_WORKLOADS, startServer } from './helpers/server';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const REF = FIXTURES;

const CM = '/api/v1/namespaces/default/configmaps';
/** Fixture → [collection, namespaced]. */
const KINDS: Record<string, [string, boolean]> = Object.fromEntries(
  Object.entries(FIXTURE_KINDS).map(([k, coll]) => [k, [coll, isNamespacedCollection(coll)]]),
);

/** The reference's own 500s for patch inputs (mirrored on purpose). */
const REFERENCE_500 = {
  smp: /does not contain declared merge key|list element types are not identical|unknown patch type|^expected a /,
  apply: /^failed to create typed patch object \(/,
};

let srv: Server;
const failures: string[] = [];
const codes: Record<number, number> = {};

async function send(what: string, kind: 'smp' | 'apply' | 'other', method: string, p: string, body: string | undefined, type?: string) {
  const r = await srv.fetch(p, { method, headers: type ? { 'content-type': type } : {}, body, signal: AbortSignal.timeout(20_000) });
  const text = await r.text();
  codes[r.status] = (codes[r.status] ?? 0) + 1;
  if (r.status < 500) return;
  let msg = '';
  try {
    msg = String(JSON.parse(text).message ?? '');
  } catch {
    // not a Status: reported below
  }
  if (r.status === 500 && kind !== 'other' && REFERENCE_500[kind].test(msg)) return;
  failures.push(`${what}: ${r.status} ${text.slice(0, 300)}\n  body: ${(body ?? '').slice(0, 300)}`);
}

beforeAll(async () => {
  srv = await startServer({ args: [STATIC_WORKLOADS] });
  expect((await srv.json('POST', CM, { metadata: { name: 'x' }, data: { a: 'b' } })).status).toBe(201);
}, 30_000);
afterAll(async () => {
  await srv.stop();
});

describe('bad input is answered with a 4xx Status', () => {
  test('hand-picked malformed requests', async () => {
    const gets = [
      '/api/v1/namespaces/%ZZ/configmaps',
      `${CM}/%`,
      `${CM}?limit=-1`,
      `${CM}?limit=abc`,
      `${CM}?limit=1e400`,
      `${CM}?continue=garbage`,
      `${CM}?limit=500&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJ4In0`,
      `${CM}?labelSelector=(((`,
      `${CM}?labelSelector=a%20in%20(`,
      `${CM}?fieldSelector=spec.foo=bar`,
      `${CM}?fieldSelector===`,
      `${CM}?watch=1&timeoutSeconds=abc`,
      `${CM}?watch=1&timeoutSeconds=-5`,
      `${CM}?resourceVersion=abc`,
      `${CM}?resourceVersion=-1`,
      `${CM}?watch=1&resourceVersion=99999999999999999999`,
      `${CM}?resourceVersionMatch=Bogus&resourceVersion=1`,
      `${CM}?watch=1&sendInitialEvents=true`,
      `${CM}/x?resourceVersion=abc`,
      `/api/v1/${'a'.repeat(20_000)}`,
      `${CM}/${'n'.repeat(300)}`,
      `${CM}/x/status`,
      `${CM}/x/bogus`,
      '/apis/apps/v1/namespaces/default/deployments/none/scale',
      '/apis/nope.svc.io/v1/things',
      '/api/v1/namespaces/default/nodes',
      '/openapi/v3/apis/nope/v1',
    ];
    for (const p of gets) await send(`GET ${p.slice(0, 80)}`, 'other', 'GET', p, undefined);
    const J = 'application/json';
    const bodies: [string, string, string, string][] = [
      ['POST', CM, J, 'null'],
      ['POST', CM, J, '[]'],
      ['POST', CM, J, '1e999'],
      ['POST', CM, J, '{"metadata":{"name":"a"},"data":{"x":1}}'],
      ['POST', CM, J, '{"metadata":{"name":"a","labels":{"x":{"y":1}}}}'],
      ['POST', CM, J, '{"metadata":{"name":"a","labels":null,"annotations":[]}}'],
      ['POST', CM, J, '\u00ff\u00fe{}'],
      ['POST', CM, 'application/json; charset=utf-16', '{}'],
      ['POST', CM, 'application/yaml', 'a: [b'],
      ['POST', CM, 'application/yaml', '*x'],
      ['POST', CM, 'application/yaml', 'metadata: {name: a}\n---\nmetadata: {name: b}'],
      ['POST', CM, 'application/yaml', `a: &a [${'x,'.repeat(50)}x]\nb: &b [${'*a,'.repeat(50)}*a]\nc: [${'*b,'.repeat(50)}*b]`],
      ['POST', CM, J, `{"metadata":{"name":"deep"},"data":${'['.repeat(20_000)}${']'.repeat(20_000)}}`],
      ['POST', CM, 'text/plain', 'x'],
      ['POST', CM, '', '{}'],
      ['POST', `${CM}/x`, J, '{}'],
      ['PUT', CM, J, '{}'],
      ['PUT', `${CM}/x`, J, '{"metadata":{"name":"x","resourceVersion":"abc"}}'],
      ['PUT', `${CM}/x`, J, '{"metadata":{"name":"y"}}'],
      ['PATCH', `${CM}/x`, 'application/json-patch+json', '[{"op":"move","from":"/data","path":"/data/a"}]'],
      ['PATCH', `${CM}/x`, 'application/json-patch+json', '{}'],
      ['PATCH', `${CM}/x`, 'application/merge-patch+json', 'null'],
      ['PATCH', `${CM}/x`, 'application/merge-patch+json', '{"metadata":null}'],
      ['PATCH', `${CM}/x`, 'application/merge-patch+json', '{"metadata":{"name":null}}'],
      ['PATCH', `${CM}/x`, 'application/strategic-merge-patch+json', '{"$patch":"delete"}'],
      ['PATCH', `${CM}/x`, 'application/strategic-merge-patch+json', '{"data":{"$retainKeys":["a"]}}'],
      [
        'PATCH',
        `${CM}/x?fieldManager=m`,
        'application/apply-patch+yaml',
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: [1]}',
      ],
      ['PATCH', `${CM}/x?fieldManager=m`, 'application/apply-patch+yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y}'],
      [
        'PATCH',
        `${CM}/x?fieldManager=${'m'.repeat(200)}`,
        'application/apply-patch+yaml',
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}',
      ],
      ['PATCH', `${CM}/x`, 'application/bogus-patch', '{}'],
      ['DELETE', `${CM}/none`, J, '{"preconditions":{"uid":1}}'],
      ['DELETE', `${CM}/none`, J, '{"gracePeriodSeconds":"a"}'],
      ['DELETE', `${CM}/none?gracePeriodSeconds=abc`, J, ''],
      ['DELETE', `${CM}?labelSelector=(((`, J, ''],
      ['DELETE', CM, J, '{"propagationPolicy":"Bogus"}'],
      ['POST', '/api/v1/namespaces', J, '{"metadata":{"name":"Bad_Name"}}'],
      ['POST', '/api/v1/namespaces', J, '{"kind":"Namespace","apiVersion":"v1"}'],
      [
        'POST',
        '/api/v1/namespaces/default/pods',
        J,
        '{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":99999999999}]}]}}',
      ],
      ['POST', '/apis/apps/v1/namespaces/default/deployments', J, '{"metadata":{"name":"d"},"spec":{"replicas":"x"}}'],
    ];
    for (const [m, p, t, b] of bodies)
      await send(`${m} ${p.slice(0, 60)} ${b.slice(0, 60)}`, 'other', m, p, b || undefined, t || undefined);
    expect(failures).toEqual([]);
    expect(srv.proc.exitCode).toBeNull();
  }, 120_000);

  needs('reference').test(
    'seeded mutations of every served kind through create, update and all patch types',
    async () => {
      const rand = rng(20261122);
      const pick = <T>(a: readonly T[]): T => a[Math.floor(rand() * a.length)] as T;
      const clone = (x: unknown): Json => JSON.parse(JSON.stringify(x));
      const odd = (): unknown =>
        pick([
          () => null,
          () => '',
          () => 'x'.repeat(100_000),
          () => -1,
          () => 1.5,
          () => 1e308,
          () => 2 ** 63,
          () => true,
          () => [],
          () => ({}),
          () => ({ a: 1 }),
          () => [1, 'a', null],
          () => '\u0000\uffff\ud800',
          () => '10000000000000000000000Gi',
          () => '1e9999',
          () => 'Ｘ',
          () => '../..',
          () => [[[[[[[]]]]]]],
          () => {
            let v: Json = 1;
            for (let i = 0; i < 200; i++) v = { a: v };
            return v;
          },
          () => Array.from({ length: 2000 }, (_, i) => ({ name: `n${i}` })),
        ])();
      const paths = (o: Json, p: (string | number)[] = [], out: (string | number)[][] = []) => {
        out.push(p);
        if (Array.isArray(o)) for (let i = 0; i < o.length; i++) paths(o[i], [...p, i], out);
        else if (o && typeof o === 'object') for (const k of Object.keys(o)) paths(o[k], [...p, k], out);
        return out;
      };
      const fixtures = Object.keys(KINDS).map((k) => [k, JSON.parse(fs.readFileSync(path.join(REF, `${k}.json`), 'utf8'))] as const);
      const sanitize = sanitizeFixture;
      // One live object per kind to update and patch (the fixture if it is valid, else a bare one).
      const live: Record<string, string> = {};
      for (const [k, f] of fixtures) {
        const [coll, ns] = KINDS[k] as [string, boolean];
        const name = `live-${k.split('.').pop()?.toLowerCase()}`;
        let r = await srv.json('POST', coll, sanitize(clone(f), name, ns));
        if (r.status !== 201) r = await srv.json('POST', coll, { apiVersion: f.apiVersion, kind: f.kind, metadata: { name } });
        if (r.status === 201) live[k] = name;
      }
      const J = 'application/json';
      for (let i = 0; i < 600; i++) {
        const [k, f] = pick(fixtures);
        const [coll, ns] = KINDS[k] as [string, boolean];
        const obj = sanitize(clone(f), `fz-${i}`, ns);
        const at = pick(
          paths(obj).filter((p) => p.length > 0 && p[0] !== 'apiVersion' && p[0] !== 'kind' && !(p[0] === 'metadata' && p[1] === 'name')),
        );
        const parent = at.slice(0, -1).reduce((x: Json, s) => x[s], obj);
        const key = at[at.length - 1] as string | number;
        const r = rand();
        if (r < 0.2) {
          if (Array.isArray(parent)) parent.splice(key as number, 1);
          else delete parent[key];
        } else if (r < 0.3 && Array.isArray(parent)) parent.push(clone(parent[key as number]));
        else if (r < 0.4) parent[key] = [parent[key]];
        else parent[key] = odd();
        const name = live[k];
        const meta = obj.metadata;
        const mode = name && meta && typeof meta === 'object' && !Array.isArray(meta) ? Math.floor(rand() * 6) : 0;
        if (mode > 0) meta.name = name;
        const what = `${k} ${at.join('.')} mode ${mode}`;
        const body = JSON.stringify(obj);
        if (mode === 0) await send(what, 'other', 'POST', `${coll}?fieldValidation=${pick(['Strict', 'Warn', 'Ignore'])}`, body, J);
        else if (mode === 1) await send(what, 'other', 'PUT', `${coll}/${name}`, body, J);
        else if (mode === 2) await send(what, 'other', 'PATCH', `${coll}/${name}`, body, 'application/merge-patch+json');
        else if (mode === 3) await send(what, 'smp', 'PATCH', `${coll}/${name}`, body, 'application/strategic-merge-patch+json');
        else if (mode === 4)
          await send(
            what,
            'apply',
            'PATCH',
            `${coll}/${name}?fieldManager=fz${i % 3}&force=${rand() < 0.5}`,
            body,
            'application/apply-patch+yaml',
          );
        else {
          const ptr = `/${at.map((s) => String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
          const op = { op: pick(['add', 'replace', 'remove', 'test', 'copy', 'move']), path: ptr, from: '/metadata/labels', value: odd() };
          await send(`${what} ${op.op}`, 'other', 'PATCH', `${coll}/${name}`, JSON.stringify([op]), 'application/json-patch+json');
        }
      }
      // Everything still reads, as JSON and as a Table.
      for (const [coll] of Object.values(KINDS)) {
        await send(`LIST ${coll}`, 'other', 'GET', coll, undefined);
        const t = await srv.fetch(coll, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
        if (t.status !== 200) failures.push(`TABLE ${coll}: ${t.status} ${(await t.text()).slice(0, 200)}`);
      }
      console.log(`fuzzed requests by status: ${JSON.stringify(codes)}`);
      expect(failures).toEqual([]);
      expect(srv.proc.exitCode).toBeNull();
      expect(srv.logs()).not.toMatch(/internal error|uncaught exception|unhandled rejection/);
    },
    300_000,
  );
});
