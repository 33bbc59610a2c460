/**
 * A steady workload against the server for a long time (issue 42 item 5): `--writers` writers at
 * `--rate` requests/s in all create, merge-patch, server-side apply and delete their own
 * ConfigMaps, Secrets, Services and Deployments (whose pods the controllers run on
 * `--nodes` simulated nodes); a reader LISTs; one watcher per resource (and one on pods) follows
 * the namespace all run long, reconnecting from its last resourceVersion as an informer would.
 * The server's RSS is sampled every few seconds and every answer's latency is kept per window.
 * At the end each watcher must reach a marker written after the last write, and a LIST of each
 * resource must show every acknowledged write. bench/soak-check.ts gives the verdict.
 *
 *   bun bench/soak.ts [--minutes=30 | --seconds=N] [--window=60] [--warmup=1] [--rate=100]
 *                     [--writers=8] [--keys=4] [--nodes=10] [--seed=N]
 *                     [--rss-growth=0.1] [--p99-growth=1.5] [--plant=lost-write|rss|watch|p99]
 *                     [--prune-events | --event-ttl=5m]
 *
 * Prints a table per window (requests, p50, p99, errors, RSS, watch events, the Events, Pods and
 * ReplicaSets stored: the Events grow for the server's event TTL, 1 h unless `--event-ttl`
 * is given, or all run long unless `--prune-events` deletes them every window) and the verdict;
 * exits 1 when a target is missed. `--plant` spoils the record before the verdict (for the test
 * that the verdict catches it).
 */
import { rng } from '../test/helpers/rng';
import { type Server, startServer } from '../test/helpers/server';
import { watchLines } from '../test/helpers/watch';
import { rssMiB } from './harness';
import {
  DEFAULT_TARGETS,
  judgeSoak,
  quantile,
  type SoakAck,
  type SoakEvent,
  type SoakOp,
  type SoakRecord,
  type SoakTargets,
  type SoakVerdict,
  type SoakWindow,
} from './soak-check';

export interface SoakOptions {
  seconds: number;
  windowSeconds: number;
  rate: number;
  writers: number;
  keys: number;
  nodes: number;
  seed: number;
  targets: SoakTargets;
  plant?: Plant;
  /**
   * Delete the namespace's Events once a window. The server keeps Events until deleted (no
   * `--event-ttl`; the reference expires them after 1 h and keeps no watch cache of them), so
   * without this the RSS grows with the ~60 Events/s the controllers record at 100 writes/s.
   */
  pruneEvents?: boolean;
  /** The server's --event-ttl (the reference's way Events go; its default is 1 h). */
  eventTtl?: string;
  log: (line: string) => void;
}

export type Plant = 'lost-write' | 'rss' | 'watch' | 'p99';

const NS = 'soak';
const ANN = 'soak.svc.io/v';

type Resource = 'configmaps' | 'secrets' | 'services' | 'deployments';
const RESOURCES: Resource[] = ['configmaps', 'secrets', 'services', 'deployments'];
/** How often a writer picks each resource (Deployments cost pods: fewer). */
const WEIGHTS: Record<Resource, number> = { configmaps: 0.35, secrets: 0.25, services: 0.2, deployments: 0.2 };

const collection = (r: Resource | 'pods') =>
  r === 'deployments' ? `/apis/apps/v1/namespaces/${NS}/${r}` : `/api/v1/namespaces/${NS}/${r}`;

/** The whole object for a create or an apply: `value` in an annotation every kind carries. */
function manifest(r: Resource, name: string, value: string, n: number): Record<string, unknown> {
  const metadata = { name, annotations: { [ANN]: value } };
  switch (r) {
    case 'configmaps':
      return { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { v: value } };
    case 'secrets':
      return { apiVersion: 'v1', kind: 'Secret', metadata, data: { v: Buffer.from(value).toString('base64') } };
    case 'services':
      return { apiVersion: 'v1', kind: 'Service', metadata, spec: { selector: { app: name }, ports: [{ port: 80, targetPort: 8080 }] } };
    case 'deployments':
      return {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata,
        spec: {
          replicas: n % 3,
          selector: { matchLabels: { app: name } },
          template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.9' }] } },
        },
      };
  }
}

