import { describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { needs, REFERENCE } from '../../test/helpers/needs';
import { svcExtensionKeys, svcGroup } from '../api/brand';
import { SchemaSet } from '../schema/engine';
import generated from '../schema/generated/definitions.json';
import { overlays } from '../schema/overlays';
import type { Definitions, ObjectSchema } from '../schema/types';
import { formatDuration, PROTOBUF_PREFIX, ProtobufCodec, parseDuration } from './protobuf';

/** The reference data sits beside the repository (../shared/reference; test/helpers/needs). */
const FIXTURES = path.join(REFERENCE, 'fixtures');

const defs = generated as unknown as Definitions;
const set = new SchemaSet(defs, overlays);
const codec = new ProtobufCodec(set);

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;

const POD = 'io.svc.api.core.v1.Pod';
const POD_LIST = 'io.svc.api.core.v1.PodList';
const META = 'io.svc.apimachinery.pkg.apis.meta.v1';

// ---------------------------------------------------------------------------------------------
// A tiny protobuf writer for hand-made inputs
// ---------------------------------------------------------------------------------------------

function varint(n: number | bigint): number[] {
  let v = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}
const key = (tag: number, wt: number) => varint(tag * 8 + wt);
const vint = (tag: number, n: number | bigint) => [...key(tag, 0), ...varint(n)];
const ld = (tag: number, body: number[] | Uint8Array) => [...key(tag, 2), ...varint(body.length), ...body];
const str = (tag: number, s: string) => ld(tag, [...Buffer.from(s, 'utf8')]);
const envelope = (apiVersion: string, kind: string, raw: number[] | Uint8Array, extra: number[] = []) =>
  new Uint8Array([...PROTOBUF_PREFIX, ...ld(1, [...str(1, apiVersion), ...str(2, kind)]), ...ld(2, raw), ...extra]);

function tagOf(def: string, field: string): number {
  const d = set.get(def) as ObjectSchema;
  const t = d.properties![field]!.protoTag;
  if (t === undefined) throw new Error(`${def}.${field} has no protoTag`);
  return t;
}

/** The raw (inner) message of an envelope. */
function rawOf(env: Uint8Array): Uint8Array {
  // prefix, typeMeta field (0a len ...), then raw field (12 len ...).
  let p = 4;
  expect(env[p]).toBe(0x0a);
  p += 2 + env[p + 1]!;
  expect(env[p]).toBe(0x12);
  p++;
  let len = 0;
  let shift = 0;
  for (;;) {
    const b = env[p++]!;
    len += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (b < 0x80) break;
  }
  return env.subarray(p, p + len);
}

// ---------------------------------------------------------------------------------------------
// Reference fixtures
// ---------------------------------------------------------------------------------------------

function defByGvk(): Map<string, string> {
  const idx = new Map<string, string>();
  for (const [name, d] of Object.entries(defs)) {
    if (d.type !== 'object' || !d.gvk) continue;
    for (const g of d.gvk) if (!idx.has(`${g.group}/${g.version}/${g.kind}`)) idx.set(`${g.group}/${g.version}/${g.kind}`, name);
  }
  return idx;
}

needs('reference').describe('reference fixtures', () => {
  const files = fs.readdirSync(FIXTURES).filter((f) => f.endsWith('.pb'));
  const idx = defByGvk();
  const served: { base: string; def: string }[] = [];
  const notServed: string[] = [];
  for (const f of files) {
    const base = f.slice(0, -3);
    const obj = JSON.parse(fs.readFileSync(path.join(FIXTURES, `${base}.json`), 'utf8'));
    const [group, version] = String(obj.apiVersion).includes('/') ? String(obj.apiVersion).split('/') : ['', String(obj.apiVersion)];
    const def = idx.get(`${svcGroup(group!)}/${version}/${obj.kind}`);
    if (def && codec.supports(def)) served.push({ base, def });
    else notServed.push(base);
  }
  const load = (base: string) => ({
    pb: new Uint8Array(fs.readFileSync(path.join(FIXTURES, `${base}.pb`))),
    // The fixtures are in the reference's brand: CRD schemas say `x-kubernetes-*` where this API says `x-svc-*`.
    text: JSON.stringify(svcExtensionKeys(JSON.parse(fs.readFileSync(path.join(FIXTURES, `${base}.json`), 'utf8')))),
  });

  test('the served kinds among the fixtures are found', () => {
    expect(served.map((s) => s.base)).toContain('core.v1.Pod');
    expect(served.map((s) => s.base)).toContain('apps.v1.Deployment');
    expect(served.length).toBeGreaterThanOrEqual(14);
  });

  for (const base of notServed) test.skip(`${base}: kind not served here (no definition); not checked`, () => {});

  for (const { base, def } of served) {
    test(`${base}: decode(.pb) equals the JSON fixture, fields in the same order`, () => {
      const { pb, text } = load(base);
      const obj = codec.decode(pb, def);
      expect(obj).toEqual(JSON.parse(text));
      expect(JSON.stringify(obj)).toBe(JSON.stringify(JSON.parse(text)));
    });
    test(`${base}: encode(.json) is byte-identical to the .pb`, () => {
      const { pb, text } = load(base);
      const bytes = codec.encode(JSON.parse(text), def);
      expect(Buffer.from(bytes).toString('hex')).toBe(Buffer.from(pb).toString('hex'));
    });
    test(`${base}: decode without a definition name finds it from the envelope's type`, () => {
      const { pb, text } = load(base);
      expect(codec.decode(pb)).toEqual(JSON.parse(text));
    });
  }

  test('a list of fixture pods: each item is the pod fixture message, byte for byte', () => {
    const { pb, text } = load('core.v1.Pod');
    const pod = JSON.parse(text);
    delete pod.kind;
    delete pod.apiVersion;
    const list = {
      kind: 'PodList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '42', continue: 'tok', remainingItemCount: 3 },
      items: [pod, pod],
    };
    const bytes = codec.encode(list, POD_LIST);
    const podRaw = rawOf(pb);
    const meta = ld(1, [...str(2, '42'), ...str(3, 'tok'), ...vint(4, 3)]);
    const item = ld(2, podRaw);
    expect(Buffer.from(rawOf(bytes)).equals(Buffer.from([...meta, ...item, ...item]))).toBe(true);
    expect(codec.typeMeta(bytes)).toEqual({ apiVersion: 'v1', kind: 'PodList' });
    expect(codec.decode(bytes, POD_LIST)).toEqual(list);
  });
});

// ---------------------------------------------------------------------------------------------
// Envelope
// ---------------------------------------------------------------------------------------------

describe('envelope', () => {
  const cm = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', namespace: 'ns' }, data: { k: 'v' } };
  const CM = 'io.svc.api.core.v1.ConfigMap';

  test('prefix, typeMeta {apiVersion=1, kind=2}, raw, empty contentEncoding and contentType', () => {
    const b = codec.encode(cm, CM);
    const raw = [...ld(1, [...str(1, 'a'), ...str(3, 'ns')]), ...ld(2, [...str(1, 'k'), ...str(2, 'v')])];
    expect([...b]).toEqual([...envelope('v1', 'ConfigMap', raw), 0x1a, 0, 0x22, 0]);
  });

  test('typeMeta falls back to the definition gvk', () => {
    const b = codec.encode({ metadata: { name: 'a' } }, 'io.svc.api.apps.v1.Deployment');
    expect(codec.typeMeta(b)).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment' });
    expect(codec.decode(b)).toEqual({ kind: 'Deployment', apiVersion: 'apps/v1', metadata: { name: 'a' } });
  });

  test('missing or wrong prefix is a clear error', () => {
    const good = codec.encode(cm, CM);
    expect(() => codec.decode(new Uint8Array(0), CM)).toThrow(/envelope prefix 6b 38 73 00 \(got nothing\)/);
    expect(() => codec.decode(good.subarray(4), CM)).toThrow(/does not start with the envelope prefix/);
    expect(() => codec.decode(new Uint8Array([0x6b, 0x38, 0x73]), CM)).toThrow(/envelope prefix/);
    const wrong = good.slice();
    wrong[3] = 1;
    expect(() => codec.decode(wrong, CM)).toThrow(/got 6b 38 73 01/);
    expect(() => codec.decode(new TextEncoder().encode('{"kind":"ConfigMap"}'), CM)).toThrow(/envelope prefix/);
  });

  test('a content encoding or foreign content type is refused', () => {
    const raw = str(2, 'x');
    expect(() => codec.decode(envelope('v1', 'ConfigMap', raw, str(3, 'gzip')), CM)).toThrow(/content encoding "gzip"/);
    expect(() => codec.decode(envelope('v1', 'ConfigMap', raw, str(4, 'application/json')), CM)).toThrow(/content type/);
    for (const ct of ['application/vnd.svc.protobuf', 'application/vnd.kubernetes.protobuf', '']) {
      expect(codec.decode(envelope('v1', 'ConfigMap', [], str(4, ct)), CM)).toEqual({ kind: 'ConfigMap', apiVersion: 'v1' });
    }
  });

  test('truncated input is an error, not garbage', () => {
    const b = codec.encode(cm, CM);
    for (const cut of [b.length - 5, b.length - 9, 12, 7]) {
      expect(() => codec.decode(b.subarray(0, cut), CM)).toThrow(/protobuf/);
    }
  });

  test('an unknown kind without a definition name is a clear error', () => {
    expect(() => codec.decode(envelope('example.com/v1', 'Widget', []))).toThrow(
      /no protobuf definition for apiVersion "example.com\/v1", kind "Widget"/,
    );
  });

  test('definitions without a protobuf message are refused', () => {
    // ClaimSource: in the 1.28 OpenAPI, gone from the newer .proto files.
    const NO_PROTO = 'io.svc.api.core.v1.ClaimSource';
    expect(set.get(NO_PROTO)).toBeDefined();
    expect(codec.supports(NO_PROTO)).toBe(false);
    expect(codec.supports(POD)).toBe(true);
    expect(codec.supports('nope')).toBe(false);
    expect(() => codec.encode({}, NO_PROTO)).toThrow(/has no protobuf encoding/);
    expect(() => codec.encode({}, 'nope')).toThrow(/unknown definition/);
  });

  test('wrong JSON types are errors naming the field', () => {
    expect(() => codec.encode({ metadata: { name: 5 } }, CM)).toThrow(/name: expected string, got number/);
    expect(() => codec.encode({ metadata: { generation: '1' } }, CM)).toThrow(/generation: expected integer/);
    expect(() => codec.encode({ metadata: { finalizers: 'x' } }, CM)).toThrow(/finalizers: expected an array/);
    expect(() => codec.encode({ metadata: { creationTimestamp: 'yesterday' } }, CM)).toThrow(/not an RFC 3339 time/);
  });
});

// ---------------------------------------------------------------------------------------------
// Decoding what other encoders may write
// ---------------------------------------------------------------------------------------------

describe('decoding', () => {
  test('unknown fields of every wire type are skipped, at any depth', () => {
    const unknown = [
      ...vint(90, 123456789),
      ...key(91, 1),
      1,
      2,
      3,
      4,
      5,
      6,
      7,
      8,
      ...str(92, 'ignored'),
      ...key(93, 5),
      1,
      2,
      3,
      4,
      ...key(94, 3),
      ...vint(1, 1),
      ...str(2, 'in a group'),
      ...key(94, 4),
      ...vint(2000, 1),
    ];
    const meta = [...str(1, 'p'), ...unknown, ...str(3, 'ns')];
    const container = [...str(1, 'c'), ...unknown, ...str(2, 'img')];
    const spec = [...ld(tagOf('io.svc.api.core.v1.PodSpec', 'containers'), container), ...unknown];
    const raw = [...unknown, ...ld(1, meta), ...ld(2, spec), ...unknown];
    expect(codec.decode(envelope('v1', 'Pod', raw, [...unknown, 0x1a, 0, 0x22, 0]), POD)).toEqual({
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: 'p', namespace: 'ns' },
      spec: { containers: [{ name: 'c', image: 'img' }] },
    });
  });

  test('field number 0 and wire-type mismatches are errors', () => {
    expect(() => codec.decode(envelope('v1', 'Pod', [0, 0]), POD)).toThrow(/field number 0/);
    // metadata (1) as a varint.
    expect(() => codec.decode(envelope('v1', 'Pod', vint(1, 5)), POD)).toThrow(/metadata = 1 has wire type 0, want 2/);
  });

  test('packed repeated scalars are read like unpacked ones', () => {
    const SC = 'io.svc.api.core.v1.PodSecurityContext';
    const t = tagOf(SC, 'supplementalGroups');
    const packed = ld(t, [...varint(1), ...varint(300), ...varint(-2)]);
    const unpacked = [...vint(t, 1), ...vint(t, 300), ...vint(t, -2)];
    const spec = (sc: number[]) => ld(2, ld(tagOf('io.svc.api.core.v1.PodSpec', 'securityContext'), sc));
    const want = { kind: 'Pod', apiVersion: 'v1', spec: { securityContext: { supplementalGroups: [1, 300, -2] } } };
    expect(codec.decode(envelope('v1', 'Pod', spec(packed)), POD)).toEqual(want);
    expect(codec.decode(envelope('v1', 'Pod', spec(unpacked)), POD)).toEqual(want);
    // And the encoder writes them unpacked, as the reference does.
    expect([...rawOf(codec.encode(want, POD))]).toEqual(spec(unpacked));
  });

  test("zero values of Go value fields (written by Go's encoder) are dropped; pointers and required fields keep them", () => {
    const PS = 'io.svc.api.core.v1.PodSpec';
    const container = [...str(1, ''), ...str(2, 'img'), ...vint(tagOf('io.svc.api.core.v1.Container', 'tty'), 0)];
    const spec = [
      ...ld(tagOf(PS, 'containers'), container),
      ...str(tagOf(PS, 'restartPolicy'), ''),
      ...vint(tagOf(PS, 'terminationGracePeriodSeconds'), 0),
      ...vint(tagOf(PS, 'hostNetwork'), 0),
      ...vint(tagOf(PS, 'automountServiceAccountToken'), 0),
      ...str(tagOf(PS, 'dnsPolicy'), ''),
    ];
    // ObjectMeta as Go writes it for a new object: every value field, creationTimestamp empty.
    const meta = [...str(1, 'p'), ...str(2, ''), ...str(3, ''), ...str(4, ''), ...str(5, ''), ...str(6, ''), ...vint(7, 0), ...ld(8, [])];
    const status = [...str(tagOf('io.svc.api.core.v1.PodStatus', 'phase'), '')];
    const raw = [...ld(1, meta), ...ld(2, spec), ...ld(3, status)];
    expect(codec.decode(envelope('v1', 'Pod', raw), POD)).toEqual({
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: 'p' },
      spec: {
        containers: [{ name: '', image: 'img' }],
        terminationGracePeriodSeconds: 0,
        automountServiceAccountToken: false,
      },
      status: {},
    });
  });

  test('DeleteOptions as client-go sends it: pointer zeros kept, value-field zeros dropped', () => {
    const DO = `${META}.DeleteOptions`;
    const raw = [...vint(1, 0), ...ld(2, str(2, '')), ...vint(3, 0), ...str(4, 'Background'), ...str(5, 'All')];
    expect(codec.decode(envelope('v1', 'DeleteOptions', raw), DO)).toEqual({
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      gracePeriodSeconds: 0,
      preconditions: { resourceVersion: '' },
      orphanDependents: false,
      propagationPolicy: 'Background',
      dryRun: ['All'],
    });
  });

  test('a repeated occurrence of a message field merges into the first; of a scalar, the last wins', () => {
    const raw = [...ld(1, str(1, 'a')), ...ld(1, str(3, 'ns')), ...ld(1, str(1, 'b'))];
    expect(codec.decode(envelope('v1', 'Pod', raw), POD)).toEqual({
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: 'b', namespace: 'ns' },
    });
  });

  test('map entries without key or value give the empty key and the zero value', () => {
    const raw = [...ld(1, ld(11, str(2, 'v'))), ...ld(1, ld(12, str(1, 'k')))];
    expect(codec.decode(envelope('v1', 'Pod', raw), POD)).toEqual({
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { labels: { '': 'v' }, annotations: { k: '' } },
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Value forms
// ---------------------------------------------------------------------------------------------

/** encode then decode; apiVersion and kind (filled from the definition) only if obj has them. */
function roundTrip(obj: Any, def: string): Any {
  const out: Any = codec.decode(codec.encode(obj, def), def);
  if (!('kind' in obj)) delete out.kind;
  if (!('apiVersion' in obj)) delete out.apiVersion;
  return out;
}

describe('value forms', () => {
  test('IntOrString: all three fields always written; number or string back', () => {
    const SVC = 'io.svc.api.core.v1.Service';
    const tp = tagOf('io.svc.api.core.v1.ServicePort', 'targetPort');
    const svc = (targetPort: Any) => ({ kind: 'Service', apiVersion: 'v1', spec: { ports: [{ port: 80, targetPort }] } });
    const raw = (ios: number[]) => ld(2, ld(1, [...vint(3, 80), ...ld(tp, ios)]));
    expect([...rawOf(codec.encode(svc(8080), SVC))]).toEqual(raw([...vint(1, 0), ...vint(2, 8080), ...str(3, '')]));
    expect([...rawOf(codec.encode(svc('http'), SVC))]).toEqual(raw([...vint(1, 1), ...vint(2, 0), ...str(3, 'http')]));
    expect(roundTrip(svc(8080), SVC)).toEqual(svc(8080));
    expect(roundTrip(svc('http'), SVC)).toEqual(svc('http'));
    expect(roundTrip(svc(-1), SVC)).toEqual(svc(-1));
  });

  test('Time: seconds only (nanos written as 0); the zero time is an empty message', () => {
    const meta = (ts: string) => ({ kind: 'Pod', apiVersion: 'v1', metadata: { creationTimestamp: ts } });
    const b = rawOf(codec.encode(meta('2008-01-01T01:01:01.999Z'), POD));
    const secs = Date.UTC(2008, 0, 1, 1, 1, 1) / 1000;
    expect([...b]).toEqual(ld(1, ld(8, [...vint(1, secs), ...vint(2, 0)])));
    expect(roundTrip(meta('2008-01-01T01:01:01.999Z'), POD)).toEqual(meta('2008-01-01T01:01:01Z'));
    expect(roundTrip(meta('2008-01-01T03:01:01+02:00'), POD)).toEqual(meta('2008-01-01T01:01:01Z'));
    expect(roundTrip(meta('1969-12-31T23:59:59Z'), POD)).toEqual(meta('1969-12-31T23:59:59Z'));
    expect(roundTrip(meta('0099-03-04T05:06:07Z'), POD)).toEqual(meta('0099-03-04T05:06:07Z'));
    expect([...rawOf(codec.encode(meta('0001-01-01T00:00:00Z'), POD))]).toEqual(ld(1, ld(8, [])));
    expect(roundTrip(meta('0001-01-01T00:00:00Z'), POD)).toEqual({ kind: 'Pod', apiVersion: 'v1', metadata: {} });
  });

  test('MicroTime: microseconds kept, nanoseconds truncated', () => {
    const LEASE = 'io.svc.api.coordination.v1.Lease';
    const lease = (t: string) => ({ kind: 'Lease', apiVersion: 'coordination.svc.io/v1', spec: { renewTime: t } });
    const b = rawOf(codec.encode(lease('2020-02-03T04:05:06.123456789Z'), LEASE));
    const secs = Date.UTC(2020, 1, 3, 4, 5, 6) / 1000;
    expect([...b]).toEqual(ld(2, ld(4, [...vint(1, secs), ...vint(2, 123456000)])));
    expect(roundTrip(lease('2020-02-03T04:05:06.123456789Z'), LEASE)).toEqual(lease('2020-02-03T04:05:06.123456Z'));
    expect(roundTrip(lease('2020-02-03T04:05:06Z'), LEASE)).toEqual(lease('2020-02-03T04:05:06.000000Z'));
  });

  test('bytes: base64 in JSON, raw on the wire', () => {
    const SECRET = 'io.svc.api.core.v1.Secret';
    const data = { a: Buffer.from([0, 1, 2, 255]).toString('base64'), b: '' };
    const s = { kind: 'Secret', apiVersion: 'v1', data };
    const t = tagOf(SECRET, 'data');
    expect([...rawOf(codec.encode(s, SECRET))]).toEqual([
      ...ld(t, [...str(1, 'a'), ...ld(2, [0, 1, 2, 255])]),
      ...ld(t, [...str(1, 'b'), ...ld(2, [])]),
    ]);
    expect(roundTrip(s, SECRET)).toEqual(s);
  });

  test('maps: entries sorted by key in byte order, key and value always written', () => {
    const labels = { b: '2', a: '', é: 'x', z: 'y', '\u{1F600}': 's', '\uFFFD': 'r' };
    const bytes = rawOf(codec.encode({ metadata: { labels } }, POD));
    const order = ['a', 'b', 'z', 'é', '\uFFFD', '\u{1F600}'];
    expect([...bytes]).toEqual(
      ld(
        1,
        order.flatMap((k) => ld(11, [...str(1, k), ...str(2, labels[k as keyof typeof labels])])),
      ),
    );
    expect(roundTrip({ metadata: { labels } }, POD).metadata.labels).toEqual(labels);
  });

  test('Quantity: a string message, kept as written', () => {
    const RQ = 'io.svc.api.core.v1.ResourceQuota';
    const rq = { kind: 'ResourceQuota', apiVersion: 'v1', spec: { hard: { cpu: '100m', memory: '1Gi', pods: '10' } } };
    expect(roundTrip(rq, RQ)).toEqual(rq);
    expect(roundTrip({ spec: { hard: { cpu: 2 } } }, RQ).spec.hard.cpu).toBe('2');
  });

  test('RawExtension: JSON text inside; an envelope inside decodes to its object', () => {
    const CR = 'io.svc.api.apps.v1.ControllerRevision';
    const data = { apiVersion: 'example.com/v1', kind: 'Thing', spec: { replicas: 1, list: [1, 'two', null, true] } };
    const cr = { kind: 'ControllerRevision', apiVersion: 'apps/v1', metadata: { name: 'r' }, data, revision: 3 };
    const raw = rawOf(codec.encode(cr, CR));
    expect(Buffer.from(raw).includes(Buffer.from(JSON.stringify(data)))).toBe(true);
    expect(roundTrip(cr, CR)).toEqual(cr);
    // An embedded protobuf envelope (as a Go client may put in a RawExtension).
    const pod = { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'inner' } };
    const inner = codec.encode(pod, POD);
    const outer = envelope('apps/v1', 'ControllerRevision', [...ld(tagOf(CR, 'data'), ld(1, inner)), ...vint(tagOf(CR, 'revision'), 3)]);
    expect(codec.decode(outer, CR)).toEqual({ kind: 'ControllerRevision', apiVersion: 'apps/v1', data: pod, revision: 3 });
    const junk = envelope('apps/v1', 'ControllerRevision', ld(tagOf(CR, 'data'), ld(1, [1, 2, 3])));
    expect(() => codec.decode(junk, CR)).toThrow(/neither JSON nor a protobuf envelope/);
  });

  test('Verbs: a JSON string array, one {items} message on the wire', () => {
    const L = `${META}.APIResourceList`;
    const list = {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'v1',
      resources: [{ name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod', verbs: ['get', 'list'], shortNames: ['po'] }],
    };
    const b = rawOf(codec.encode(list, L));
    expect(Buffer.from(b).includes(Buffer.from(ld(4, [...str(1, 'get'), ...str(1, 'list')])))).toBe(true);
    expect(roundTrip(list, L)).toEqual(list);
  });

  test('integers: negative int32/int64 as ten-byte varints, int64 beyond 32 bits', () => {
    const obj = { metadata: { generation: 2 ** 40 + 5, deletionGracePeriodSeconds: -1 } };
    const b = rawOf(codec.encode(obj, POD));
    expect([...b]).toEqual(ld(1, [...vint(7, 2 ** 40 + 5), ...vint(10, -1)]));
    expect(vint(10, -1).length).toBe(11);
    expect(roundTrip(obj, POD)).toEqual(obj);
    const big = { metadata: { generation: 2 ** 53 - 1, deletionGracePeriodSeconds: -(2 ** 53 - 1) } };
    expect(roundTrip(big, POD)).toEqual(big);
    const neg32 = { spec: { containers: [{ name: 'c', ports: [{ containerPort: -2147483648 }] }] } };
    expect(roundTrip(neg32, POD)).toEqual(neg32);
  });

  test('strings: multi-byte UTF-8, lone surrogates, long strings and long messages (multi-byte lengths)', () => {
    const names = [
      'héllo wörld ✓',
      '\u{1F600}x',
      'a'.repeat(42),
      'é'.repeat(43),
      'ü'.repeat(70),
      'x'.repeat(200),
      '✓'.repeat(5000),
      '\uD800z',
    ];
    for (const n of names) {
      const b = rawOf(codec.encode({ metadata: { name: n } }, POD));
      const utf8 = Buffer.from(n, 'utf8');
      expect(Buffer.from(b).equals(Buffer.from(ld(1, ld(1, [...utf8]))))).toBe(true);
      expect(roundTrip({ metadata: { name: n } }, POD).metadata.name).toBe(n.replace('\uD800', '\uFFFD'));
    }
    const many = { metadata: { annotations: Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, 'v'.repeat(i % 50)])) } };
    expect(roundTrip(many, POD)).toEqual(many);
  });

  test('Duration: Go formatting and parsing', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(1.5e9)).toBe('1.5s');
    expect(formatDuration(3723e9)).toBe('1h2m3s');
    expect(formatDuration(60e9)).toBe('1m0s');
    expect(formatDuration(2e6)).toBe('2ms');
    expect(formatDuration(1500)).toBe('1.5µs');
    expect(formatDuration(-5e9)).toBe('-5s');
    expect(parseDuration('1h2m3.5s')).toBe(3723.5e9);
    expect(parseDuration('300ms')).toBe(300e6);
    expect(parseDuration('-1.5h')).toBe(-5400e9);
    expect(parseDuration('0')).toBe(0);
    expect(() => parseDuration('5')).toThrow(/not a duration/);
    expect(() => parseDuration('')).toThrow(/not a duration/);
  });
});

