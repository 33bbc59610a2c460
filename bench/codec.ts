/**
 * Codec rates per media type (issue 15 bench): encode and decode of a ~3 KB Pod and of a list of
 * 500 of them in JSON, protobuf and CBOR (this server's codec), with cbor-x (generic CBOR, text
 * strings, no key sorting or checks) as the baseline of what CBOR costs without the reference's
 * profile.
 *
 *     bun bench/codec.ts
 */

import { Bench } from 'tinybench';
import { CborCodec } from '../src/codec/cbor';
import { ProtobufCodec } from '../src/codec/protobuf';
import { SchemaSet } from '../src/schema/engine';
import generated from '../src/schema/generated/definitions.json';
import { overlays } from '../src/schema/overlays';
import type { Definitions } from '../src/schema/types';
import { pod3k as pod } from './fixtures';

// cbor-x's optional native reader (cbor-extract) crashes Bun 1.4.5 (segfault/abort seen in a
// decode loop): load it with its JavaScript reader only.
process.env.CBOR_NATIVE_ACCELERATION_DISABLED = 'true';
const { Decoder, Encoder } = await import('cbor-x');

const schemas = new SchemaSet(generated as unknown as Definitions, overlays);
const pb = new ProtobufCodec(schemas);
const cbor = new CborCodec(schemas);
const cborXEnc = new Encoder({ useRecords: false, mapsAsObjects: true });
const cborXDec = new Decoder({ useRecords: false, mapsAsObjects: true });

const one = pod(1);
const list = {
  apiVersion: 'v1',
  kind: 'PodList',
  metadata: { resourceVersion: '99' },
  items: Array.from({ length: 500 }, (_, i) => pod(i)),
};
const cases: [string, object, string][] = [
  ['Pod', one, 'io.svc.api.core.v1.Pod'],
  ['PodList (500)', list, 'io.svc.api.core.v1.PodList'],
];

const bench = new Bench({ name: 'codecs', time: 1000 });
for (const [name, obj, def] of cases) {
  const json = JSON.stringify(obj);
  const p = pb.encode(obj, def);
  const c = cbor.encode(obj, def);
  const x = cborXEnc.encode(obj);
  console.log(`${name}: JSON ${json.length} B, protobuf ${p.length} B, CBOR ${c.length} B, cbor-x ${x.length} B`);
  bench
    .add(`${name}: JSON encode`, () => void JSON.stringify(obj))
    .add(`${name}: JSON decode`, () => void JSON.parse(json))
    .add(`${name}: protobuf encode`, () => void pb.encode(obj, def))
    .add(`${name}: protobuf decode`, () => void pb.decode(p, def))
    .add(`${name}: CBOR encode`, () => void cbor.encode(obj, def))
    .add(`${name}: CBOR decode`, () => void cbor.decode(c, def))
    .add(`${name}: cbor-x encode (baseline)`, () => void cborXEnc.encode(obj))
    .add(`${name}: cbor-x decode (baseline, JS reader)`, () => void cborXDec.decode(x));
}
bench.runSync();
for (const task of bench.tasks) {
  const r = task.result;
  if (r && 'throughput' in r) {
    const ops = r.throughput.mean;
    console.log(`${task.name}: ${Math.round(ops).toLocaleString('en-US')} ops/s (${(1e6 / ops).toFixed(1)} us)`);
  } else console.log(`${task.name}: no result (${r?.state ?? 'not run'})`);
}