/** The resource a draw in [0, 1) picks, by WEIGHTS. */
function pickResource(x: number): Resource {
  let left = x;
  for (const r of RESOURCES) {
    left -= WEIGHTS[r];
    if (left < 0) return r;
  }
  return 'configmaps';
}

/** Per-window figures, filled as answers come. */
class Windows {
  readonly list: SoakWindow[] = [];
  constructor(
    private readonly t0: number,
    private readonly windowMs: number,
  ) {}
  at(now = performance.now()): SoakWindow {
    const index = Math.floor((now - this.t0) / this.windowMs);
    for (let i = this.list.length; i <= index; i++) this.list.push({ index: i, rssMiB: [], latenciesMs: [], errors: 0, watchEvents: 0 });
    return this.list[index] as SoakWindow;
  }
}

interface Ctx {
  srv: Server;
  win: Windows;
  problems: string[];
}

/** The fields of an answer the soak reads. */
type Answer = {
  status: number;
  body: { message?: string; metadata?: { resourceVersion?: string; annotations?: Record<string, string> } } | string;
};

/** A request timed into its window; 429 (APF) retried as a client would; any other non-2xx is an error. */
async function call(c: Ctx, method: string, p: string, body?: unknown, headers?: Record<string, string>): Promise<Answer | undefined> {
  for (let attempt = 0; ; attempt++) {
    const t = performance.now();
    let res: Answer;
    try {
      res = await c.srv.json(method, p, body, headers);
    } catch (e) {
      res = { status: 0, body: (e as Error).message };
    }
    const now = performance.now();
    const w = c.win.at(now);
    w.latenciesMs.push(now - t);
    if (res.status === 429 && attempt < 50) {
      await Bun.sleep(20);
      continue;
    }
    if (res.status >= 200 && res.status < 300) return res;
    w.errors++;
    if (c.problems.length < 20)
      c.problems.push(`${method} ${p}: ${res.status} ${typeof res.body === 'string' ? res.body : (res.body?.message ?? '')}`.slice(0, 300));
    return undefined;
  }
}

/** One writer: its own keys of every resource, one request at a time, one every `intervalMs`. */
async function writer(c: Ctx, id: number, o: SoakOptions, stop: () => boolean, acks: SoakAck[]): Promise<void> {
  const random = rng(o.seed * 1000 + id);
  const known = new Map<string, number>(); // key -> resourceVersion last answered
  const intervalMs = (1000 * o.writers) / o.rate;
  let next = performance.now() + random() * intervalMs;
  let n = 0;
  while (!stop()) {
    const wait = next - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    next = Math.max(next + intervalMs, performance.now() - intervalMs); // steady: no burst to catch up
    if (stop()) return;
    const r = pickResource(random());
    const name = `w${id}-k${Math.floor(random() * o.keys)}`;
    const key = `${r}/${name}`;
    const rv = known.get(key);
    const value = `${id}-${++n}`;
    const p = random();
    const op: SoakOp = rv === undefined ? (p < 0.6 ? 'create' : 'apply') : p < 0.4 ? 'patch' : p < 0.75 ? 'apply' : 'delete';
    let res: Answer | undefined;
    const item = `${collection(r)}/${name}`;
    if (op === 'create') res = await call(c, 'POST', collection(r), manifest(r, name, value, n));
    else if (op === 'apply')
      res = await call(c, 'PATCH', `${item}?fieldManager=soak&force=true`, manifest(r, name, value, n), {
        'content-type': 'application/apply-patch+yaml',
      });
    else if (op === 'patch') {
      const patch: Record<string, unknown> = { metadata: { annotations: { [ANN]: value } } };
      if (r === 'deployments') patch.spec = { replicas: n % 3 };
      res = await call(c, 'PATCH', item, patch, { 'content-type': 'application/merge-patch+json' });
    } else res = await call(c, 'DELETE', item);
    if (!res) {
      // Not acknowledged: learn where the key is now, so the next write is well formed.
      const got = await c.srv.json('GET', item).catch(() => undefined);
      if (got?.status === 200) known.set(key, Number(got.body.metadata.resourceVersion));
      else known.delete(key);
      continue;
    }
    if (op === 'delete') {
      acks.push({ key, op, rv: rv ?? 0 });
      known.delete(key);
    } else {
      const meta = typeof res.body === 'string' ? undefined : res.body.metadata;
      const got = Number(meta?.resourceVersion);
      acks.push({ key, op, rv: got, value: meta?.annotations?.[ANN] });
      known.set(key, got);
    }
  }
}

