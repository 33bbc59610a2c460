/**
 * Composition root: flags → config → builders → start → shutdown. Nothing imports this file.
 * Each concern is built by the builder in its own folder; this file only orders them.
 */
import { heapSize, heapStats } from 'bun:jsc';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Admission } from './admission/builder';
import { CelPool } from './admission/policy/cel-pool';
import { publishAuthenticationInfo } from './aggregation/authentication-info';
import { createApf } from './apf';
import { createAudit, createAuthentication, createAuthorization, followRbac } from './auth/builder';
import { writeKubeconfig } from './auth/tokens';
import { type Config, featureGateWarnings, helpText, parseFlags } from './config/flags';
import { Controllers } from './controllers/builder';
import { createFaults } from './faults';
import { createFrontEnd } from './http/builder';
import { VERSION_INFO } from './http/discovery';
import { Metrics } from './http/metrics';
import { MutatingPolicyMetrics } from './http/metrics-mutating-policy';
import { WebhookMetrics } from './http/webhook-metrics';
import { builtinTypes, systemObjects } from './kinds/builder';
import { bootstrapObjects } from './registry/bootstrap';
import { createRegistry } from './registry/builder';
import { openStore, type StoreBackend } from './store/backend';
import { startCompactor } from './store/compactor';
import { PackedKeyValue, valuePacker } from './store/packed';
import type { KeyValue } from './store/types';
import { createUi } from './ui/builder';

function log(msg: string): void {
  process.stderr.write(`${new Date().toISOString()} ${msg}\n`);
}

const errorText = (e: unknown) => (e instanceof Error ? (e.stack ?? e.message) : String(e));

