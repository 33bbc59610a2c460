/**
 * The front end as the server builds it: the codecs, the handlers (resources, watches,
 * discovery, OpenAPI), the request filter chain, health checks with their post-start hooks, and
 * the listening server. `stop` ends the watches and lets in-flight requests finish.
 */

import { createAggregator } from '../aggregation/builder';
import type { Apf } from '../apf';
import type { Obj } from '../api/meta';
import type { Auditor } from '../auth/auditor';
import type { Authentication, Authorization } from '../auth/builder';
import { servingCerts } from '../auth/certs';
import { review, tokenReview } from '../auth/reviews';
import { CborCodec } from '../codec/cbor';
import { ProtobufCodec } from '../codec/protobuf';
import type { Config } from '../config/flags';
import type { Faults } from '../faults';
import type { ApiRegistry } from '../registry/api-registry';
import { ALL_OBJECTS, listedObjects } from '../registry/list';
import { loadDescriptions } from '../schema/descriptions';
import type { SchemaSet } from '../schema/engine';
import { nodeMetrics, podMetrics } from '../simulation/metrics';
import { CodecPool } from '../workers/codec-pool';
import { acceptUpgrade, frontEnd, listen, type UiMount } from './app';
import { Discovery } from './discovery';
import { HealthEndpoints } from './health';
import { listChunksEncoded, listHeldBytes } from './list-stream';
import type { Metrics } from './metrics';
import { OpenApi } from './openapi/handler';
import { ResourceHandler } from './resources';
import { reply, replyText } from './respond';
import { buildHandler } from './server';
import { WatchHandler } from './watch-handler';
import { batchWrites } from './write-batch';

export interface ServerState {
  /** Why the store does not work, or undefined (the `etcd` check). */
  store(): string | undefined;
  /** Post-start hooks: done or not (each fails /livez once the grace period is over, until done). */
  bootstrapped(): boolean;
  controllersStarted(): boolean;
  shuttingDown(): boolean;
  /** The store's counters and the process's memory, for /debug/runtime. */
  runtime(): unknown;
}

export interface FrontEndBuildDeps {
  cfg: Config;
  dataDir: string;
  api: ApiRegistry;
  schemas: SchemaSet;
  authz: Authorization;
  authn: Authentication;
  audit?: Auditor;
  apf?: Apf;
  /** Fault injection (gate FaultInjection). */
  faults?: Faults;
  metrics: Metrics;
  state: ServerState;
  started: number;
  /** The dashboard under /ui (src/ui/, built by main with --enable-ui). */
  ui?: UiMount;
  log: (msg: string) => void;
}