/** A reader: LISTs of a resource, a tenth of the write rate. */
async function reader(c: Ctx, o: SoakOptions, stop: () => boolean): Promise<void> {
  const intervalMs = 10_000 / o.rate;
  for (let i = 0; !stop(); i++) {
    await call(c, 'GET', `${collection(RESOURCES[i % RESOURCES.length] as Resource)}?limit=100`);
    await Bun.sleep(intervalMs);
  }
}

/** The count of a namespaced collection without listing it: a page of 1 and the remaining count. */
async function count(srv: Server, p: string): Promise<number> {
  const r = await srv.json('GET', `${p}?limit=1`).catch(() => undefined);
  const b = r && typeof r.body === 'object' ? r.body : undefined;
  return (b?.items?.length ?? 0) + (b?.metadata?.remainingItemCount ?? 0);
}

/** What the run's namespace holds, into the current window, until stopped: the data behind the RSS. */
async function counter(c: Ctx, everyMs: number, stop: () => boolean, pruneEveryMs?: number): Promise<void> {
  let pruned = performance.now();
  while (!stop()) {
    if (pruneEveryMs !== undefined && performance.now() - pruned >= pruneEveryMs) {
      pruned = performance.now();
      const r = await c.srv.json('DELETE', `/api/v1/namespaces/${NS}/events`).catch(() => undefined);
      if (r?.status !== 200 && c.problems.length < 20) c.problems.push(`pruning Events: ${r?.status}`);
    }
    const stored: Record<string, number> = {};
    for (const [name, p] of [
      ['events', `/api/v1/namespaces/${NS}/events`],
      ['pods', collection('pods')],
      ['replicasets', `/apis/apps/v1/namespaces/${NS}/replicasets`],
    ] as const)
      stored[name] = await count(c.srv, p);
    c.win.at().stored = stored;
    await Bun.sleep(everyMs);
  }
}

/** A watcher of one resource from `fromRv`, reconnecting from where it got to until stopped. */
function watcher(c: Ctx, r: Resource | 'pods', fromRv: number) {
  const events: SoakEvent[] = [];
  let reached = fromRv;
  let stopped = false;
  const ac = new AbortController();
  const done = (async () => {
    while (!stopped) {
      try {
        const res = await c.srv.fetch(`${collection(r)}?watch=true&resourceVersion=${reached}&allowWatchBookmarks=true`, {
          signal: ac.signal,
        });
        for await (const e of watchLines(res.body as ReadableStream<Uint8Array>)) {
          const rv = Number(e.object?.metadata?.resourceVersion ?? 0);
          if (e.type === 'ERROR') {
            c.problems.push(`${r} watcher: ERROR ${e.object?.code} ${e.object?.message} (from rv=${reached})`);
            stopped = true;
          } else if (e.type === 'BOOKMARK') reached = Math.max(reached, rv);
          else {
            if (r !== 'pods')
              events.push({
                type: e.type as 'ADDED' | 'MODIFIED' | 'DELETED',
                key: `${r}/${e.object.metadata.name}`,
                rv,
                value: e.object.metadata.annotations?.[ANN],
              });
            c.win.at().watchEvents++;
            reached = Math.max(reached, rv);
          }
        }
      } catch {
        // aborted (stopped) or cut: reconnect from `reached`
      }
      if (!stopped) await Bun.sleep(100);
    }
  })();
  return {
    resource: r,
    events,
    reached: () => reached,
    stop: async () => {
      stopped = true;
      ac.abort();
      await done;
    },
  };
}

