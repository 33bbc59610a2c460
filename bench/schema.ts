/**
 * Schema engine benchmark: `SchemaSet.normalize` on the reference Pod fixture (≈61 KB of JSON,
 * every field populated), the work every Pod write does.
 *
 *     bun bench/schema.ts
 *
 * Tasks: normalize with prune only (no change to the object, so it is reused), normalize with
 * prune + defaults on a fresh copy (JSON.parse included; the parse alone is measured too, to
 * subtract). Without ../shared/reference a small built-in Pod is used.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Bench } from 'tinybench';
import { SchemaSet } from '../src/schema/engine';
import generated from '../src/schema/generated/definitions.json';
import { overlays } from '../src/schema/overlays';
import type { Definitions } from '../src/schema/types';

const FIXTURE = path.resolve(import.meta.dir, '../../shared/reference/fixtures/core.v1.Pod.json');
const SMALL_POD = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
  spec: { containers: [{ name: 'web', image: 'nginx:1.25', ports: [{ containerPort: 80 }] }] },
};

let text: string;
if (fs.existsSync(FIXTURE)) {
  text = fs.readFileSync(FIXTURE, 'utf8');
} else {
  console.warn(`reference fixture not found at ${FIXTURE}; using a small built-in Pod`);
  text = JSON.stringify(SMALL_POD);
}

const set = new SchemaSet(generated as unknown as Definitions, overlays);
const POD = 'io.svc.api.core.v1.Pod';
const reused = JSON.parse(text);
const check = set.normalize(POD, reused, { prune: true, defaults: false });
if (check.unknown.length > 0 || check.typeErrors.length > 0)
  throw new Error(`fixture does not normalize cleanly: ${JSON.stringify(check)}`);

const bench = new Bench({ name: 'schema', time: 1000 });
bench
  .add('normalize Pod (prune)', () => {
    set.normalize(POD, reused, { prune: true, defaults: false });
  })
  .add('JSON.parse Pod', () => {
    JSON.parse(text);
  })
  .add('JSON.parse + normalize Pod (prune, defaults)', () => {
    set.normalize(POD, JSON.parse(text), { prune: true, defaults: true });
  });
bench.runSync();

console.log(`Pod JSON: ${text.length} bytes`);
for (const task of bench.tasks) {
  const r = task.result;
  if (r && 'throughput' in r) console.log(`${task.name}: ${Math.round(r.throughput.mean).toLocaleString('en-US')} ops/s`);
  else console.log(`${task.name}: no result (${r?.state ?? 'not run'})`);
}
