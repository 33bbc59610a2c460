/**
 * Protobuf codec benchmark: encode and decode of the reference Pod fixture (every field
 * populated; ≈13.5 KB of protobuf, ≈32 KB of compact JSON) against JSON.stringify / JSON.parse of the
 * same object, and of a typical small Pod and a 500-item PodList.
 *
 *     bun bench/protobuf.ts
 *
 * Without ../shared/reference the fixture tasks use a small built-in Pod.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Bench } from 'tinybench';
import { ProtobufCodec } from '../src/codec/protobuf';
import { SchemaSet } from '../src/schema/engine';
import generated from '../src/schema/generated/definitions.json';
import { overlays } from '../src/schema/overlays';
import type { Definitions } from '../src/schema/types';

const FIXTURE = path.resolve(import.meta.dir, '../../shared/reference/fixtures/core.v1.Pod.json');
const POD = 'io.svc.api.core.v1.Pod';
const POD_LIST = 'io.svc.api.core.v1.PodList';

const small = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web-5d8f7c9b4-x2x7q',
    namespace: 'default',
    uid: '2b0f7d2e-4c55-4a53-9d6c-8f3c1c2b9a10',
    resourceVersion: '12345',
    creationTimestamp: '2024-05-01T10:00:00Z',
    labels: { app: 'web', 'pod-template-hash': '5d8f7c9b4' },
  },
  spec: {
    containers: [{ name: 'web', image: 'nginx:1.25', ports: [{ containerPort: 80, protocol: 'TCP' }], resources: {} }],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    dnsPolicy: 'ClusterFirst',
    nodeName: 'node-1',
  },
  status: { phase: 'Running', podIP: '10.0.0.12', startTime: '2024-05-01T10:00:01Z' },
};

let full: object;
if (fs.existsSync(FIXTURE)) full = JSON.parse(fs.readFileSync(FIXTURE, 'utf8'));
else {
  console.warn(`reference fixture not found at ${FIXTURE}; using a small built-in Pod`);
  full = small;
}

const codec = new ProtobufCodec(new SchemaSet(generated as unknown as Definitions, overlays));
const list = {
  apiVersion: 'v1',
  kind: 'PodList',
  metadata: { resourceVersion: '99' },
  items: Array.from({ length: 500 }, (_, i) => ({ ...small, metadata: { ...small.metadata, name: `web-${i}` } })),
};

const cases: [string, object, string][] = [
  ['fixture Pod', full, POD],
  ['small Pod', small, POD],
  ['PodList (500 small Pods)', list, POD_LIST],
];

const bench = new Bench({ name: 'protobuf', time: 1000 });
for (const [name, obj, def] of cases) {
  const pb = codec.encode(obj, def);
  const json = JSON.stringify(obj);
  console.log(`${name}: protobuf ${pb.length} bytes, JSON ${json.length} bytes`);
  bench
    .add(`${name}: protobuf encode`, () => {
      codec.encode(obj, def);
    })
    .add(`${name}: JSON.stringify`, () => {
      JSON.stringify(obj);
    })
    .add(`${name}: protobuf decode`, () => {
      codec.decode(pb, def);
    })
    .add(`${name}: JSON.parse`, () => {
      JSON.parse(json);
    });
}
bench.runSync();

for (const task of bench.tasks) {
  const r = task.result;
  if (r && 'throughput' in r) console.log(`${task.name}: ${Math.round(r.throughput.mean).toLocaleString('en-US')} ops/s`);
  else console.log(`${task.name}: no result (${r?.state ?? 'not run'})`);
}