/** Spoil a real record the way a server bug would, for the test that the verdict sees it. */
export function plant(rec: SoakRecord, what: Plant): void {
  if (what === 'lost-write') {
    // A key whose last acknowledged write is not a delete loses it; when every key ends deleted
    // (a short run over few keys can), an acknowledged create of a key never stored is added.
    const last = new Map<string, SoakAck>();
    for (const a of rec.acks) last.set(a.key, a);
    const a = [...last.values()].reverse().find((x) => x.op !== 'delete');
    if (a) rec.final.delete(a.key);
    else rec.acks.push({ key: 'configmaps/planted-lost-write', op: 'create', rv: 1, value: 'planted' });
  } else if (what === 'watch') {
    const w = rec.watchers.find((x) => x.events.length > 0);
    w?.events.splice(Math.floor(w.events.length / 2), 1);
  } else if (what === 'rss') {
    const last = rec.windows[rec.windows.length - 1];
    if (last) last.rssMiB = last.rssMiB.map((m) => Math.round(m * 1.2));
  } else {
    const last = rec.windows[rec.windows.length - 1];
    // Ten times its own latencies; ten times the run's longest if it has none (a short run's
    // last window can end before any write in it is answered).
    const longest = rec.windows.reduce((m, w) => w.latenciesMs.reduce((a, l) => Math.max(a, l), m), 1);
    if (last) last.latenciesMs.push(...(last.latenciesMs.length > 0 ? last.latenciesMs : [longest]).map((l) => l * 10));
  }
}

