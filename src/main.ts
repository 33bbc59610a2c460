/**
 * Composition root: flags → config → construct → wire → listen. Nothing imports this file.
 */
import { heapStats } from 'bun:jsc';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LimitRanger } from './admission/limit-ranger';
import { CelPool } from './admission/policy/cel-pool';
import { ADMISSION_GROUP, PolicyAdmission } from './admission/policy/plugin';
import { PolicyStatusController } from './admission/policy/status';
import { QuotaAdmission } from './admission/quota';
import { RbacEscalation } from './admission/rbac-escalation';
import { createApf } from './apf';
import type { Obj } from './api/meta';
import { StatusError } from './api/status';
import type { UserInfo } from './api/user';
import { AuditLog, parsePolicy } from './auth/audit';
import { Auditor } from './auth/auditor';
import { Authorizer } from './auth/authz';
import { bootstrapPolicy } from './auth/bootstrap-rbac';
import { servingCerts } from './auth/certs';
import { RbacIndex } from './auth/rbac';
import { review } from './auth/reviews';
import { ServiceAccountTokens } from './auth/sa-tokens';
import { adminToken, MASTERS, parseTokenFile, TokenAuthenticator, writeKubeconfig } from './auth/tokens';
import { CborCodec } from './codec/cbor';
import { ProtobufCodec } from './codec/protobuf';
import { decodeStored } from './codec/stored';
import { type Config, featureGateWarnings, helpText, parseFlags } from './config/flags';
import { ClusterRoleAggregation } from './controllers/cluster-role-aggregation';
import { CrdController } from './controllers/crd';
import { DisruptionController } from './controllers/disruption';
import { GarbageCollector } from './controllers/gc';
import { LeaderElector } from './controllers/leader-election';
import { NamespaceController } from './controllers/namespace';
import { ResourceQuotaController } from './controllers/resource-quota';
import { ServiceAccountController } from './controllers/service-accounts';
import { frontEnd, listen } from './http/app';
import { Discovery } from './http/discovery';
import { HealthEndpoints } from './http/health';
import { Metrics } from './http/metrics';
import { OpenApi } from './http/openapi/handler';
import { ResourceHandler } from './http/resources';
import { reply, replyText } from './http/respond';
import { buildHandler } from './http/server';
import { WatchHandler } from './http/watch-handler';
import { builtinKinds } from './kinds/builtin';
import { AdmissionChain } from './registry/admission';
import { ApiRegistry } from './registry/api-registry';
import type { ResourceStore } from './registry/generic';
import type { KindDef } from './registry/kind';
import { ServiceAllocator } from './registry/service-allocator';
import { defaulters } from './schema/defaulters';
import { SchemaSet } from './schema/engine';
import definitions from './schema/generated/definitions.json';
import { overlays } from './schema/overlays';
import type { Definitions } from './schema/types';
import { openStore, type StoreBackend } from './store/backend';
import { isStoreError, prefixEnd } from './store/types';
import { WatchCache } from './watch/cache';
import { CodecPool } from './workers/codec-pool';

const BOOTSTRAP_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/**
 * Kinds whose watch cache keeps every object parsed (`group/plural`): the server reads them on
 * requests and controller passes (admission configuration, authorization, flow control, budgets),
 * and there are few of them. Every other cache holds stored bytes only and parses on demand.
 */
const PARSED_KINDS = new Set([
  '/namespaces',
  '/limitranges',
  '/resourcequotas',
  'admissionregistration.svc.io/validatingadmissionpolicies',
  'admissionregistration.svc.io/validatingadmissionpolicybindings',
  'apiextensions.svc.io/customresourcedefinitions',
  'flowcontrol.apiserver.svc.io/flowschemas',
  'flowcontrol.apiserver.svc.io/prioritylevelconfigurations',
  'rbac.authorization.svc.io/roles',
  'rbac.authorization.svc.io/clusterroles',
  'rbac.authorization.svc.io/rolebindings',
  'rbac.authorization.svc.io/clusterrolebindings',
  'policy/poddisruptionbudgets',
]);