export async function createFrontEnd(d: FrontEndBuildDeps) {
  const { cfg, api, metrics, state } = d;
  const certs = await servingCerts(d.dataDir, cfg.bindAddress, cfg.tlsCertFile || undefined, cfg.tlsPrivateKeyFile || undefined);
  const livezGraceUntil = d.started + cfg.livezGracePeriodMs;
  const hook = (done: () => boolean) => () => (done() || Date.now() < livezGraceUntil ? undefined : 'not finished');
  const base = [
    { name: 'ping', check: () => undefined },
    { name: 'log', check: () => undefined },
    { name: 'etcd', check: state.store },
    { name: 'poststarthook/bootstrap-namespaces', check: hook(state.bootstrapped) },
    { name: 'poststarthook/start-controllers', check: hook(state.controllersStarted) },
  ];
  const health = new HealthEndpoints({
    livez: base,
    healthz: base,
    readyz: [...base, { name: 'shutdown', check: () => (state.shuttingDown() ? 'process is shutting down' : undefined) }],
  });
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
  metrics.sources.push((out) =>
    out.push(
      '# HELP svc_list_held_bytes Bytes of protobuf list encodings held between the two passes of their answers.',
      '# TYPE svc_list_held_bytes gauge',
      `svc_list_held_bytes ${listHeldBytes()}`,
      '# HELP svc_list_chunks_encoded_total Chunks of streamed lists encoded or compressed, in the codec pool or inline.',
      '# TYPE svc_list_chunks_encoded_total counter',
      `svc_list_chunks_encoded_total ${listChunksEncoded()}`,
    ),
  );
  metrics.sources.push((out) => cacheListMetrics(api, out));
  const protobuf = new ProtobufCodec(d.schemas);
  const cbor = cfg.featureGates.CBORServingAndStorage === true ? new CborCodec(d.schemas) : undefined;
  const watches = new WatchHandler({
    minRequestTimeoutSec: cfg.minRequestTimeoutSec,
    bookmarkIntervalMs: cfg.watchBookmarkIntervalMs,
    watchList: cfg.featureGates.WatchList === true,
    log: d.log,
  });
  const host = cfg.bindAddress.includes(':') ? `[${cfg.bindAddress}]` : cfg.bindAddress;
  const discovery = new Discovery(api, `${host}:${cfg.port}`, cfg.discoveryGroupOrder);
  // Aggregated APIs: APIServices with spec.service are proxied to their backends.
  const aggregator = createAggregator(api, {
    log: d.log,
    remoteUid: cfg.featureGates.RemoteRequestHeaderUID === true,
    clientCert: cfg.proxyClientCertFile
      ? { cert: await Bun.file(cfg.proxyClientCertFile).text(), key: await Bun.file(cfg.proxyClientKeyFile).text() }
      : undefined,
  });
  void aggregator?.start().catch((e) => d.log(`aggregation: ${(e as Error).message}`));
  if (aggregator) metrics.sources.push((out) => aggregator.metrics(out));
  const { authorizer, rbac } = d.authz;
  const saTokens = d.authn.serviceAccountTokens;
  const chain = buildHandler({
    authn: d.authn.authenticator,
    authz: authorizer,
    audit: d.audit,
    discovery,
    aggregator,
    openapi: new OpenApi(api, d.schemas, loadDescriptions),
    resources: new ResourceHandler(api, watches, {
      compression: cfg.featureGates.APIResponseCompression === true,
      unsafeDelete: cfg.featureGates.AllowUnsafeMalformedObjectDeletion === true,
      protobuf,
      cbor,
      codecPool,
      review: (kind, body, user, namespace) =>
        kind === 'TokenReview'
          ? tokenReview(body, d.authn.authenticator, [saTokens.issuer])
          : review(kind, body, user, namespace, authorizer, rbac),
      computed: async (kind, namespace) => {
        if (kind === 'ComponentStatus') return componentStatuses(cfg, state);
        if (kind === 'PodMetrics' || kind === 'NodeMetrics') return metricsOf(api, kind, namespace);
        return [];
      },
      tokens: saTokens,
      onDeprecated: (def, subresource) =>
        metrics.observeDeprecated({ group: def.group, version: def.version, resource: def.plural, subresource, removedRelease: '' }),
    }),
    metrics,
    apf: d.apf?.fc,
    maxInflight: cfg.maxRequestsInflight,
    maxMutatingInflight: cfg.maxMutatingRequestsInflight,
    requestTimeoutMs: cfg.requestTimeoutMs,
    faults: d.faults,
    log: d.log,
  });
  // Writes start a turn's batch at a time (src/http/write-batch.ts).
  const writes = batchWrites(chain);
  metrics.sources.push((out) =>
    out.push(
      '# HELP svc_write_batches_total Batches of writes started back to back in one turn of the event loop.',
      '# TYPE svc_write_batches_total counter',
      `svc_write_batches_total ${writes.batches}`,
      '# HELP svc_write_batched_requests_total Writes started in a batch.',
      '# TYPE svc_write_batched_requests_total counter',
      `svc_write_batched_requests_total ${writes.batched}`,
    ),
  );
  const app = frontEnd({
    chain: Object.assign(writes, { guarded: chain.guarded }),
    health,
    version: () => reply(discovery.get('/version')),
    metrics: async () => replyText(await metrics.text(), 200, 'text/plain; version=0.0.4; charset=utf-8'),
    issuer: {
      configuration: () => reply(saTokens.openidConfiguration()),
      jwks: () => replyText(JSON.stringify(saTokens.jwks()), 200, 'application/jwk-set+json'),
    },
    debug: { runtime: () => reply(state.runtime()), ...d.apf?.debug },
    ui: d.ui,
  });
  const server = listen(app, { hostname: cfg.bindAddress, port: cfg.port, tls: { cert: certs.cert, key: certs.key } });
  if (aggregator) aggregator.upgrader = acceptUpgrade(server);
  return {
    url: `https://${host}:${server.port}`,
    ca: certs.ca,
    /** Aggregated APIs: told whether this replica leads (it then writes the APIServices' Available condition). */
    aggregator,
    /** Stop accepting; end the watches; let in-flight requests finish within the request timeout. */
    async stop(): Promise<void> {
      for (const w of watches.open) w.end('closed');
      d.ui?.close();
      aggregator?.stop();
      codecPool?.close();
      // A client that never reads its response must not keep the process alive.
      const bound = Math.max(cfg.requestTimeoutMs, 1000);
      const stopped = await Promise.race([server.stop(false).then(() => true), Bun.sleep(bound).then(() => false)]);
      if (!stopped) {
        d.log(`requests still in flight after ${bound} ms; closing their connections`);
        await server.stop(true);
      }
    },
  };
}