// ---------------------------------------------------------------------------------------------
// Go-inlined structs
// ---------------------------------------------------------------------------------------------

describe('inlined structs', () => {
  test('Probe: the handler is nested message 1, always written', () => {
    const C = 'io.svc.api.core.v1.Container';
    const rp = tagOf(C, 'readinessProbe');
    const pod = (probe: Any) => ({ spec: { containers: [{ name: 'c', readinessProbe: probe }] } });
    const raw = (probe: number[]) => ld(2, ld(2, [...str(1, 'c'), ...ld(rp, probe)]));
    expect([...rawOf(codec.encode(pod({ initialDelaySeconds: 5 }), POD))]).toEqual(raw([...ld(1, []), ...vint(2, 5)]));
    expect([...rawOf(codec.encode(pod({ exec: { command: ['true'] }, periodSeconds: 3 }), POD))]).toEqual(
      raw([...ld(1, ld(1, str(1, 'true'))), ...vint(4, 3)]),
    );
    expect(roundTrip(pod({ tcpSocket: { port: 80 }, periodSeconds: 3 }), POD)).toEqual(pod({ tcpSocket: { port: 80 }, periodSeconds: 3 }));
  });

  test('secret key selector: name inside LocalObjectReference (field 1)', () => {
    const env = { name: 'E', valueFrom: { secretKeyRef: { name: 's', key: 'k', optional: false } } };
    const pod = { spec: { containers: [{ name: 'c', env: [env] }] } };
    expect(roundTrip(pod, POD)).toEqual(pod);
    const b = Buffer.from(rawOf(codec.encode(pod, POD)));
    expect(b.includes(Buffer.from([...ld(1, str(1, 's')), ...str(2, 'k'), ...vint(3, 0)]))).toBe(true);
  });

  test('NamedRuleWithOperations: two levels of inlining (RuleWithOperations, then Rule)', () => {
    const VAP = 'io.svc.api.admissionregistration.v1.ValidatingAdmissionPolicy';
    const rule = {
      resourceNames: ['r'],
      operations: ['CREATE'],
      apiGroups: ['apps'],
      apiVersions: ['v1'],
      resources: ['deployments'],
      scope: '*',
    };
    const vap = {
      kind: 'ValidatingAdmissionPolicy',
      apiVersion: 'admissionregistration.svc.io/v1',
      metadata: { name: 'p' },
      spec: { matchConstraints: { resourceRules: [rule] }, validations: [{ expression: 'true' }] },
    };
    expect(roundTrip(vap, VAP)).toEqual(vap);
    const want = [
      ...str(1, 'r'),
      ...ld(2, [...str(1, 'CREATE'), ...ld(2, [...str(1, 'apps'), ...str(2, 'v1'), ...str(3, 'deployments'), ...str(4, '*')])]),
    ];
    expect(Buffer.from(rawOf(codec.encode(vap, VAP))).includes(Buffer.from(want))).toBe(true);
  });

  test('Volume and EphemeralContainer keep JSON field order after decoding', () => {
    const pod = {
      spec: {
        volumes: [{ name: 'v', configMap: { name: 'cm', items: [{ key: 'a', path: 'b' }], defaultMode: 420 } }],
        ephemeralContainers: [{ name: 'dbg', image: 'busybox', stdin: true, targetContainerName: 'c' }],
      },
    };
    const back = roundTrip(pod, POD);
    expect(JSON.stringify(back)).toBe(JSON.stringify(pod));
  });
});

