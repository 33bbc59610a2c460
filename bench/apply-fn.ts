/**
 * What server-side apply's merge and ownership cost, in process, for the apply `bench/api.ts`
 * sends: a 1 KB ConfigMap created by one manager and labelled by another's strategic merge patch
 * gets an applied configuration (a label of its own and `data.v`, forced). Each apply starts,
 * as the registry's update loop does, from the stored object parsed again from its text; the
 * figure is CPU per apply() call alone, without that parse (all objects parsed before the
 * calls, one CPU reading around them). Compare revisions with
 * `bun bench/ab-api.ts --script=bench/apply-fn.ts <rev>` (the script is copied into the other tree).
 *
 *   bun bench/apply-fn.ts [--objects=N] [--rounds=N]
 *
 * Prints `apply(): <us> us CPU per apply` once per round, then the median.
 */
import { apply, recordUpdate } from '../src/registry/apply';
import { SchemaSet } from '../src/schema/engine';
import definitions from '../src/schema/generated/definitions.json';
import { overlays } from '../src/schema/overlays';
import type { Definitions } from '../src/schema/types';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const OBJECTS = Number(arg('objects') ?? 20_000);
const ROUNDS = Number(arg('rounds') ?? 9);

// biome-ignore lint/suspicious/noExplicitAny: bench data
type Any = any;
const schemas = new SchemaSet(definitions as unknown as Definitions, overlays);
const base = { apiVersion: 'v1', schemas, defName: 'io.svc.api.core.v1.ConfigMap' };

// The stored texts: created by `curl`, then a label by `kubectl-patch` (as api.ts's phases do).
const texts: string[] = [];
for (let i = 0; i < OBJECTS; i++) {
  const created: Any = {
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: { name: `p-${i}`, namespace: 'default', uid: crypto.randomUUID(), creationTimestamp: '2026-11-29T09:00:00Z' },
    data: { v: 'y'.repeat(900) },
  };
  recordUpdate(undefined, created, { ...base, manager: 'curl', now: '2026-11-29T09:00:00Z' });
  const patched: Any = JSON.parse(JSON.stringify(created));
  patched.metadata.labels = { patched: `yes-${i}` };
  patched.metadata.resourceVersion = String(1000 + i);
  recordUpdate(created, patched, { ...base, manager: 'kubectl-patch', now: '2026-11-29T09:30:00Z' });
  texts.push(JSON.stringify(patched));
}

let kept = 0;
function round(): number {
  // Parsed first, so that the CPU counted is apply()'s alone (one reading around the loop).
  const lives = texts.map((t) => JSON.parse(t));
  const configs = texts.map((_, i) =>
    JSON.parse(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p-${i}","labels":{"applied":"a${i}"}},"data":{"v":"z"}}`),
  );
  const opts = { ...base, manager: 'bench', now: '2026-11-29T10:00:00Z', force: true };
  const t = process.cpuUsage();
  for (let i = 0; i < OBJECTS; i++) kept += apply(lives[i], configs[i], opts).obj.metadata.managedFields?.length ?? 0;
  const d = process.cpuUsage(t);
  return (d.user + d.system) / OBJECTS;
}

round(); // warm up
round();
const results: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const us = round();
  results.push(us);
  console.log(`apply(): ${us.toFixed(1)} us CPU per apply`);
}
results.sort((a, b) => a - b);
if (kept === 0) throw new Error('apply-fn: no managedFields written');
console.log(
  `apply() median: ${(results[Math.floor(ROUNDS / 2)] as number).toFixed(1)} us CPU per apply (${OBJECTS} objects, ${ROUNDS} rounds)`,
);