/**
 * ComponentStatus (deprecated in the reference, still served): the scheduler, the controller
 * manager and the store, each Healthy or not. Here the first two run in this process.
 */
function componentStatuses(cfg: Config, state: ServerState): Obj[] {
  const status = (name: string, error: string | undefined): Obj => ({
    kind: 'ComponentStatus',
    apiVersion: 'v1',
    metadata: { name },
    conditions: [error === undefined ? { type: 'Healthy', status: 'True', message: 'ok' } : { type: 'Healthy', status: 'False', error }],
  });
  return [
    status(
      'scheduler',
      cfg.scheduler ? undefined : 'Get "https://127.0.0.1:10259/healthz": dial tcp 127.0.0.1:10259: connect: connection refused',
    ),
    status('controller-manager', state.controllersStarted() ? undefined : 'the controllers have not started yet'),
    status('etcd-0', state.store()),
  ];
}

/**
 * metrics.k8s.io's PodMetrics and NodeMetrics, as metrics-server would report them of the
 * simulated kubelets (src/simulation/metrics.ts), from the registry's pods and nodes.
 */
async function metricsOf(api: ApiRegistry, kind: 'PodMetrics' | 'NodeMetrics', namespace: string): Promise<Obj[]> {
  const list = async (plural: string, ns: string): Promise<Obj[]> => {
    const s = api.lookup('', 'v1', plural);
    return s ? listedObjects(await s.list(ns, ALL_OBJECTS)) : [];
  };
  if (kind === 'PodMetrics') return podMetrics(await list('pods', namespace));
  return nodeMetrics(await list('nodes', ''), await list('pods', ''));
}

/**
 * apiserver_cache_list_total as the reference counts it: lists served from a resource's watch
 * cache, by the index read. resource_prefix as the reference's: `/<plural>` for built-in kinds,
 * `/<group>/<plural>` for custom resources. With them, each cache's cold objects
 * (svc_watch_cache_packed_objects, svc_watch_cache_packed_values_total).
 */
function cacheListMetrics(api: ApiRegistry, out: string[]): void {
  out.push(
    '# HELP apiserver_cache_list_total [ALPHA] Number of LIST requests served from watch cache',
    '# TYPE apiserver_cache_list_total counter',
  );
  const packedNow: string[] = [];
  const packedTotal: string[] = [];
  const seen = new Set<string>();
  for (const s of api.stores) {
    const c = s.cache;
    if (c === undefined || seen.has(s.prefix)) continue;
    seen.add(s.prefix);
    const at = s.def.storedAs ?? s.def;
    const prefix = s.def.custom ? `/${at.group}/${at.plural}` : `/${at.plural}`;
    for (const [index, n] of c.listsServed) out.push(`apiserver_cache_list_total{index="${index}",resource_prefix="${prefix}"} ${n}`);
    const p = c.packedStats();
    if (p === undefined || p.total === 0) continue;
    packedNow.push(`svc_watch_cache_packed_objects{resource_prefix="${prefix}"} ${p.now}`);
    packedTotal.push(`svc_watch_cache_packed_values_total{resource_prefix="${prefix}"} ${p.total}`);
  }
  // Cold objects (src/watch/cold.ts): held packed now, and packed so far, per cache that packed any.
  out.push(
    '# HELP svc_watch_cache_packed_objects Objects a watch cache holds packed (cold) now.',
    '# TYPE svc_watch_cache_packed_objects gauge',
    ...packedNow,
    '# HELP svc_watch_cache_packed_values_total Values a watch cache has packed.',
    '# TYPE svc_watch_cache_packed_values_total counter',
    ...packedTotal,
  );
}