// ---------------------------------------------------------------------------------------------
// Status, watch events
// ---------------------------------------------------------------------------------------------

describe('Status and watch events', () => {
  const status = {
    metadata: {},
    status: 'Failure',
    message: 'pods "x" not found',
    reason: 'NotFound',
    details: { name: 'x', kind: 'pods', causes: [{ reason: 'FieldValueInvalid', message: 'bad', field: 'spec' }] },
    code: 404,
  };

  test('encodeStatus: a meta v1 Status with apiVersion v1, kind Status', () => {
    const b = codec.encodeStatus(status);
    expect([...b.subarray(0, 4)]).toEqual([...PROTOBUF_PREFIX]);
    expect(codec.typeMeta(b)).toEqual({ apiVersion: 'v1', kind: 'Status' });
    expect(codec.decode(b)).toEqual({ kind: 'Status', apiVersion: 'v1', ...status });
    const raw = rawOf(b);
    expect([...raw.subarray(0, 2)]).toEqual([0x0a, 0x00]);
    expect(
      Buffer.from(raw)
        .subarray(-3)
        .equals(Buffer.from(vint(6, 404))),
    ).toBe(true);
  });

  test('watch frames: 4-byte length, WatchEvent {type, object: RawExtension{envelope}}', () => {
    const pod = { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p', resourceVersion: '7' } };
    const frame = codec.encodeWatchEvent('ADDED', pod, POD);
    const len = new DataView(frame.buffer, frame.byteOffset).getUint32(0);
    expect(len).toBe(frame.length - 4);
    const inner = codec.encode(pod, POD);
    expect([...frame.subarray(4)]).toEqual([...str(1, 'ADDED'), ...ld(2, ld(1, inner))]);
    expect(codec.decodeWatchEvent(frame, POD)).toEqual({ type: 'ADDED', object: pod, size: frame.length });
    const err = codec.encodeWatchStatus({ status: 'Failure', message: 'too old', reason: 'Expired', code: 410 });
    expect(codec.decodeWatchEvent(err)).toEqual({
      type: 'ERROR',
      object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'too old', reason: 'Expired', code: 410 },
      size: err.length,
    });
    expect(() => codec.decodeWatchEvent(frame.subarray(0, frame.length - 1))).toThrow(/cut short/);
  });

  test('a big list: many items, lengths of several bytes', () => {
    const items = Array.from({ length: 500 }, (_, i) => ({
      metadata: { name: `pod-${i}`, namespace: 'default', labels: { app: 'x', i: String(i) }, uid: `uid-${i}` },
      spec: {
        containers: [{ name: 'c', image: 'nginx:1.25', ...(i % 7 ? { args: Array.from({ length: i % 7 }, (_, j) => `--a${j}`) } : {}) }],
      },
      status: { phase: 'Running', podIP: '10.0.0.1' },
    }));
    const list = { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '99' }, items };
    const b = codec.encode(list, POD_LIST);
    expect(b.length).toBeGreaterThan(50000);
    expect(codec.decode(b, POD_LIST)).toEqual(list);
    expect(codec.encode(codec.decode(b, POD_LIST), POD_LIST)).toEqual(b);
  });
});

