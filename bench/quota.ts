/**
 * What LimitRange and ResourceQuota admission add to a pod create, in process (issue 16 bench,
 * the steadier companion of bench/admission.ts): the registry on an in-memory store, the server's
 * pod admission chain (LimitRanger, ResourceQuota), 64 creates in flight, alternating phases of
 * creates into a namespace with a LimitRange (defaults, max, ratio) and a ResourceQuota (pods,
 * requests.cpu, limits.memory; never full) and into one with neither, the same pod object (it
 * states its resources, so LimitRanger checks and defaults nothing); CPU of the process per create
 * (process.cpuUsage: all threads), no HTTP, no TLS, no load generator on the machine.
 *
 *   bun bench/quota.ts [--rounds=N] [--creates=N] [--only=with|plain]
 */

import { LimitRanger } from '../src/admission/limit-ranger';
import { QuotaAdmission } from '../src/admission/quota';
import type { Obj } from '../src/api/meta';
import { decodeStored } from '../src/codec/stored';
import { builtinKinds } from '../src/kinds/builtin';
import { AdmissionChain } from '../src/registry/admission';
import { ApiRegistry } from '../src/registry/api-registry';
import type { ResourceStore } from '../src/registry/generic';
import type { WriteOptions } from '../src/registry/options';
import { defaulters } from '../src/schema/defaulters';
import { SchemaSet } from '../src/schema/engine';
import definitions from '../src/schema/generated/definitions.json';
import { overlays } from '../src/schema/overlays';
import type { Definitions } from '../src/schema/types';
import { MvccStore } from '../src/store/mvcc';
import { prefixEnd } from '../src/store/types';
import { BENCH_LIMIT_RANGE_SPEC } from './fixtures';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const ROUNDS = Number(arg('rounds') ?? 5);
const CREATES = Number(arg('creates') ?? 20_000);
const INFLIGHT = 64;
/** Run only one of the two phases (for a CPU profile of it): `with` or `plain`. */
const ONLY = arg('only');

const kv = await MvccStore.open({});
// The namespace's LimitRanges and quotas as the server's watch cache gives them (here: read from the store once, below).
let cachedQuotas: Obj[] = [];
let cachedLimits: Obj[] = [];
const api = new ApiRegistry({
  kv,
  // With the server's defaulters (a pod's imagePullPolicy and the rest its validation requires).
  schemas: new SchemaSet(definitions as unknown as Definitions, overlays, defaulters),
  kinds: builtinKinds(() => true),
  admission: (resources) => {
    const quota = new QuotaAdmission(
      () => resources.lookup('', 'v1', 'resourcequotas') as ResourceStore,
      (ns) => (ns === 'with' ? cachedQuotas : []),
    );
    const limitRanger = new LimitRanger(async (ns) => (ns === 'with' ? cachedLimits : []));
    return (def) => (def.group === '' && def.plural === 'pods' ? new AdmissionChain([limitRanger, quota]) : undefined);
  },
});
const pods = api.lookup('', 'v1', 'pods') as ResourceStore;
const quotas = api.lookup('', 'v1', 'resourcequotas') as ResourceStore;
const nss = api.lookup('', 'v1', 'namespaces') as ResourceStore;
const w = (): WriteOptions => ({ dryRun: false, fieldValidation: 'Strict', warnings: [], fieldManager: 'bench' });

const lrs = api.lookup('', 'v1', 'limitranges') as ResourceStore;
for (const ns of ['with', 'plain']) await nss.create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, w());
const hard = { pods: '100000000', 'requests.cpu': '100000000', 'limits.memory': '100000Ti' };
await lrs.create(
  'with',
  {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name: 'limits' },
    spec: BENCH_LIMIT_RANGE_SPEC,
  },
  w(),
);
await quotas.create('with', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'quota' }, spec: { hard } }, w());
// The controller's first status (used 0), as it writes it.
const q0 = decodeStored(await quotas.get('with', 'quota'));
await quotas.update(
  'with',
  'quota',
  { ...q0, status: { hard, used: { pods: '0', 'requests.cpu': '0', 'limits.memory': '0' } } },
  { ...w(), fieldManager: 'resourcequota-controller' },
  'status',
);
const listed = async (store: ResourceStore, ns: string): Promise<Obj[]> =>
  (await store.list(ns, { resourceVersion: '', limit: 0, continueToken: '', resourceVersionMatch: '' } as never)).items.map((i) => i.obj);
cachedQuotas = await listed(quotas, 'with');
cachedLimits = await listed(lrs, 'with');

const pod = (name: string): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: {
    containers: [
      {
        name: 'web',
        image: 'nginx:1.25',
        resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '256Mi' } },
      },
    ],
  },
});

let n = 0;
let lastWrites = 0;
async function phase(ns: string, count: number): Promise<number> {
  const rev0 = kv.currentRevision();
  const before = process.cpuUsage();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      await pods.create(ns, pod(`p-${n++}`), w());
    }
  };
  await Promise.all(Array.from({ length: INFLIGHT }, worker));
  const cpu = process.cpuUsage(before);
  // Every revision is a pod or a quota status write.
  lastWrites = kv.currentRevision() - rev0 - count;
  // The pods go again (not measured), so every phase starts from the same heap: otherwise the
  // growing heap's major collections land on whichever phase runs into them.
  const prefix = (pods as unknown as { prefix: string }).prefix;
  await kv.txn({ success: [{ op: 'delete', key: prefix, end: prefixEnd(prefix) }] });
  await kv.compact(kv.currentRevision());
  Bun.gc(true);
  return (cpu.user + cpu.system) / count;
}

// Warm-up (not counted): long enough for the admission paths to reach the optimizing JIT tiers
// (with 2,000 creates each, the first measured phase with admission was still ~20 us slower).
await phase('plain', CREATES / 2);
await phase('with', CREATES / 2);
const results: Record<string, number[]> = { with: [], plain: [] };
for (let r = 0; r < ROUNDS; r++) {
  for (const ns of r % 2 ? ['plain', 'with'] : ['with', 'plain']) {
    if (ONLY && ns !== ONLY) continue;
    const us = await phase(ns, CREATES);
    results[ns]?.push(us);
    const batches = ns === 'with' ? `, ${lastWrites} quota writes (${(CREATES / Math.max(1, lastWrites)).toFixed(1)} creates each)` : '';
    console.log(`round ${r + 1} ${ns}: ${us.toFixed(1)} us CPU per create${batches}`);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
if (ONLY) process.exit(0);
const a = median(results.with as number[]);
const b = median(results.plain as number[]);
const used = decodeStored(await quotas.get('with', 'quota')).status as { used: Record<string, string> };
console.log(
  `median CPU per create: with the LimitRange and the quota ${a.toFixed(1)} us, without ${b.toFixed(1)} us: they add ${(a - b).toFixed(1)} us (used.pods ${used.used.pods})`,
);
await kv.close();