function log(msg: string): void {
  process.stderr.write(`${new Date().toISOString()} ${msg}\n`);
}

/** Whether --runtime-config leaves a kind enabled. */
function enabled(k: KindDef, rc: Record<string, boolean>): boolean {
  const gv = k.group ? `${k.group}/${k.version}` : k.version;
  const keys = [`${gv}/${k.plural}`, k.group ? gv : `api/${k.version}`, gv, 'api/all'];
  for (const key of keys) if (key in rc) return rc[key] as boolean;
  return true;
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

  let backend: StoreBackend;
  try {
    backend = await openStore(cfg, dataDir, log);
  } catch (e) {
    process.stderr.write(`Error: cannot open the store: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
  const store = backend.kv;
  const schemas = new SchemaSet(definitions as unknown as Definitions, overlays, defaulters);
  const hasSpec = (name: string) => {
    const s = schemas.get(name);
    return s?.type === 'object' && s.properties?.spec !== undefined;
  };
  const rc = cfg.runtimeConfig;
  const kinds = builtinKinds(hasSpec).filter((k) => enabled(k, rc));
  const api = new ApiRegistry(store, schemas, kinds, {
    // Compaction off: continue tokens expire only if an explicit compaction passes them.
    continueTtlMs: cfg.compactionIntervalMs > 0 ? cfg.compactionIntervalMs : Number.POSITIVE_INFINITY,
  });

  // Post-start: the system namespaces exist from the first start on.
  let bootstrapped = false;
  const nsStore = api.lookup('', 'v1', 'namespaces');
  if (nsStore) {
    for (const name of BOOTSTRAP_NAMESPACES) {
      try {
        await nsStore.create(
          '',
          { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
          { dryRun: false, fieldValidation: 'Strict', warnings: [] },
        );
      } catch (e) {
        if (!(e instanceof Error && 'code' in e && (e as { code: number }).code === 409)) throw e;
      }
    }
  }
  // Service addresses: the allocator, its repair pass, and the kubernetes Service in default.
  const svcStore = api.lookup('', 'v1', 'services');
  if (svcStore) {
    const allocator = new ServiceAllocator(store, { clusterIPRange: cfg.serviceClusterIPRange, nodePortRange: cfg.serviceNodePortRange });
    svcStore.hooks = allocator;
    const held = await store.range(svcStore.prefix, { end: prefixEnd(svcStore.prefix) });
    const fixed = await allocator.repair(held.kvs.map(decodeStored));
    if (fixed.removed + fixed.added > 0) log(`service address repair: ${fixed.removed} stale allocations removed, ${fixed.added} restored`);
    const exists = (await store.range(svcStore.key('default', 'kubernetes'))).kvs.length > 0;
    if (!exists) {
      await svcStore.create(
        'default',
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'kubernetes', labels: { component: 'apiserver', provider: 'kubernetes' } },
          spec: {
            type: 'ClusterIP',
            clusterIP: allocator.kubernetesIP,
            ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: cfg.port }],
            sessionAffinity: 'None',
          },
        },
        { dryRun: false, fieldValidation: 'Strict', warnings: [] },
      );
    }
  }
  bootstrapped = true;

  // Compaction as the reference's compactor: every interval, compact to the revision seen one
  // interval ago. An interval of 0 turns it off (as the reference's flag).
  let lastRev = store.currentRevision();
  const compactor = setInterval(
    () => {
      if (cfg.compactionIntervalMs <= 0) return;
      const target = lastRev;
      lastRev = store.currentRevision();
      if (target > store.compactedRevision()) {
        store.compact(target).catch((e) => {
          if (!isStoreError(e, 'compacted')) log(`compaction to ${target} failed: ${String(e)}`);
        });
      }
    },
    cfg.compactionIntervalMs > 0 ? cfg.compactionIntervalMs : 2 ** 31 - 1,
  );
  compactor.unref();

  const certs = await servingCerts(dataDir, cfg.bindAddress, cfg.tlsCertFile || undefined, cfg.tlsPrivateKeyFile || undefined);
  const token = adminToken(dataDir);
  const users = new Map<string, UserInfo>([[token, { name: 'admin', uid: 'admin', groups: [MASTERS] }]]);
  const saTokens = await ServiceAccountTokens.open(dataDir, {
    issuer: cfg.serviceAccountIssuer,
    signingKeyFile: cfg.serviceAccountSigningKeyFile || undefined,
    keyFile: cfg.serviceAccountKeyFile || undefined,
  });
  if (cfg.tokenAuthFile) {
    let tokens: Map<string, UserInfo>;
    try {
      tokens = parseTokenFile(fs.readFileSync(cfg.tokenAuthFile, 'utf8'), cfg.tokenAuthFile);
    } catch (e) {
      process.stderr.write(`Error: --token-auth-file: ${(e as Error).message}\n`);
      process.exit(1);
    }
    for (const [t, u] of tokens) users.set(t, u);
  }

  let shuttingDown = false;
  let controllersStarted = false;
  const livezGraceUntil = started + cfg.livezGracePeriodMs;
  const hook = (done: () => boolean) => () => (done() || Date.now() < livezGraceUntil ? undefined : 'not finished');
  const base = [
    { name: 'ping', check: () => undefined },
    { name: 'log', check: () => undefined },
    {
      name: 'etcd',
      check: () => backend.check(),
    },
    { name: 'poststarthook/bootstrap-namespaces', check: hook(() => bootstrapped) },
    { name: 'poststarthook/start-controllers', check: hook(() => controllersStarted) },
  ];
  const health = new HealthEndpoints({
    livez: base,
    healthz: base,
    readyz: [...base, { name: 'shutdown', check: () => (shuttingDown ? 'process is shutting down' : undefined) }],
  });
  const metrics = new Metrics(() => backend.figures());
  const host = cfg.bindAddress.includes(':') ? `[${cfg.bindAddress}]` : cfg.bindAddress;
  // One watch cache per resource, started on first use (watch, or an "Any"/"not older than" list).
  const caches = new Map<ResourceStore, WatchCache>();
  const cacheOf = (s: ResourceStore): WatchCache => {
    let c = caches.get(s);
    if (!c) {
      c = new WatchCache(store, s.prefix, {
        historyMs: cfg.watchHistoryMs,
        maxHistory: cfg.watchCacheMaxEvents,
        maxHistoryBytes: cfg.watchCacheMaxBytes,
        selectableFields: (o) => s.selectorFields(o),
        keepParsed: PARSED_KINDS.has(`${s.def.group}/${s.def.plural}`),
        log,
      });
      caches.set(s, c);
      s.cache = c;
    }
    return c;
  };
  for (const s of api.stores) cacheOf(s);

  // Admission: LimitRanger on pod creates, reading LimitRanges from their watch cache.
  const lrStore = api.lookup('', 'v1', 'limitranges');
  const podStore = api.lookup('', 'v1', 'pods');
  if (lrStore && podStore) {
    const limitRanges = async (namespace: string) => {
      const cache = cacheOf(lrStore);
      await cache.start();
      const prefix = `${lrStore.prefix}${namespace}/`;
      const cached = cache.list(prefix);
      if (cached.length > 0) return cached.map((c) => c.obj);
      // None cached: ask the store (as the reference's live lookup), so a LimitRange created
      // just before the pod applies to it although the cache has not seen it yet.
      const live = await store.range(prefix, { end: prefixEnd(prefix) });
      return live.kvs.map(decodeStored);
    };
    podStore.admission = new AdmissionChain([new LimitRanger(limitRanges)]);
  }
  // ResourceQuota admission on creates of every namespaced kind (after LimitRanger for pods).
  let quotaPlugin: QuotaAdmission | undefined;
  const quotaStore = api.lookup('', 'v1', 'resourcequotas');
  if (quotaStore) {
    let quotaCacheLoaded = false;
    const quotasIn = (namespace: string): Obj[] | Promise<Obj[]> => {
      const cache = cacheOf(quotaStore);
      // Most namespaces have no quota: the cache's per-namespace count answers without a scan.
      const list = () => {
        const under = `${quotaStore.prefix}${namespace}/`;
        return cache.size(under) === 0 ? [] : cache.list(under).map((c) => c.obj);
      };
      if (quotaCacheLoaded) return list();
      return cache.start().then(() => {
        quotaCacheLoaded = true;
        return list();
      });
    };
    const quota = new QuotaAdmission(quotaStore, quotasIn);
    quotaPlugin = quota;
    const limitRanger = podStore?.admission;
    for (const s of api.stores) {
      if (!s.def.namespaced) continue;
      s.admission = s === podStore && limitRanger ? new AdmissionChain([...limitRanger.plugins, quota]) : new AdmissionChain([quota]);
    }
  }
  // ValidatingAdmissionPolicy last, on every kind, from the policies' and bindings' watch caches.
  const vapStore = api.lookup(ADMISSION_GROUP, 'v1', 'validatingadmissionpolicies');
  const vapbStore = api.lookup(ADMISSION_GROUP, 'v1', 'validatingadmissionpolicybindings');
  // RBAC: the index follows the four kinds' watch caches; the authorizer asks it per request.
  const rbac = new RbacIndex();
  const authorizer = new Authorizer(cfg.authorizationMode, rbac);
  const RBAC_GROUP = 'rbac.authorization.svc.io';
  const rbacStores = ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings']
    .map((p) => api.lookup(RBAC_GROUP, 'v1', p))
    .filter((s): s is ResourceStore => s !== undefined);
  /** Newest revision the RBAC index has applied, per kind's store (for the bootstrap's wait below). */
  const rbacApplied = new Map<ResourceStore, number>();
  const followRbac = async () => {
    for (const s of rbacStores) {
      const cache = cacheOf(s);
      await cache.start();
      const { watcher, initial } = cache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
      for (const c of initial) rbac.apply(s.def.kind, c.obj, false);
      void (async () => {
        while (!watcher.ended)
          for (const e of await watcher.next(Number.POSITIVE_INFINITY)) {
            rbac.apply(s.def.kind, e.obj, e.type === 'DELETED');
            rbacApplied.set(s, e.event.rv);
          }
      })();
    }
    // The bootstrap policy, created where missing (as the reference reconciles it at start).
    const { clusterRoles, clusterRoleBindings } = bootstrapPolicy();
    const W = { dryRun: false, fieldValidation: 'Ignore' as const, warnings: [] as string[], fieldManager: 'bootstrap' };
    for (const [plural, objs] of [
      ['clusterroles', clusterRoles],
      ['clusterrolebindings', clusterRoleBindings],
    ] as const) {
      const s = api.lookup(RBAC_GROUP, 'v1', plural);
      if (!s) continue;
      // Only what is missing, all at once (one log sync for the lot).
      const present = new Set(
        cacheOf(s)
          .list()
          .map((c) => c.obj.metadata.name),
      );
      const created = await Promise.all(
        objs
          .filter((o) => !present.has(o.metadata.name))
          .map(async (o) => {
            try {
              return Number((await s.create('', structuredClone(o), { ...W, warnings: [] })).metadata.resourceVersion);
            } catch (e) {
              if (!(e instanceof StatusError) || e.code !== 409) log(`bootstrap rbac: ${o.metadata.name}: ${(e as Error).message}`);
              return 0;
            }
          }),
      );
      // Ready means the policy is in force: wait (5 s at most) until the index has applied what
      // was just created, which reaches it through the watch cache a little after the write.
      const want = Math.max(0, ...created);
      for (let waited = 0; (rbacApplied.get(s) ?? 0) < want && waited < 5000; waited += 5) await Bun.sleep(5);
    }
  };
  // RBAC escalation prevention on the four RBAC kinds (with their policy admission, set below).
  const escalation = new RbacEscalation(rbac, authorizer);
  for (const s of rbacStores) s.admission = new AdmissionChain([...(s.admission?.plugins ?? []), escalation]);
  // CEL evaluations with a large worst case run in worker threads with a deadline.
  const celPool = cfg.celPoolSize > 0 ? new CelPool({ size: cfg.celPoolSize, deadlineMs: cfg.celEvalDeadlineMs }) : undefined;
  let policyAdmission: PolicyAdmission | undefined;
  let policyStatus: PolicyStatusController | undefined;
  if (vapStore && vapbStore && nsStore) {
    const fromCache = async (s: ResourceStore, prefix: string) => {
      const cache = cacheOf(s);
      await cache.start();
      return cache.list(prefix).map((c) => c.obj);
    };
    policyAdmission = new PolicyAdmission({
      policies: cacheOf(vapStore),
      bindings: cacheOf(vapbStore),
      params: (apiVersion, kind) => {
        const slash = apiVersion.indexOf('/');
        const s = api.byGroupVersionKind(slash < 0 ? '' : apiVersion.slice(0, slash), apiVersion.slice(slash + 1), kind);
        if (!s) return undefined;
        return {
          namespaced: s.def.namespaced,
          get: async (namespace, name) => (await fromCache(s, s.key(namespace, name))).find((o) => o.metadata.name === name),
          list: (namespace) => fromCache(s, s.def.namespaced ? `${s.prefix}${namespace}/` : s.prefix),
        };
      },
      namespace: async (name) => (await fromCache(nsStore, nsStore.key('', name))).find((o) => o.metadata.name === name),
      decider: (user) => authorizer.decider(user),
      pool: celPool,
      log,
    });
    policyAdmission.onCheck = (c) => metrics.observePolicyCheck(c);
    const kindOf = (st: ResourceStore | undefined) =>
      st && { group: st.def.group, version: st.def.version, kind: st.def.kind, schema: st.def.schema };
    policyStatus = new PolicyStatusController(
      vapStore,
      cacheOf(vapStore),
      {
        byResource: (g, v, r) => kindOf(api.lookup(g, v, r)),
        byKind: (g, v, k) => kindOf(api.byGroupVersionKind(g, v, k)),
      },
      schemas,
      log,
    );
    for (const s of api.stores) s.admission = new AdmissionChain([...(s.admission?.plugins ?? []), policyAdmission]);
  }

  // Long lists are encoded and compressed in worker threads, a chunk at a time.
  const codecPool = cfg.codecPoolSize > 0 ? new CodecPool({ size: cfg.codecPoolSize }) : undefined;
  if (codecPool) {
    const p = codecPool.pool;
    metrics.sources.push((out) =>
      out.push(
        '# HELP svc_codec_pool_tasks_total Chunks of long lists encoded or compressed by the codec pool.',
        '# TYPE svc_codec_pool_tasks_total counter',
        `svc_codec_pool_tasks_total ${p.completed}`,
        '# HELP svc_codec_pool_workers_replaced_total Codec pool workers replaced after a deadline or a failure.',
        '# TYPE svc_codec_pool_workers_replaced_total counter',
        `svc_codec_pool_workers_replaced_total ${p.replaced}`,
      ),
    );
  }
  const protobuf = new ProtobufCodec(schemas);
  const cbor = cfg.featureGates.CBORServingAndStorage === true ? new CborCodec(schemas) : undefined;
  const watches = new WatchHandler(store, cacheOf, {
    minRequestTimeoutSec: cfg.minRequestTimeoutSec,
    bookmarkIntervalMs: cfg.watchBookmarkIntervalMs,
    watchList: cfg.featureGates.WatchList === true,
    log,
  });
  // The audit log: a policy file and a path, else nothing is audited (as the reference).
  let auditLog: AuditLog | undefined;
  let auditor: Auditor | undefined;
  if (cfg.auditLogPath && cfg.auditPolicyFile) {
    const policy = parsePolicy(fs.readFileSync(cfg.auditPolicyFile, 'utf8'));
    auditLog = new AuditLog({
      path: cfg.auditLogPath,
      maxSizeMB: cfg.auditLogMaxSize,
      maxBackups: cfg.auditLogMaxBackup,
      maxAgeDays: cfg.auditLogMaxAge,
      log,
    });
    auditor = new Auditor(policy, auditLog);
    const al = auditLog;
    metrics.auditFigures = () => ({ events: al.written + al.queued, errors: al.dropped });
  }
  const discovery = new Discovery(api, `${host}:${cfg.port}`);
  // Service accounts: a token's account must still exist with the uid it was issued for (the
  // watch cache first; the store for an account too new for it).
  const saStore = api.lookup('', 'v1', 'serviceaccounts');
  // The uid of a service account (or of a token's bound Pod, Secret or Node), from the watch
  // cache when it has it, else from the store.
  const accountUid = (saStore: ResourceStore) => {
    const stores: Record<string, ResourceStore | undefined> = {
      ServiceAccount: saStore,
      Pod: api.lookup('', 'v1', 'pods'),
      Secret: api.lookup('', 'v1', 'secrets'),
      Node: api.lookup('', 'v1', 'nodes'),
    };
    void cacheOf(saStore).start();
    return async (namespace: string, name: string, kind = 'ServiceAccount'): Promise<string | undefined> => {
      const s = stores[kind];
      if (!s) return undefined;
      const cache = cacheOf(s);
      const cached = cache.list(s.key(namespace, name)).find((c) => c.obj.metadata.name === name);
      if (cached) return cached.obj.metadata.uid;
      try {
        return decodeStored(await s.get(namespace, name)).metadata.uid;
      } catch {
        return undefined;
      }
    };
  };
  // API Priority and Fairness (--enable-priority-and-fairness, default on).
  const apf = cfg.enablePriorityAndFairness
    ? createApf({
        api,
        cacheOf,
        metrics,
        serverConcurrencyLimit: cfg.maxRequestsInflight + cfg.maxMutatingRequestsInflight,
        requestTimeoutMs: cfg.requestTimeoutMs,
        log,
      })
    : undefined;
  const chain = buildHandler({
    authn: new TokenAuthenticator(users, saStore ? { tokens: saTokens, account: accountUid(saStore) } : undefined),
    authz: authorizer,
    audit: auditor,
    discovery,
    openapi: new OpenApi(api, schemas),
    resources: new ResourceHandler(api, watches, {
      compression: cfg.featureGates.APIResponseCompression === true,
      unsafeDelete: cfg.featureGates.AllowUnsafeMalformedObjectDeletion === true,
      protobuf,
      cbor,
      codecPool,
      review: (kind, body, user, namespace) => review(kind, body, user, namespace, authorizer, rbac),
      tokens: saTokens,
      onDeprecated: (def, subresource) =>
        metrics.observeDeprecated({ group: def.group, version: def.version, resource: def.plural, subresource, removedRelease: '' }),
    }),
    metrics,
    apf: apf?.fc,
    maxInflight: cfg.maxRequestsInflight,
    maxMutatingInflight: cfg.maxMutatingRequestsInflight,
    requestTimeoutMs: cfg.requestTimeoutMs,
    log,
  });
  const app = frontEnd({
    chain,
    health,
    version: () => reply(discovery.get('/version')),
    metrics: async () => replyText(await metrics.text(), 200, 'text/plain; version=0.0.4; charset=utf-8'),
    issuer: {
      configuration: () => reply(saTokens.openidConfiguration()),
      jwks: () => replyText(JSON.stringify(saTokens.jwks()), 200, 'application/jwk-set+json'),
    },
    debug: {
      // The store's counters and the process's memory, for load tests watching the server.
      runtime: () => reply({ store: backend.stats(), memory: process.memoryUsage(), uptimeSeconds: Math.round(process.uptime()) }),
      ...apf?.debug,
    },
  });
  const server = listen(app, { hostname: cfg.bindAddress, port: cfg.port, tls: { cert: certs.cert, key: certs.key } });
  // Post-start: the in-process controllers. Those that write on the cluster's behalf (garbage
  // collector, namespace lifecycle, disruption, quota, service accounts, role aggregation, policy
  // status, the APF bootstrap objects) run on one replica at a time: on etcd the replicas elect
  // one with a Lease in kube-system; the embedded store has one replica, always the leader.
  const pdbStore = api.lookup('policy', 'v1', 'poddisruptionbudgets');
  const podsForPdb = api.lookup('', 'v1', 'pods');
  const clusterRoleStore = api.lookup(RBAC_GROUP, 'v1', 'clusterroles');
  interface LeaderControllers {
    gc: GarbageCollector;
    stop(): void;
  }
  let leaderControllers: LeaderControllers | undefined;
  const startLeaderControllers = async (): Promise<void> => {
    const gc = new GarbageCollector(api, cacheOf, { log });
    const nsCache = nsStore ? cacheOf(nsStore) : undefined;
    const nsController = nsCache ? new NamespaceController(api, nsCache, { log }) : undefined;
    const disruption =
      pdbStore && podsForPdb
        ? new DisruptionController(pdbStore, cacheOf(pdbStore), podsForPdb, cacheOf(podsForPdb), api, { log })
        : undefined;
    const quotaController = quotaStore
      ? new ResourceQuotaController(api, quotaStore, cacheOf, { resyncMs: cfg.resourceQuotaSyncPeriodMs, log })
      : undefined;
    const aggregation = clusterRoleStore ? new ClusterRoleAggregation(clusterRoleStore, cacheOf(clusterRoleStore), log) : undefined;
    const saController = saStore && nsStore ? new ServiceAccountController(cacheOf(nsStore), saStore, cacheOf(saStore), log) : undefined;
    const set: LeaderControllers = {
      gc,
      stop: () => {
        gc.stop();
        disruption?.stop();
        quotaController?.stop();
        saController?.stop();
        aggregation?.stop();
        nsController?.stop();
        if (apf) apf.controller.leading = false;
      },
    };
    leaderControllers = set;
    if (apf) apf.controller.leading = true;
    await Promise.all([
      saController?.start(),
      rbacFollowed.then(() => aggregation?.start()),
      gc.start(),
      nsController?.start(),
      disruption?.start(),
      quotaController?.start(),
    ]);
  };
  // Custom resources: the CRD controller serves each CRD's versions through the same registry.
  const crdStore = api.lookup('apiextensions.svc.io', 'v1', 'customresourcedefinitions');
  const stopCache = (s: ResourceStore | undefined) => {
    if (!s) return;
    caches.get(s)?.stop();
    caches.delete(s);
  };
  const crdController = crdStore
    ? new CrdController(
        crdStore,
        cacheOf(crdStore),
        {
          install: ({ def, schema, list }) => {
            schemas.define(def.schema, schema);
            schemas.define(`${def.schema}List`, list);
            stopCache(api.lookup(def.group, def.version, def.plural));
            const s = api.add(def);
            const plugins = [...(def.namespaced && quotaPlugin ? [quotaPlugin] : []), ...(policyAdmission ? [policyAdmission] : [])];
            if (plugins.length > 0) s.admission = new AdmissionChain(plugins);
            cacheOf(s);
            // Owner references on custom resources are followed like any others.
            if (leaderControllers) void leaderControllers.gc.watchStore(s);
            return s;
          },
          uninstall: (group, version, plural) => stopCache(api.remove(group, version, plural)),
          builtinConflict: (group, plural, kind) =>
            api.stores.some((s) => !s.def.custom && s.def.group === group && (s.def.plural === plural || s.def.kind === kind)),
        },
        log,
      )
    : undefined;
  const rbacFollowed = followRbac();
  const leasesStore = api.lookup('coordination.svc.io', 'v1', 'leases');
  const elector =
    cfg.etcdServers.length > 0 && cfg.leaderElect && leasesStore
      ? new LeaderElector(leasesStore, {
          namespace: 'kube-system',
          name: 'svc-apiserver-controllers',
          leaseDurationMs: cfg.leaderElectLeaseDurationMs,
          renewDeadlineMs: cfg.leaderElectRenewDeadlineMs,
          retryPeriodMs: cfg.leaderElectRetryPeriodMs,
          log,
          onStartedLeading: () => {
            startLeaderControllers().catch((e) => log(`starting the controllers failed: ${e instanceof Error ? e.message : String(e)}`));
          },
          onStoppedLeading: () => {
            leaderControllers?.stop();
            leaderControllers = undefined;
          },
        })
      : undefined;
  // Until elected, this replica's APF controller only reads the configuration.
  if (apf && elector) apf.controller.leading = false;
  void Promise.all([
    rbacFollowed,
    crdController?.start(),
    policyAdmission?.start(),
    policyStatus?.start(),
    apf?.controller.start(),
    elector ? elector.start() : startLeaderControllers(),
  ]).then(
    () => {
      controllersStarted = true;
    },
    (e) => log(`starting the controllers failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`),
  );
  const url = `https://${host}:${server.port}`;
  const kubeconfig = writeKubeconfig(dataDir, url, certs.ca, token);
  log(`svc-apiserver serving on ${url} (store revision ${store.currentRevision()}, started in ${Date.now() - started} ms)`);
  process.stdout.write(`Admin kubeconfig: ${kubeconfig}\n  export KUBECONFIG=${kubeconfig}\n`);

  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    log(`${signal}: /readyz now failing; stopping in ${cfg.shutdownDelayMs} ms`);
    await Bun.sleep(cfg.shutdownDelayMs);
    // Stop accepting, let in-flight requests finish (watches are ended), then sync the store.
    await elector?.stop();
    leaderControllers?.stop();
    apf?.controller.stop();
    policyAdmission?.stop();
    policyStatus?.stop();
    crdController?.stop();
    celPool?.close();
    codecPool?.close();
    for (const w of watches.open) w.end('closed');
    for (const c of caches.values()) c.stop();
    // Graceful: in-flight requests may finish, bounded like the reference's shutdown timeout (a
    // client that never reads its response must not keep the process alive).
    const bound = Math.max(cfg.requestTimeoutMs, 1000);
    const stopped = await Promise.race([server.stop(false).then(() => true), Bun.sleep(bound).then(() => false)]);
    if (!stopped) {
      log(`requests still in flight after ${bound} ms; closing their connections`);
      await server.stop(true);
    }
    await auditLog?.flush();
    await store.close();
    log('shut down cleanly');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  // For benches (bench/memory.ts): SIGUSR2 runs a full garbage collection and logs the heap's
  // size and its most numerous object types, so memory is read after "a GC" as the targets say.
  if (process.env.SVC_DEBUG_HEAP_SIGNAL === '1') {
    process.on('SIGUSR2', () => {
      Bun.gc(true);
      const h = heapStats();
      const top = Object.entries(h.objectTypeCounts)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 12)
        .map(([t, n]) => `${t}=${n}`)
        .join(' ');
      log(`heap: size ${(h.heapSize / 2 ** 20).toFixed(1)} MiB, ${h.objectCount} objects; ${top}`);
    });
  }
}

// As the reference recovers a handler that panics: a stray failure outside any request's own
// error handling is logged and the server goes on (Bun would otherwise exit on it).
process.on('unhandledRejection', (e) => log(`unhandled rejection: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`));
process.on('uncaughtException', (e) => log(`uncaught exception: ${e.stack ?? e.message}`));

await main(process.argv.slice(2));