describe('encoding order', () => {
  test('object keys in any order give the same bytes (field-number order)', () => {
    const a = {
      metadata: { name: 'n', namespace: 'ns', labels: { a: 'b' }, uid: 'u' },
      spec: { nodeName: 'x', containers: [{ image: 'i', name: 'c' }] },
    };
    const b = {
      spec: { containers: [{ name: 'c', image: 'i' }], nodeName: 'x' },
      metadata: { uid: 'u', labels: { a: 'b' }, namespace: 'ns', name: 'n' },
    };
    expect(codec.encode(a, POD)).toEqual(codec.encode(b, POD));
    expect(roundTrip(b, POD)).toEqual(a);
  });

  test('times: the fast and the general RFC 3339 paths agree; out-of-range parts are refused', () => {
    const meta = (ts: string) => ({ metadata: { creationTimestamp: ts } });
    for (const [ts, want] of [
      ['2024-02-29T23:59:59Z', '2024-02-29T23:59:59Z'],
      ['2024-02-29T23:59:59.5Z', '2024-02-29T23:59:59Z'],
      ['2024-03-01T01:59:59+02:00', '2024-02-29T23:59:59Z'],
      ['1900-03-01T00:00:00z', '1900-03-01T00:00:00Z'],
    ]) {
      expect(roundTrip(meta(ts!), POD)).toEqual(meta(want!));
    }
    for (const bad of [
      '2024-13-01T00:00:00Z',
      '2024-01-01T24:00:00Z',
      '2024-01-01T00:60:00Z',
      '2024-01-0xT00:00:00Z',
      '2024-01-01 00:00:00Z',
    ]) {
      expect(() => codec.encode(meta(bad), POD)).toThrow(/not an RFC 3339 time/);
    }
  });
});

