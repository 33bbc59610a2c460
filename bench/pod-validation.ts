/**
 * What the Pod's schema pass and validation rules cost, in process, per pod (issue 35's bench
 * companion of bench/pod-create.ts: the rules alone, without the store):
 *
 *   bun bench/pod-validation.ts [--pods=20000]
 *
 * The pod is bench/pod-create.ts's (two containers with probes, resources, ports, env, mounts;
 * volumes; affinity; tolerations; a spread constraint; security contexts). Prints microseconds
 * per pod for normalize (schema: prune, defaults), prepareForCreate, and validate.
 */
import { builtinKinds } from '../src/kinds/builtin';
import { defaulters } from '../src/schema/defaulters';
import { SchemaSet } from '../src/schema/engine';
import definitions from '../src/schema/generated/definitions.json';
import { overlays } from '../src/schema/overlays';
import type { Definitions } from '../src/schema/types';
import { benchPod } from './pod-create';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const N = Number(arg('pods') ?? 20_000);
const schemas = new SchemaSet(definitions as unknown as Definitions, overlays, defaulters);
const pod = builtinKinds(() => true).find((k) => k.kind === 'Pod' && k.group === '');
if (!pod) throw new Error('bug: no Pod kind');
// biome-ignore lint/suspicious/noExplicitAny: the bench object
const objs = Array.from({ length: N }, (_, i) => ({
  ...(benchPod(`p${i}`) as any),
  metadata: { name: `p${i}`, namespace: 'default', labels: { app: 'web' } },
}));
let t = performance.now();
for (const o of objs) schemas.normalize(pod.schema, o, { prune: true, defaults: true });
console.log(`normalize: ${(((performance.now() - t) * 1000) / N).toFixed(1)} us/pod`);
t = performance.now();
for (const o of objs) pod.strategy.prepareForCreate?.(o);
console.log(`prepareForCreate: ${(((performance.now() - t) * 1000) / N).toFixed(1)} us/pod`);
t = performance.now();
let errs = 0;
for (const o of objs) errs += (pod.strategy.validate?.(o) ?? []).length;
console.log(`validate: ${(((performance.now() - t) * 1000) / N).toFixed(1)} us/pod (${errs / N} errors per pod)`);