function fail(what: string, e: unknown): never {
  process.stderr.write(`Error: ${what}${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}

async function main(argv: string[]): Promise<void> {
  let cfg: Config | undefined;
  try {
    cfg = parseFlags(argv);
  } catch (e) {
    process.stderr.write(`Error: ${(e as Error).message}\n`);
    process.exit(2);
  }
  if (!cfg) {
    process.stdout.write(helpText());
    return;
  }
  for (const w of featureGateWarnings(cfg)) log(`W ${w}`);
  const started = Date.now();
  const dataDir = path.resolve(cfg.dataDir);
  fs.mkdirSync(dataDir, { recursive: true });
  const state = { bootstrapped: false, controllersStarted: false, shuttingDown: false };

  // Storage, types, authorization, admission, the registry.
  const backend: StoreBackend = await openStore(cfg, dataDir, log).catch((e) => fail('cannot open the store: ', e));
  const kv = backend.kv;
  const { schemas, kinds } = builtinTypes(cfg.runtimeConfig, cfg.featureGates);
  const authz = createAuthorization(cfg);
  const audit = createAudit(cfg, log);
  const metrics = new Metrics(
    () => backend.figures(),
    audit && (() => ({ events: audit.log.written + audit.log.queued, errors: audit.log.dropped })),
  );
  const webhookMetrics = new WebhookMetrics();
  metrics.sources.push((out) => webhookMetrics.write(out));
  // CEL evaluations with a large worst case run in worker threads with a deadline.
  const celPool = cfg.celPoolSize > 0 ? new CelPool({ size: cfg.celPoolSize, deadlineMs: cfg.celEvalDeadlineMs }) : undefined;
  const mutatingPolicyMetrics = new MutatingPolicyMetrics();
  metrics.sources.push((out) => mutatingPolicyMetrics.write(out));
  const admission = new Admission({
    ...authz,
    schemas,
    celPool,
    onPolicyCheck: (c) => metrics.observePolicyCheck(c),
    onWebhookCall: (c) => webhookMetrics.observe(c),
    onMutatingPolicyCheck: (c) => mutatingPolicyMetrics.observe(c),
    defaultTolerationSeconds: { notReady: cfg.defaultNotReadyTolerationSeconds, unreachable: cfg.defaultUnreachableTolerationSeconds },
    log,
  });
  const { api, allocator } = createRegistry({ cfg, kv, schemas, kinds, admission: admission.chains, log });
  await bootstrapObjects(api, allocator, cfg.port, log, systemObjects());
  if (cfg.requestheaderClientCaFile)
    await publishAuthenticationInfo(api, {
      clientCa: await Bun.file(cfg.requestheaderClientCaFile).text(),
      allowedNames: cfg.requestheaderAllowedNames,
    }).catch((e) => fail('', e));
  state.bootstrapped = true;
  const compactor = startCompactor(kv, cfg.compactionIntervalMs, log);

  // Priority and fairness, authentication, the front end.
  const apf = cfg.enablePriorityAndFairness
    ? createApf({
        api,
        metrics,
        serverConcurrencyLimit: cfg.maxRequestsInflight + cfg.maxMutatingRequestsInflight,
        requestTimeoutMs: cfg.requestTimeoutMs,
        sizeBasedListEstimate: cfg.featureGates.SizeBasedListCostEstimate === true,
        log,
      })
    : undefined;
  // Fault injection: only where the gate FaultInjection serves its kind.
  const faults = createFaults({
    api,
    metrics,
    revisions: () => backend.figures(),
    compact: () => kv.compact(kv.currentRevision()),
    slowFsync: backend.slowFsync,
    log,
  });
  if (faults) admission.setOwnWriteFaults(faults.ownWrites);
  const authn = await createAuthentication(cfg, dataDir, api).catch((e) => fail('', e));
  const ui = cfg.enableUi
    ? createUi({
        api,
        metrics,
        apf,
        authn: authn.authenticator,
        authz: authz.authorizer,
        store: {
          backend: cfg.etcdServers.length > 0 ? 'etcd' : 'embedded',
          figures: () => backend.figures(),
          stats: () => backend.stats(),
        },
        version: VERSION_INFO,
      })
    : undefined;
  const front = await createFrontEnd({
    cfg,
    dataDir,
    api,
    schemas,
    authz,
    authn,
    audit: audit?.auditor,
    apf,
    faults,
    metrics,
    started,
    ui,
    log,
    state: {
      store: () => backend.check(),
      bootstrapped: () => state.bootstrapped,
      controllersStarted: () => state.controllersStarted,
      shuttingDown: () => state.shuttingDown,
      runtime: () => ({ store: backend.stats(), memory: process.memoryUsage(), uptimeSeconds: Math.round(process.uptime()) }),
    },
  }).catch((e) => fail(`failed to listen on ${cfg.bindAddress}:${cfg.port}: `, e));

  // Post-start: following RBAC (and its bootstrap policy), admission policies, the controllers.
  const rbacFollowed = followRbac(api, authz.rbac, log);
  const controllers = new Controllers({
    cfg,
    api,
    schemas,
    rbacFollowed,
    rootCa: front.ca,
    conversions: admission.conversions,
    leading: (on) => {
      if (apf) apf.controller.leading = on;
      if (front.aggregator) front.aggregator.leading = on;
    },
    log,
  });
  void Promise.all([rbacFollowed, admission.start(), apf?.controller.start(), faults?.start(), controllers.start()]).then(
    () => (state.controllersStarted = true),
    (e) => log(`starting the controllers failed: ${errorText(e)}`),
  );
  const kubeconfig = writeKubeconfig(dataDir, front.url, front.ca, authn.adminToken);
  log(`svc-apiserver serving on ${front.url} (store revision ${kv.currentRevision()}, started in ${Date.now() - started} ms)`);
  process.stdout.write(`Admin kubeconfig: ${kubeconfig}\n  export KUBECONFIG=${kubeconfig}\n`);

  const shutdown = async (signal: string) => {
    if (state.shuttingDown) return;
    state.shuttingDown = true;
    log(`${signal}: /readyz now failing; stopping in ${cfg.shutdownDelayMs} ms`);
    await Bun.sleep(cfg.shutdownDelayMs);
    await controllers.stop();
    apf?.controller.stop();
    faults?.stop();
    admission.stop();
    celPool?.close();
    compactor.stop();
    await front.stop();
    api.close();
    await audit?.log.flush();
    await kv.close();
    log('shut down cleanly');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  // For benches: SVC_DEBUG_LAG=MS logs each stall of the event loop longer than MS (a 50 ms tick
  // that came late), with the JS heap's size before and after it (a drop is a collection).
  const lagMs = Number(process.env.SVC_DEBUG_LAG ?? 0);
  if (lagMs > 0) {
    let last = performance.now();
    let heap = heapSize();
    setInterval(() => {
      const now = performance.now();
      const h = heapSize();
      const late = now - last - 50;
      if (late > lagMs)
        log(`event loop ${late.toFixed(0)} ms late; heap ${(heap / 2 ** 20).toFixed(0)} -> ${(h / 2 ** 20).toFixed(0)} MiB`);
      last = now;
      heap = h;
    }, 50).unref();
  }
  // For benches (bench/memory.ts): SIGUSR2 runs a full garbage collection and logs the heap's
  // size and its most numerous object types, so memory is read after "a GC" as the targets say.
  if (process.env.SVC_DEBUG_HEAP_SIGNAL === '1') {
    process.on('SIGUSR2', async () => {
      // Twice, a turn apart: objects held only by WeakRefs (the caches' parsed-object memos) that
      // this turn's work touched survive a collection in the same turn.
      Bun.gc(true);
      await new Promise((r) => setTimeout(r, 50));
      Bun.gc(true);
      const h = heapStats();
      const top = Object.entries(h.objectTypeCounts)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 12)
        .map(([t, n]) => `${t}=${n}`)
        .join(' ');
      // Where the rest of the RSS is: the JS heap's capacity, memory outside it that it accounts
      // (array buffers, strings' bytes), and malloc (mimalloc: Bun's own and native allocations).
      const mi = (
        h as { mimalloc?: { committed?: { current?: number }; malloc_normal?: { current?: number }; malloc_huge?: { current?: number } } }
      ).mimalloc;
      const mib = (n: number | undefined) => `${((n ?? 0) / 2 ** 20).toFixed(1)} MiB`;
      log(
        `heap: size ${mib(h.heapSize)}, capacity ${mib(h.heapCapacity)}, extra ${mib(h.extraMemorySize)}, ${h.objectCount} objects; ` +
          `malloc ${mib((mi?.malloc_normal?.current ?? 0) + (mi?.malloc_huge?.current ?? 0))} (committed ${mib(mi?.committed?.current)}); ${top}`,
      );
      const ps = valuePacker.stats;
      log(
        `heap: values packed so far ${ps.values} (${mib(ps.rawBytes)} as ${mib(ps.packedBytes)}), made hot again by reads ${ps.reheated}`,
      );
      // How full the buffers holding the newest values are (embedded store): a buffer (a slab)
      // stays whole while any value in it is referenced.
      const sync = (kv as { rangeSync?: (k: string, o: { end: string }) => { kvs: KeyValue[] } }).rangeSync;
      if (sync) {
        // Raw values and packed ones (cold, store/packed.ts) apart, each with their buffers.
        const tally = () => ({ held: new Map<ArrayBufferLike, number>(), live: 0, n: 0, raw: 0 });
        const raw = tally();
        const packed = tally();
        for (const e of sync.call(kv, '\0', { end: '\0' }).kvs) {
          const [t, b] = e instanceof PackedKeyValue ? [packed, e.packed.bytes] : [raw, e.value];
          t.held.set(b.buffer, (t.held.get(b.buffer) ?? 0) + b.byteLength);
          t.live += b.byteLength;
          t.n++;
          t.raw += e instanceof PackedKeyValue ? e.packed.length : b.byteLength;
        }
        const total = (t: ReturnType<typeof tally>) => [...t.held.keys()].reduce((a, b) => a + b.byteLength, 0);
        log(
          `heap: newest values ${mib(raw.live)} in ${raw.held.size} buffers of ${mib(total(raw))}; ` +
            `${packed.n} packed, ${mib(packed.raw)} as ${mib(packed.live)} in ${packed.held.size} buffers of ${mib(total(packed))}`,
        );
      }
      // SVC_DEBUG_HEAP_SNAPSHOT=DIR: also a V8-format heap snapshot (Chrome DevTools reads it).
      const dir = process.env.SVC_DEBUG_HEAP_SNAPSHOT;
      if (dir) {
        const file = `${dir}/heap-${Date.now()}.heapsnapshot`;
        void Bun.write(file, Bun.generateHeapSnapshot('v8')).then(() => log(`heap snapshot: ${file}`));
      }
    });
  }
}

// As the reference recovers a handler that panics: a stray failure outside any request's own
// error handling is logged and the server goes on (Bun would otherwise exit on it).
process.on('unhandledRejection', (e) => log(`unhandled rejection: ${errorText(e)}`));
process.on('uncaughtException', (e) => log(`uncaught exception: ${e.stack ?? e.message}`));

await main(process.argv.slice(2));