describe('CRD schema wrappers (JSONSchemaPropsOrArray, OrBool, OrStringArray)', () => {
  const PROPS = 'io.svc.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps';
  const cases: [string, Any][] = [
    ['additionalProperties false', { type: 'object', additionalProperties: false }],
    ['additionalProperties true', { type: 'object', additionalProperties: true }],
    ['additionalProperties a schema', { type: 'object', additionalProperties: { type: 'string' } }],
    ['items a schema', { type: 'array', items: { type: 'integer' } }],
    ['items a list of schemas', { type: 'array', items: [{ type: 'integer' }, { type: 'string' }] }],
    ['dependencies: property names and a schema', { dependencies: { a: ['b', 'c'], d: { type: 'object' } } }],
    ['additionalItems false', { additionalItems: false }],
  ];
  for (const [name, schema] of cases) {
    test(`${name}: round trip`, () => {
      const bytes = codec.encodeMessage(schema, PROPS);
      expect(codec.decodeMessage(bytes, PROPS)).toEqual(schema);
    });
  }
  test('value fields are written as zeros when absent, as the reference writes an empty schema', () => {
    const bytes = codec.encodeMessage({}, PROPS);
    // id, $schema, description, type, format, title (strings), exclusiveMaximum, exclusiveMinimum
    // (bools), pattern, uniqueItems, nullable, embedded-resource, int-or-string.
    expect(Buffer.from(bytes).toString('hex')).toBe(
      '0a0012002200 2a00 3200 3a00 5000 6000 7a00 9001 00 a80200 b80200 c00200'.replace(/ /g, ''),
    );
    expect(codec.decodeMessage(bytes, PROPS)).toEqual({});
  });
  test('a wrong JSON type is an error naming the field', () => {
    expect(() => codec.encodeMessage({ additionalProperties: 'x' }, PROPS)).toThrow(/additionalProperties/);
    expect(() => codec.encodeMessage({ items: 5 }, PROPS)).toThrow(/items/);
    expect(() => codec.encodeMessage({ dependencies: { a: [1] } }, PROPS)).toThrow(/dependencies/);
  });
});

