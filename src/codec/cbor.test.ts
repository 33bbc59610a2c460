import { describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { needs, REFERENCE } from '../../test/helpers/needs';
import { svcGroup } from '../api/brand';
import { SchemaSet } from '../schema/engine';
import generated from '../schema/generated/definitions.json';
import { overlays } from '../schema/overlays';
import type { Definitions } from '../schema/types';
import { CborCodec, CborError } from './cbor';

// cbor-x's optional native reader (cbor-extract) crashes Bun 1.4.5 (segfault/abort seen in a
// decode loop): load it with its JavaScript reader only.
process.env.CBOR_NATIVE_ACCELERATION_DISABLED = 'true';
const { Decoder, Tag } = await import('cbor-x');

const set = new SchemaSet(generated as unknown as Definitions, overlays);
const cbor = new CborCodec(set);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const fromHex = (h: string) => new Uint8Array(Buffer.from(h.replaceAll(' ', ''), 'hex'));
/** cbor-x as an independent reader of what the codec writes, its output turned into JSON values. */
const cborX = new Decoder({ mapsAsObjects: false });
function oracle(bytes: Uint8Array): unknown {
  const json = (v: unknown): unknown => {
    if (v instanceof Tag) return v.tag === 22 ? Buffer.from(v.value as Uint8Array).toString('base64') : json(v.value);
    if (v instanceof Uint8Array) return Buffer.from(v).toString();
    if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [json(k) as string, json(x)]));
    if (Array.isArray(v)) return v.map(json);
    return v;
  };
  return json(cborX.decode(bytes));
}

const REF = path.join(REFERENCE, 'fixtures');

describe('writing', () => {
  test.each([
    [{ kind: 'ConfigMap', data: { a: 'b' } }, 'd9d9f7 a2 44 64617461 a1 41 61 41 62 44 6b696e64 49 436f6e6669674d6170'],
    [{ b: 1, a: -1, cc: 1.5 }, 'd9d9f7 a3 41 61 20 41 62 01 42 6363 f9 3e00'],
    [[0.1, 100000, 2 ** 40, true, null], 'd9d9f7 85 fb 3fb999999999999a 1a 000186a0 1b 0000010000000000 f5 f6'],
    [{ x: 65504.5 }, 'd9d9f7 a1 41 78 fa 477fe080'],
  ])('%j → %s', (v, want) => {
    expect(hex(cbor.encode(v))).toBe(want.replaceAll(' ', ''));
  });

  test('keys sort by encoded length, then bytewise (struct fields too)', () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {}, status: {} };
    const decoded = oracle(cbor.encode(pod, 'io.svc.api.core.v1.Pod')) as Record<string, unknown>;
    expect(Object.keys(decoded)).toEqual(['kind', 'spec', 'status', 'metadata', 'apiVersion']);
  });

  test('byte fields are tag 22 around the raw bytes; other strings are byte strings', () => {
    const secret = { kind: 'Secret', data: { k: Buffer.from('hello').toString('base64') } };
    const out = cbor.encode(secret, 'io.svc.api.core.v1.Secret');
    expect(hex(out)).toContain(`d6 45 ${Buffer.from('hello').toString('hex')}`.replaceAll(' ', ''));
    expect(cbor.decode(out, 'io.svc.api.core.v1.Secret')).toEqual(secret);
    // Without the schema, tag 22 still reads back as base64 text.
    expect(cbor.decode(out)).toEqual(secret);
  });

  needs('reference').test('every reference fixture round-trips and cbor-x reads it back as the same JSON', () => {
    let n = 0;
    for (const f of fs.readdirSync(REF).filter((x) => x.endsWith('.json'))) {
      const obj = JSON.parse(fs.readFileSync(path.join(REF, f), 'utf8'));
      const [group, version, kind] = ((m) => [m?.[1] ?? '', m?.[2] ?? '', m?.[3] ?? ''])(/^(.*)\.(v[^.]+)\.([A-Za-z]+)\.json$/.exec(f));
      const g = group === 'core' ? 'core' : svcGroup(group);
      const def = Object.keys(generated).find((d) => d.endsWith(`.${version}.${kind}`) && d.includes(g.split('.')[0] as string));
      const bytes = cbor.encode(obj, def);
      expect({ f, back: cbor.decode(bytes, def) }).toEqual({ f, back: obj });
      expect({ f, viaOracle: oracle(bytes) }).toEqual({ f, viaOracle: obj });
      n++;
    }
    expect(n).toBeGreaterThanOrEqual(20);
  });
});

describe('reading', () => {
  test.each([
    ['text strings and keys', 'a1 64 6b696e64 63 506f64', { kind: 'Pod' }],
    ['without the self-described tag', 'a1 41 61 01', { a: 1 }],
    ['indefinite-length map, array and string', 'bf 41 61 9f 01 02 ff 41 62 7f 62 6869 61 21 ff ff', { a: [1, 2], b: 'hi!' }],
    ['half, single and double floats', '83 f9 3e00 fa 3fc00000 fb 3ff8000000000000', [1.5, 1.5, 1.5]],
    ['an unknown tag: its content', 'a1 41 61 d8 64 01', { a: 1 }],
    ['negative integers', '82 20 38 63', [-1, -100]],
  ])('%s', (_, h, want) => {
    expect(cbor.decode(fromHex(h))).toEqual(want);
  });

  const deep = `${'81'.repeat(65)}01`;
  const many = `99 0401 ${'01'.repeat(1025)}`;
  test.each([
    ['duplicate map keys', 'a2 41 61 01 41 61 02', 'found duplicate map key "a" at map element index 1'],
    ['an integer map key', 'a1 01 02', 'map keys must be strings'],
    ['NaN', 'f9 7e00', 'NaN'],
    ['infinity', 'fa 7f800000', 'infinity'],
    ['an integer past 2^53', '1b 0020000000000000', 'overflows'],
    ['more than 64 levels', deep, 'exceeded max nested level 64'],
    ['more than 1024 array items', many, 'exceeded max number of elements 1024'],
    ['trailing bytes', '01 02', '1 bytes of extraneous data starting at index 1'],
    ['a truncated string', '45 6162', 'unexpected EOF'],
    ['invalid UTF-8 in a text string', '62 c328', 'invalid UTF-8'],
    ['a stray break', 'ff', 'break'],
  ])('%s → CborError', (_, h, msg) => {
    expect(() => cbor.decode(fromHex(h))).toThrow(CborError);
    expect(() => cbor.decode(fromHex(h))).toThrow(msg);
  });
});
