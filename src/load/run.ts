/** Runs a scenario's phases against a target, sampling the time series the report plots. */
import { type Client, informer, TokenBucket } from './client';
import { type CrdInfo, crManifest, crPath, installCrd } from './crd';
import { type LeaseStats, LeaseTraffic } from './leases';
import { allPath, collectionPath, type Kind, LABEL, manifest, nsName } from './objects';
import { PodTracker, percentile } from './pods';
import type { Phase, Scenario } from './scenario';

export interface Sample {
  t: number;
  requests: number;
  p50: number;
  p99: number;
  podsReady: number;
  /** the server's CPU (fraction of one core) and RSS (bytes), when known */
  cpu?: number;
  rss?: number;
  /** the harness's own CPU (fraction of one core) */
  harnessCpu: number;
}

export interface RunResult {
  started: string;
  durationMs: number;
  phases: { name: string; startMs: number; endMs: number; objects: number; error?: string }[];
  series: Sample[];
  tracker: PodTracker;
  watchers: { count: number; events: number };
  faultsApplied: number;
  /** node lease traffic, summed over the lease phases (absent when there was none) */
  leases?: LeaseStats;
  /** custom resources per CRD name (objects created by the run) */
  customResources: Record<string, number>;
}

export interface RunOptions {
  client: Client;
  runId: string;
  /** local server pid sampler (CPU fraction of a core, RSS bytes) */
  sampleProc?: () => Promise<{ cpu: number; rss: number } | undefined>;
  /** create simulated Nodes (annotated sim.svc.io/managed) on an external target */
  createNodes: boolean;
  /** delete the namespaces the run made when it ends (outside the measured phases) */
  cleanup: boolean;
  log: (line: string, transient?: boolean) => void;
  /** at most this many requests in flight from creates/deletes */
  inflight: number;
  /** each sample (about every second), with the run's progress (0..1): the dashboard's live figures */
  onSample?: (progress: number, figures: Record<string, number | undefined>) => void;
}

/** Run `n` tasks at `qps` per second (0: no pacing) with at most `inflight` running. */
async function paced(n: number, qps: number, inflight: number, task: (i: number) => Promise<void>, onDone: () => void): Promise<void> {
  const start = performance.now();
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= n) return;
      if (qps > 0) {
        const due = start + (i * 1000) / qps;
        const wait = due - performance.now();
        if (wait > 0) await Bun.sleep(wait);
      }
      await task(i);
      onDone();
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, Math.max(1, inflight)) }, worker));
}