describe('raw JSON fields (fieldsV1, RawExtension)', () => {
  const podWith = (fieldsV1: unknown) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'p',
      managedFields: [{ manager: 'm', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1 }],
    },
  });
  const wide: Record<string, unknown> = {};
  for (let i = 0; i < 400; i++) wide[`k:{"name":"c-${i}","path":"a\\\\b"}`] = { '.': {}, 'f:x': {} };
  const cases: [string, unknown][] = [
    [
      'keys with quotes and backslashes',
      { 'f:metadata': { 'f:annotations': { 'f:a\\b': {}, 'f:q"x': {} } }, 'k:{"name":"c"}': { '.': {} } },
    ],
    ['an empty tree', {}],
    ['a key past ASCII (stringified instead)', { 'f:data': { 'f:é': {}, 'f:😀': {} } }],
    ['a control character in a key (stringified instead)', { 'f:data': { 'f:\n\t\u0001': {} } }],
    ['a tree of more than 127 bytes and of more than the writer first holds', wide],
  ];
  for (const [what, tree] of cases) {
    test(`${what}: the bytes of JSON.stringify, and decoded back the same`, () => {
      const bytes = codec.encode(podWith(tree), POD);
      expect(Buffer.from(bytes).includes(Buffer.from(JSON.stringify(tree)))).toBe(true);
      const back = codec.decode(bytes, POD) as Any;
      expect(back.metadata.managedFields[0].fieldsV1).toEqual(tree);
    });
  }
  test('a RawExtension holding arrays, strings and numbers is stringified', () => {
    const data = { spec: { template: { a: [1, 'two', { three: 3 }], b: 'x"y', c: null, d: true } } };
    const rev = { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'r' }, revision: 1, data };
    const bytes = codec.encode(rev, 'io.svc.api.apps.v1.ControllerRevision');
    expect(Buffer.from(bytes).includes(Buffer.from(JSON.stringify(data)))).toBe(true);
    expect((codec.decode(bytes, 'io.svc.api.apps.v1.ControllerRevision') as Any).data).toEqual(data);
  });
});