export async function runSoak(o: SoakOptions): Promise<{ record: SoakRecord; verdict: SoakVerdict }> {
  const srv = await startServer({ args: [`--simulated-nodes=${o.nodes}`, ...(o.eventTtl ? [`--event-ttl=${o.eventTtl}`] : [])] });
  const problems: string[] = [];
  try {
    await srv.json('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    const startRv = Number((await srv.json('GET', collection('configmaps'))).body.metadata.resourceVersion);
    const t0 = performance.now();
    const c: Ctx = { srv, win: new Windows(t0, o.windowSeconds * 1000), problems };
    const watchers = [...RESOURCES, 'pods' as const].map((r) => watcher(c, r, startRv));
    const endAt = t0 + o.seconds * 1000;
    const stop = () => performance.now() >= endAt;
    const sampleMs = Math.max(250, (o.windowSeconds * 1000) / 20);
    const sampler = setInterval(() => {
      if (srv.proc.exitCode === null) c.win.at().rssMiB.push(rssMiB(srv.proc.pid));
    }, sampleMs);
    const acksPer = Array.from({ length: o.writers }, () => [] as SoakAck[]);
    let shown = 0;
    const progress = setInterval(() => {
      const done = c.win.list.length - 1;
      for (; shown < done; shown++) o.log(row(c.win.list[shown] as SoakWindow, o.windowSeconds));
    }, 1000);
    await Promise.all([
      ...acksPer.map((a, i) => writer(c, i, o, stop, a)),
      reader(c, o, stop),
      counter(c, Math.max(1000, (o.windowSeconds * 1000) / 4), stop, o.pruneEvents ? o.windowSeconds * 1000 : undefined),
    ]);
    clearInterval(sampler);
    clearInterval(progress);
    const windows = c.win.list.filter((w) => w.index * o.windowSeconds < o.seconds);
    for (; shown < windows.length; shown++) o.log(row(windows[shown] as SoakWindow, o.windowSeconds));
    // A marker per resource after the last write: each watcher must get to it.
    const markers = new Map<string, number>();
    for (const r of RESOURCES) {
      const res = await srv.json('POST', collection(r), { ...manifest(r, `end-${Date.now()}`, 'end', 0) });
      markers.set(r, Number(res.body.metadata?.resourceVersion));
    }
    const deadline = Date.now() + 30_000;
    while (watchers.some((w) => w.resource !== 'pods' && w.reached() < (markers.get(w.resource) ?? 0)) && Date.now() < deadline)
      await Bun.sleep(50);
    for (const w of watchers)
      if (w.resource !== 'pods' && w.reached() < (markers.get(w.resource) ?? 0))
        problems.push(`${w.resource} watcher: reached rv=${w.reached()}, not the end marker's rv=${markers.get(w.resource)}`);
    await Promise.all(watchers.map((w) => w.stop()));
    const final = new Map<string, { rv: number; value?: string }>();
    for (const r of RESOURCES) {
      const l = await srv.json('GET', collection(r));
      for (const i of l.body.items ?? [])
        if (i.metadata.name.startsWith('w'))
          final.set(`${r}/${i.metadata.name}`, { rv: Number(i.metadata.resourceVersion), value: i.metadata.annotations?.[ANN] });
    }
    if (srv.proc.exitCode !== null) problems.push(`the server exited (${srv.proc.exitCode})`);
    const record: SoakRecord = {
      windows,
      acks: acksPer.flat(),
      final,
      watchers: watchers
        .filter((w) => w.resource !== 'pods')
        .map((w) => ({ resource: w.resource, events: w.events, reachedRv: w.reached() })),
      runProblems: problems,
    };
    if (o.plant) plant(record, o.plant);
    return { record, verdict: judgeSoak(record, o.targets) };
  } finally {
    await srv.stop();
  }
}

export const HEADER = `${'window'.padStart(6)} ${'requests'.padStart(9)} ${'req/s'.padStart(7)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'errors'.padStart(7)} ${'RSS MiB'.padStart(8)} ${'watch ev'.padStart(9)}  stored (events/pods/replicasets)`;

export function row(w: SoakWindow, windowSeconds: number): string {
  return [
    String(w.index).padStart(6),
    String(w.latenciesMs.length).padStart(9),
    (w.latenciesMs.length / windowSeconds).toFixed(1).padStart(7),
    quantile(w.latenciesMs, 0.5).toFixed(2).padStart(8),
    quantile(w.latenciesMs, 0.99).toFixed(2).padStart(8),
    String(w.errors).padStart(7),
    String(quantile(w.rssMiB, 0.5)).padStart(8),
    String(w.watchEvents).padStart(9),
    ` ${w.stored ? `${w.stored.events}/${w.stored.pods}/${w.stored.replicasets}` : '-'}`,
  ].join(' ');
}

if (import.meta.main) {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const num = (name: string, d: number) => Number(arg(name) ?? d);
  const seconds = arg('seconds') !== undefined ? num('seconds', 60) : num('minutes', 30) * 60;
  const seed = num('seed', Date.now() % 1_000_000);
  const o: SoakOptions = {
    seconds,
    windowSeconds: num('window', 60),
    rate: num('rate', 100),
    writers: num('writers', 8),
    keys: num('keys', 4),
    nodes: num('nodes', 10),
    seed,
    targets: {
      ...DEFAULT_TARGETS,
      warmupWindows: num('warmup', DEFAULT_TARGETS.warmupWindows),
      rssGrowth: num('rss-growth', DEFAULT_TARGETS.rssGrowth),
      p99Growth: num('p99-growth', DEFAULT_TARGETS.p99Growth),
    },
    plant: arg('plant') as Plant | undefined,
    pruneEvents: process.argv.includes('--prune-events'),
    eventTtl: arg('event-ttl'),
    log: (l) => console.log(l),
  };
  console.log(
    `soak: ${seconds} s, ${o.rate} writes/s by ${o.writers} writers, ${o.nodes} simulated nodes, seed ${seed}${o.pruneEvents ? ', Events deleted every window' : ''}${o.eventTtl ? `, server --event-ttl=${o.eventTtl}` : ''}`,
  );
  console.log(HEADER);
  const { record, verdict } = await runSoak(o);
  const v = verdict;
  console.log(
    `${record.acks.length} acknowledged writes, ${record.final.size} objects at the end, watchers saw ${record.watchers.map((w) => `${w.resource} ${w.events.length}`).join(', ')}`,
  );
  console.log(
    `RSS ${v.rss.firstMiB} -> ${v.rss.lastMiB} MiB (${(v.rss.growth * 100).toFixed(1)}%, target <= ${o.targets.rssGrowth * 100}%); p99 first ${v.p99.firstMs.toFixed(2)} ms, last ${v.p99.lastMs.toFixed(2)} ms`,
  );
  console.log(v.ok ? 'verdict: ok' : `verdict: FAILED (seed ${seed})`);
  for (const p of v.problems) console.log(`  ${p}`);
  process.exit(v.ok ? 0 : 1);
}