export async function runScenario(sc: Scenario, o: RunOptions): Promise<RunResult> {
  const { client } = o;
  const t0 = client.now();
  const tracker = new PodTracker(client, o.runId);
  const created = new Map<string, string[]>(); // kind → object paths
  const phases: RunResult['phases'] = [];
  const series: Sample[] = [];
  const watchAbort = new AbortController();
  const watchers = { count: 0, events: 0 };
  let faultsApplied = 0;
  const crds = new Map<string, CrdInfo>(); // kind → CRD, for later delete and churn phases
  const crdsCreated: string[] = [];
  const customResources: Record<string, number> = {};
  const leaseTraffic: LeaseTraffic[] = [];
  let current = { name: 'setup', done: 0, total: 0, start: client.now() };
  /** phases finished, for the progress the dashboard shows */
  let phasesDone = 0;
  let lastSample = 0;
  let lastT = client.now();
  let lastCpu = process.cpuUsage();
  let sampling = false;
  const tick = async () => {
    if (sampling) return;
    sampling = true;
    const p = await o.sampleProc?.().catch(() => undefined);
    sampling = false;
    const now = client.now();
    const win = client.samples.slice(lastSample);
    lastSample = client.samples.length;
    const ms = win.map((s) => s.ms).sort((a, b) => a - b);
    const used = process.cpuUsage(lastCpu);
    lastCpu = process.cpuUsage();
    const harnessCpu = (used.user + used.system) / 1000 / Math.max(1, now - lastT);
    series.push({
      harnessCpu,
      t: now / 1000,
      requests: (win.length * 1000) / Math.max(1, now - lastT),
      p50: percentile(ms, 0.5),
      p99: percentile(ms, 0.99),
      podsReady: tracker.readyNow,
      cpu: p?.cpu,
      rss: p?.rss,
    });
    lastT = now;
    const s = series.at(-1)!;
    const inPhase = current.total > 0 ? Math.min(1, current.done / current.total) : 0;
    o.onSample?.(sc.phases.length > 0 ? Math.min(1, (phasesDone + inPhase) / sc.phases.length) : 1, {
      'requests/s': s.requests,
      'API p50 ms': s.p50,
      'API p99 ms': s.p99,
      'pods created': tracker.pods.size,
      'pods ready': s.podsReady,
      'server CPU %': s.cpu === undefined ? undefined : s.cpu * 100,
      'server RSS MiB': s.rss === undefined ? undefined : s.rss / 2 ** 20,
      'harness CPU %': s.harnessCpu * 100,
    });
    const el = (now - current.start) / 1000;
    const rate = el > 0 ? current.done / el : 0;
    const eta = rate > 0 && current.total > current.done ? ` eta ${Math.ceil((current.total - current.done) / rate)}s` : '';
    o.log(
      `[${(now / 1000).toFixed(0)}s] ${current.name}: ${current.done}/${current.total} (${rate.toFixed(1)}/s${eta}) pods ready ${tracker.readyNow} req/s ${series.at(-1)!.requests.toFixed(0)}${p ? ` server cpu ${(p.cpu * 100).toFixed(0)}% rss ${(p.rss / 2 ** 20).toFixed(0)}MiB` : ''} harness cpu ${(harnessCpu * 100).toFixed(0)}%`,
      true,
    );
  };
  const timer = setInterval(tick, 1000);

  if (o.createNodes && sc.nodes > 0) {
    current = { name: 'nodes', done: 0, total: sc.nodes, start: client.now() };
    await paced(
      sc.nodes,
      0,
      o.inflight,
      async (i) => {
        await client.call('POST', '/api/v1/nodes', {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: { name: `sim-node-${i}`, annotations: { 'sim.svc.io/managed': 'true' } },
        });
      },
      () => current.done++,
    );
  }
  await tracker.start();

  const runPhase = async (ph: Phase): Promise<number> => {
    let objects = 0;
    if (ph.faults) {
      for (const f of ph.faults) {
        const [group, version] = String(f.apiVersion).includes('/') ? String(f.apiVersion).split('/') : ['', String(f.apiVersion)];
        const ns = (f.metadata as { namespace?: string } | undefined)?.namespace;
        const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
        // The kind's resource from discovery (the harness knows nothing of the fault kinds).
        const disc = await client.call('GET', base);
        const res = (disc.body?.resources ?? []).find((x: { kind?: string; name?: string }) => x.kind === f.kind && !x.name?.includes('/'));
        if (!res) throw new Error(`fault ${f.apiVersion} ${f.kind}: the target serves no such kind (${disc.status})`);
        const r = await client.call('POST', `${base}${ns && res.namespaced ? `/namespaces/${ns}` : ''}/${res.name}`, f);
        if (r.status >= 300) throw new Error(`fault ${f.kind}: ${r.status} ${r.body?.message ?? ''}`);
        faultsApplied++;
        objects++;
      }
    }
    if (ph.customResources) {
      const cr = ph.customResources;
      const { crd } = cr;
      current.total = cr.count;
      if (await installCrd(client, crd, cr.timeout)) crdsCreated.push(crd.name);
      crds.set(crd.kind, crd);
      const paths = created.get(crd.kind) ?? [];
      created.set(crd.kind, paths);
      const offset = paths.length;
      const prefix = crd.kind.toLowerCase();
      let failures = 0;
      let firstError = '';
      await paced(
        cr.count,
        cr.qps,
        o.inflight,
        async (j) => {
          const i = offset + j;
          const ns = crd.namespaced ? nsName(j % cr.namespaces) : '';
          const name = `${prefix}-${i}`;
          const coll = crPath(crd, ns);
          const r = await client.call('POST', coll, crManifest(cr, name, ns, o.runId));
          if (r.status < 300) paths.push(`${coll}/${name}`);
          else {
            failures++;
            firstError ||= `${r.status} ${r.body?.message ?? ''}${r.status === 409 ? ` (${crd.kind} ${ns}/${name} left by an earlier run?)` : ''}`;
          }
        },
        () => current.done++,
      );
      customResources[crd.name] = (customResources[crd.name] ?? 0) + cr.count - failures;
      objects += cr.count - failures;
      if (failures > 0) throw new Error(`${failures} of ${cr.count} ${crd.kind} creates failed, first: ${firstError}`);
    }
    if (ph.leases) {
      const l = ph.leases;
      const first = leaseTraffic.reduce((n, t) => n + t.step.count, 0);
      // Renewals count toward this phase's progress only while it lasts (background traffic runs on).
      const phaseProgress = current;
      // Each lease stands for a kubelet with its own client (one renewal per interval is far
      // below any kubelet's limit): lease calls are timed and counted, not held by --qps/--burst.
      const traffic = new LeaseTraffic(
        client.withLimiter(new TokenBucket(0, 0)),
        l,
        o.runId,
        () => l.duration !== undefined && phaseProgress.done++,
        first,
      );
      leaseTraffic.push(traffic);
      traffic.start();
      objects += l.count;
      if (l.duration !== undefined) {
        current.total = l.count * Math.floor(l.duration / l.interval);
        await traffic.done();
      }
    }
    if (ph.create) {
      const c = ph.create;
      current.total = c.count;
      const paths = created.get(c.kind) ?? [];
      created.set(c.kind, paths);
      const kindPrefix = c.kind.toLowerCase();
      const offset = paths.length;
      let failures = 0;
      let firstError = '';
      await paced(
        c.count,
        c.qps,
        o.inflight,
        async (j) => {
          const i = offset + j;
          const ns = c.kind === 'Namespace' ? '' : nsName(i % c.namespaces);
          const name = c.kind === 'Namespace' ? nsName(i) : `${kindPrefix}-${i}`;
          const coll = collectionPath(c.kind, ns);
          if (c.kind === 'Pod') tracker.createSent.set(`${ns}/${name}`, client.now());
          const r = await client.call('POST', coll, manifest(c.kind, name, ns, c.replicas, o.runId, c.group));
          // A namespace may be there already; any other object left by an earlier run would
          // carry that run's label, so its pods would never be counted: a failure, said plainly.
          if (r.status < 300 || (r.status === 409 && c.kind === 'Namespace')) paths.push(`${coll}/${name}`);
          else if (r.status === 409) {
            failures++;
            firstError ||= `${c.kind} ${ns}/${name} exists already (left by an earlier run? delete namespace ${ns})`;
          } else {
            failures++;
            firstError ||= `${r.status} ${r.body?.message ?? ''}`;
          }
        },
        () => current.done++,
      );
      objects += c.count - failures;
      if (failures > 0) throw new Error(`${failures} of ${c.count} creates failed, first: ${firstError}`);
    }
    if (ph.delete) {
      const paths = created.get(ph.delete.kind) ?? [];
      created.delete(ph.delete.kind);
      current.total = paths.length;
      await paced(
        paths.length,
        ph.delete.qps,
        o.inflight,
        async (i) => {
          await client.call('DELETE', paths[i]!, { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' });
        },
        () => current.done++,
      );
      objects += paths.length;
    }
    if (ph.scale) {
      const paths = created.get('Deployment') ?? [];
      current.total = paths.length;
      const replicas = ph.scale.replicas;
      await paced(
        paths.length,
        ph.scale.qps,
        o.inflight,
        async (i) => {
          const r = await client.call(
            'PATCH',
            `${paths[i]}/scale`,
            { spec: { replicas } },
            { 'content-type': 'application/merge-patch+json' },
          );
          // A refused scale would only show as a wait that times out later: say which and why.
          if (r.status >= 300) throw new Error(`scaling ${paths[i]}: ${r.status} ${r.body?.message ?? ''}`.trim());
        },
        () => current.done++,
      );
      objects += paths.length;
    }
    if (ph.watchers) {
      const w = ph.watchers;
      current.total = w.count;
      await paced(
        w.count,
        0,
        o.inflight,
        async (i) => {
          const q = w.per === 'node' ? `fieldSelector=${encodeURIComponent(`spec.nodeName=sim-node-${i}`)}` : '';
          const base = w.per === 'node' ? '/api/v1/pods' : `/api/v1/namespaces/${nsName(i)}/pods`;
          await informer(client, base, q, (type) => type !== 'BOOKMARK' && watchers.events++, watchAbort.signal);
          watchers.count++;
        },
        () => current.done++,
      );
      objects += w.count;
    }
    if (ph.churn) {
      const ch = ph.churn;
      const crd = crds.get(ch.kind);
      // What to patch (ns/name → path), where to watch, and the writes awaited on the watch.
      let targets: { key: string; path: string }[];
      let pending: Map<string, number>;
      let watchPath = '/api/v1/pods';
      const sel = `labelSelector=${encodeURIComponent(`${LABEL}=${o.runId}`)}`;
      if (crd || ch.kind !== 'Pod') {
        // A custom resource or a built-in kind the run created (the pods are the tracker's).
        watchPath = crd ? crPath(crd, '') : allPath(ch.kind as Kind);
        targets = (created.get(ch.kind) ?? []).map((p) => {
          const parts = p.split('/');
          const ns = ch.kind !== 'Namespace' && parts.includes('namespaces') ? parts[parts.indexOf('namespaces') + 1]! : '';
          return { key: `${ns}/${parts.at(-1)}`, path: p };
        });
        // The harness's own watch of them, for the watch latency of each write.
        const own = new Map<string, number>();
        pending = own;
        await informer(
          client,
          watchPath,
          sel,
          (_type, obj) => {
            const mark = obj?.metadata?.annotations?.['svc-load/write'];
            if (mark === undefined) return;
            const k = `${obj.metadata.namespace ?? ''}/${obj.metadata.name}/${mark}`;
            const sent = own.get(k);
            if (sent === undefined) return;
            tracker.watchLatencies.push(client.now() - sent);
            own.delete(k);
          },
          watchAbort.signal,
        );
      } else {
        pending = tracker.pendingWrites;
        targets = [...tracker.live].map((key) => {
          const [ns, name] = key.split('/');
          return { key, path: `/api/v1/namespaces/${ns}/pods/${name}` };
        });
      }
      if (targets.length === 0) throw new Error(`churn: no ${ch.kind} objects to patch (create them in an earlier phase)`);
      // The followers list then watch (from the list's resourceVersion: no write is missed).
      await Promise.all(
        Array.from({ length: ch.watchers }, () =>
          informer(client, watchPath, sel, (type) => type !== 'BOOKMARK' && watchers.events++, watchAbort.signal).then(() => {
            watchers.count++;
          }),
        ),
      );
      current.total = ch.patches;
      let failed = 0;
      let firstError = '';
      await paced(
        ch.patches,
        ch.qps,
        ch.writers,
        async (i) => {
          const t = targets[i % targets.length]!;
          const mark = String(i);
          pending.set(`${t.key}/${mark}`, client.now());
          const r = await client.call(
            'PATCH',
            t.path,
            { metadata: { annotations: { 'svc-load/write': mark } } },
            { 'content-type': 'application/merge-patch+json' },
          );
          // A write that did not happen is not awaited on the watch; the phase fails saying so.
          if (r.status >= 300) {
            pending.delete(`${t.key}/${mark}`);
            failed++;
            firstError ||= `${t.path}: ${r.status} ${r.body?.message ?? ''}`;
          }
        },
        () => current.done++,
      );
      // Until the harness's own watch has seen every write (each one's watch latency measured).
      const until = client.now() + 30_000;
      while (pending.size > 0) {
        if (client.now() > until) throw new Error(`${pending.size} of ${ch.patches} patches never seen on the watch within 30 s`);
        await Bun.sleep(20);
      }
      if (failed > 0) throw new Error(`${failed} of ${ch.patches} patches failed, first: ${firstError}`);
      objects += ch.patches;
    }
    if (ph.wait) {
      const w = ph.wait;
      const until = client.now() + w.timeout * 1000;
      if (w.podsReady !== undefined) {
        current.total = w.podsReady;
        // Exactly so many: after a scale-down the wait is for the extra pods to go.
        while (tracker.readyNow !== w.podsReady) {
          current.done = tracker.readyNow;
          if (client.now() > until) throw new Error(`timed out after ${w.timeout}s: ${tracker.readyNow} of ${w.podsReady} pods Ready`);
          await Bun.sleep(100);
        }
        current.done = tracker.readyNow;
      }
      if (w.rollout) {
        const [ns, name] = w.rollout.includes('/') ? w.rollout.split('/') : [nsName(0), w.rollout];
        for (;;) {
          const r = await client.call('GET', `/apis/apps/v1/namespaces/${ns}/deployments/${name}`);
          const d = r.body;
          const want = d?.spec?.replicas ?? 1;
          const s = d?.status ?? {};
          if (
            r.status === 200 &&
            (s.observedGeneration ?? 0) >= d.metadata.generation &&
            s.updatedReplicas === want &&
            s.availableReplicas === want
          )
            break;
          if (client.now() > until) throw new Error(`timed out after ${w.timeout}s: rollout of ${ns}/${name}`);
          await Bun.sleep(250);
        }
      }
    }
    if (ph.sleep) await Bun.sleep(ph.sleep * 1000);
    return objects;
  };

  try {
    for (const ph of sc.phases) {
      current = { name: ph.name, done: 0, total: 0, start: client.now() };
      const startMs = client.now();
      o.log(`phase ${ph.name}: start`);
      try {
        const objects = await runPhase(ph);
        phases.push({ name: ph.name, startMs: Math.round(startMs), endMs: Math.round(client.now()), objects });
        phasesDone++;
        o.log(`phase ${ph.name}: done in ${((client.now() - startMs) / 1000).toFixed(1)}s (${objects} objects)`);
      } catch (e) {
        const error = (e as Error).message;
        phases.push({ name: ph.name, startMs: Math.round(startMs), endMs: Math.round(client.now()), objects: 0, error });
        o.log(`phase ${ph.name}: FAILED: ${error}`);
        break;
      }
    }
  } finally {
    clearInterval(timer);
    await tick();
    watchAbort.abort();
    tracker.stop();
    await Promise.all(leaseTraffic.map((t) => t.stop()));
    if (o.cleanup) {
      const nss = created.get('Namespace') ?? [];
      if (nss.length) o.log(`cleanup: deleting ${nss.length} namespaces`);
      await paced(
        nss.length,
        0,
        o.inflight,
        async (i) => {
          await client.call('DELETE', nss[i]!);
        },
        () => {},
      );
      // The leases live in kube-node-lease, not in the run's namespaces; a CRD goes with its objects.
      const rest = [
        ...leaseTraffic.flatMap((t) => t.created),
        ...crdsCreated.map((n) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${n}`),
      ];
      await paced(
        rest.length,
        0,
        o.inflight,
        async (i) => {
          await client.call('DELETE', rest[i]!);
        },
        () => {},
      );
    }
  }
  const leases = leaseTraffic.length
    ? leaseTraffic.reduce<LeaseStats>(
        (a, t) => ({
          leases: a.leases + t.stats.leases,
          renewals: a.renewals + t.stats.renewals,
          conflicts: a.conflicts + t.stats.conflicts,
          failures: a.failures + t.stats.failures,
        }),
        { leases: 0, renewals: 0, conflicts: 0, failures: 0 },
      )
    : undefined;
  return {
    started: new Date(Date.now() - (client.now() - t0)).toISOString(),
    durationMs: client.now() - t0,
    phases,
    series,
    tracker,
    watchers,
    faultsApplied,
    leases,
    customResources,
  };
}