describe('compiled message writers', () => {
  // A made-up message whose field names Object.prototype also has: the compiled writer reads a
  // field only from the object itself, never the prototype's function of that name.
  const ODD = 'io.svc.test.v1.Odd';
  const oddDefs = {
    [ODD]: {
      type: 'object',
      protoMessage: ODD,
      properties: {
        constructor: { type: 'string', protoTag: 1, protoType: 'string' },
        toString: { type: 'string', protoTag: 2, protoType: 'string' },
        name: { type: 'string', protoTag: 3, protoType: 'string' },
      },
    },
  } as unknown as Definitions;
  const oddCodec = new ProtobufCodec(new SchemaSet(oddDefs));
  const str = (tag: number, s: string) => [...key(tag, 2), s.length, ...[...s].map((c) => c.charCodeAt(0))];

  test('a field named as an Object.prototype member is written only when the object has it', () => {
    expect([...oddCodec.encodeMessage({ name: 'x' }, ODD)]).toEqual(str(3, 'x'));
    expect([...oddCodec.encodeMessage({ name: 'x', toString: 't', constructor: 'c' }, ODD)]).toEqual([
      ...str(1, 'c'),
      ...str(2, 't'),
      ...str(3, 'x'),
    ]);
    expect(oddCodec.decodeMessage(oddCodec.encodeMessage({ constructor: 'c', name: 'x' }, ODD), ODD)).toEqual({
      constructor: 'c',
      name: 'x',
    });
  });

  test('fields in any key order are written in field-number order, the same bytes each time', () => {
    const a = oddCodec.encodeMessage({ name: 'n', toString: 't' }, ODD);
    const b = oddCodec.encodeMessage({ toString: 't', name: 'n' }, ODD);
    expect([...a]).toEqual([...str(2, 't'), ...str(3, 'n')]);
    expect([...b]).toEqual([...a]);
    // A pod written once per key order of its metadata: the same bytes.
    const meta = { name: 'p', namespace: 'ns', uid: 'u', labels: { a: '1' } };
    const reversed = Object.fromEntries(Object.entries(meta).reverse());
    const one = codec.encodeMessage({ metadata: meta, spec: { containers: [{ name: 'c', image: 'i' }] } }, POD);
    const two = codec.encodeMessage({ spec: { containers: [{ image: 'i', name: 'c' }] }, metadata: reversed }, POD);
    expect([...two]).toEqual([...one]);
  });
});
