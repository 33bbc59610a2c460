/**
 * What the dashboard's JSON endpoints answer, read from the server's own counters and caches at
 * the moment of the request: /metrics' request series, the priority levels of the flow
 * control, the watch caches, the store's figures, the registry. Nothing is recorded for the
 * dashboard between requests: rates and percentiles are differences the browser takes between
 * two reads, so a server no one looks at does no work for it.
 */
import type { Apf } from '../apf';
import { isObject, type Obj } from '../api/meta';
import type { Metrics, StoreFigures } from '../http/metrics';
import type { ApiRegistry } from '../registry/api-registry';
import type { ResourceStore } from '../registry/generic';
import { viewField } from '../watch/events';

export interface StoreView {
  backend: 'embedded' | 'etcd';
  figures(): StoreFigures;
  /** The backend's own statistics (its fields differ per backend). */
  stats(): unknown;
}

export interface SourceDeps {
  api: ApiRegistry;
  metrics: Metrics;
  apf?: Apf;
  store: StoreView;
  version: Record<string, string>;
}

/**
 * One store per stored resource (its versions and group spellings share one storage key prefix);
 * not the virtual ones (reviews, bindings: create only) nor the computed ones (metrics).
 */
function resources(api: ApiRegistry): ResourceStore[] {
  const seen = new Set<string>();
  const out: ResourceStore[] = [];
  for (const s of api.stores) {
    if (s.def.virtual || s.def.computed || seen.has(s.prefix)) continue;
    seen.add(s.prefix);
    out.push(s);
  }
  return out;
}

const resourceName = (s: ResourceStore) => (s.def.group ? `${s.def.plural}.${s.def.group}` : s.def.plural);

export function overview(d: SourceDeps) {
  const f = d.store.figures();
  // The RSS alone: process.memoryUsage() and bun:jsc's heapSize() cost ~0.4 ms each on a
  // server's heap (they measure the heap), more than the rest of this answer.
  const rssBytes = process.memoryUsage.rss();
  const cpu = process.cpuUsage();
  const kinds = resources(d.api).map((s) => ({
    resource: resourceName(s),
    kind: s.def.kind,
    // Only caches something started (controllers, clients) are counted: counting would start the rest.
    objects: s.cache?.started ? s.cache.size() : null,
  }));
  const stats = d.store.stats() as Record<string, unknown>;
  return {
    version: d.version,
    uptimeSeconds: process.uptime(),
    now: Date.now(),
    store: {
      backend: d.store.backend,
      revision: f.revision,
      compactedRevision: f.compacted,
      keys: f.keys,
      walFsyncs: f.walFsyncs,
      walRecords: f.walRecords,
      recordsPerFsync: f.walFsyncs > 0 ? f.walRecords / f.walFsyncs : 0,
      snapshots: typeof stats.snapshots === 'number' ? stats.snapshots : null,
      // Compactions this server made (the compactor every --etcd-compaction-interval, or asked).
      compactions: typeof stats.compactions === 'number' ? stats.compactions : null,
    },
    process: { rssBytes, cpuUserMicros: cpu.user, cpuSystemMicros: cpu.system },
    kinds,
  };
}

export function requests(d: SourceDeps) {
  return { now: Date.now(), ...d.metrics.requestSeries() };
}

export function priorityAndFairness(d: SourceDeps) {
  if (!d.apf) return { enabled: false, levels: [] };
  const fc = d.apf.fc;
  const levels = [...fc.priorityLevels.values()]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((pl) => {
      const t = pl.qs?.totals;
      return {
        name: pl.name,
        exempt: pl.qs === undefined,
        seatLimit: pl.qs ? pl.qs.concurrencyLimit : null,
        nominalSeats: pl.limits.nominal,
        seatsInUse: t ? t.seatsInUse : pl.exemptExecuting,
        executing: t ? t.executing : pl.exemptExecuting,
        waiting: t ? t.waiting : 0,
        queues: pl.qs ? pl.qs.queueList.length : 0,
        activeQueues: pl.qs ? pl.qs.queueList.filter((q) => q.active).length : 0,
        dispatched: pl.dispatched,
        rejected: pl.rejected,
        timedOut: pl.timedOut,
      };
    });
  return { enabled: true, now: Date.now(), flowSchemas: fc.flowSchemas.length, levels };
}

export function watches(d: SourceDeps) {
  const out = [];
  for (const s of resources(d.api)) {
    const c = s.cache;
    if (!c?.started) continue;
    const b = c.backlog();
    out.push({
      resource: resourceName(s),
      watchers: c.watcherCount,
      events: c.eventsApplied,
      revision: c.revision,
      maxQueued: b.maxQueued,
      maxLagRevisions: b.maxLagRevisions,
    });
  }
  return { now: Date.now(), resources: out };
}

/** The resources one may browse (those with a watch cache), for the objects page's selector. */
export function kinds(d: SourceDeps) {
  return {
    kinds: resources(d.api)
      .filter((s) => s.cache !== undefined)
      .map((s) => ({
        group: s.def.group,
        version: s.def.version,
        resource: s.def.plural,
        kind: s.def.kind,
        namespaced: s.def.namespaced,
      }))
      .sort((a, b) => (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.group < b.group ? -1 : 1)),
  };
}

const conditionOf = (o: Obj, type: string): string | undefined => {
  const conds = isObject(o.status) ? o.status.conditions : undefined;
  if (!Array.isArray(conds)) return undefined;
  const c = conds.find((x) => isObject(x) && x.type === type);
  return isObject(c) && typeof c.status === 'string' ? c.status : undefined;
};

/** Nodes (simulated ones marked), ready or not, and the pods bound to each. */
export async function nodes(d: SourceDeps) {
  const ns = d.api.lookup('', 'v1', 'nodes');
  const ps = d.api.lookup('', 'v1', 'pods');
  if (!ns?.cache || !ps?.cache) return { nodes: [] };
  await Promise.all([ns.cache.start(), ps.cache.start()]);
  const podsOn = new Map<string, number>();
  for (const p of ps.cache.list()) {
    // The selector view (spec.nodeName is a selectable field of pods): no parse per pod per read.
    const node = viewField(p.view, 'spec.nodeName');
    if (node) podsOn.set(node, (podsOn.get(node) ?? 0) + 1);
  }
  const list = ns.cache.list().map((c) => {
    const o = c.obj;
    const ann = (o.metadata.annotations ?? {}) as Record<string, string>;
    return {
      name: o.metadata.name as string,
      ready: conditionOf(o, 'Ready') ?? 'Unknown',
      simulated: ann['sim.svc.io/managed'] === 'true',
      heartbeat: ann['sim.svc.io/heartbeat'] === 'stop' ? 'stopped' : 'on',
      pods: podsOn.get(o.metadata.name as string) ?? 0,
    };
  });
  return { now: Date.now(), nodes: list };
}
