/**
 * Aggregated APIs (the reference's kube-aggregator): an apiregistration APIService with
 * `spec.service` hands its group version to another API server. This folder holds
 *
 *   api-services.ts   the remote APIServices by group version, from the APIService watch cache
 *   resolver.ts       Service → endpoint address (EndpointSlices, else Endpoints)
 *   transport.ts      HTTPS to a backend (caBundle / insecureSkipTLSVerify), Go's error words
 *   proxy.ts          the proxy: the user's headers, streaming, the 503s
 *   upgrade.ts        upgrade requests (exec, port-forward): WebSockets proxied message by message
 *   ws-frames.ts      the WebSocket frames of the backend side
 *   availability.ts   the Available condition from health checks (written on the leader)
 *   discovery.ts      remote group versions merged into /apis and /apis/<group>; the backends'
 *                     resource lists and OpenAPI v3 URLs (fetched on change and every 30 s) for
 *                     aggregated discovery and the /openapi/v3 index
 *
 * and this builder, which the HTTP front end calls: `route` answers a request for a remote group
 * version (after this server's authentication and authorization), or says it is served here;
 * `discovery` merges the remote group versions into a discovery document; `groupVersions` gives
 * them with their resources to the aggregated discovery document (src/http/discovery-v2.ts);
 * `openapiV3Paths` lists their OpenAPI v3 documents, which `route` proxies
 * (/openapi/v3/apis/<group>/<version>). Local APIServices
 * (every group version this server serves) are untouched: their requests never reach the proxy.
 */
import * as https from 'node:https';
import type { Obj } from '../api/meta';
import type { RequestInfo, RequestUrl } from '../api/request-info';
import { requestUser } from '../auth/request-user';
import { type Cached, SERVICE_NAME_LABEL, ServiceResolver } from '../kinds/service-resolver';
import type { ApiRegistry } from '../registry/api-registry';
import type { WatchCache } from '../watch/cache';
import type { Watcher, WatcherEvent } from '../watch/watcher';
import { conditionOf, RemoteApiServices } from './api-services';
import { AvailabilityController } from './availability';
import { mergeDiscovery, RemoteDiscovery, type RemoteGroupVersion } from './discovery';
import { proxy, proxyError } from './proxy';
import { backendTls, type ProxyClientCert, send } from './transport';
import type { AcceptUpgrade } from './upgrade';

export interface AggregatorOptions {
  /** Every remote APIService is checked this often (the reference's 30 s). */
  resyncMs?: number;
  /** A health check waits this long for the backend (the reference's 5 s). */
  checkTimeoutMs?: number;
  /** The RemoteRequestHeaderUID gate: the user's UID goes to backends as X-Remote-Uid. */
  remoteUid?: boolean;
  /** --proxy-client-cert-file / --proxy-client-key-file, read: presented to every backend. */
  clientCert?: ProxyClientCert;
  log: (msg: string) => void;
}

export interface Aggregator {
  /**
   * The answer of the backend for a request to a remote group version, or undefined when the
   * group version is served here. Call after authentication and authorization.
   */
  route(req: Request, info: RequestInfo, url: RequestUrl, auditId: string): Promise<Response> | undefined;
  /** The discovery document at `path` with the remote group versions merged into `local`. */
  discovery(path: string, local: unknown): unknown;
  /** The remote group versions with their resources, for the aggregated discovery document. */
  groupVersions(): RemoteGroupVersion[];
  /** The /openapi/v3 index entries of the remote group versions (their documents are proxied). */
  openapiV3Paths(): Record<string, { serverRelativeURL: string }> | undefined;
  /** The front end's WebSocket upgrade, once it listens: upgrade requests are proxied through it. */
  set upgrader(a: AcceptUpgrade);
  /** This replica runs the controllers: it checks availability and writes the condition. */
  set leading(on: boolean);
  /** The aggregator's metrics in the Prometheus text format (aggregator_unavailable_apiservice[_total]). */
  metrics(out: string[]): void;
  /** Follow the APIServices, Services and EndpointSlices; start checking. */
  start(): Promise<void>;
  stop(): void;
}

/**
 * Call `changed` with every batch of events of `cache` until `stopped` says so; the watcher is
 * kept in `watchers` (ended on stop) and taken up again when the cache ends it (too slow, relisted).
 */
async function follow(
  cache: WatchCache,
  changed: (events: readonly WatcherEvent[]) => void,
  stopped: () => boolean,
  watchers: Set<Watcher>,
): Promise<void> {
  await cache.start();
  const { watcher } = cache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
  watchers.add(watcher);
  void (async () => {
    while (!stopped() && !watcher.ended) {
      const events = await watcher.next(Number.POSITIVE_INFINITY);
      if (events.length > 0 && !stopped()) changed(events);
    }
    watchers.delete(watcher);
    if (!stopped()) void follow(cache, changed, stopped, watchers);
  })();
}

/** The aggregator over the registry's APIServices, or undefined when the server has no watch caches. */
export function createAggregator(api: ApiRegistry, o: AggregatorOptions): Aggregator | undefined {
  const cached = (group: string, version: string, plural: string): Cached | undefined => {
    const store = api.lookup(group, version, plural);
    return store?.cache ? { store, cache: store.cache } : undefined;
  };
  const apiServices = cached('apiregistration.svc.io', 'v1', 'apiservices');
  const services = cached('', 'v1', 'services');
  if (!apiServices || !services) return undefined;
  const resolver = new ServiceResolver(services, cached('discovery.svc.io', 'v1', 'endpointslices'), cached('', 'v1', 'endpoints'));
  const remotes = new RemoteApiServices(apiServices.cache);
  const agent = new https.Agent({ keepAlive: true });
  const availability = new AvailabilityController(apiServices.store, remotes, resolver, agent, {
    resyncMs: o.resyncMs ?? 30_000,
    checkTimeoutMs: o.checkTimeoutMs ?? 5000,
    clientCert: o.clientCert,
    log: o.log,
  });
  // The backends' resource lists, for aggregated discovery: asked as the availability check asks.
  const lists = new RemoteDiscovery(
    remotes,
    async (r, signal) => {
      const hostPort = resolver.resolve(r.service.namespace, r.service.name, r.service.port);
      const get = async (path: string) => {
        const res = await send({
          hostPort,
          path,
          method: 'GET',
          headers: { 'X-Remote-User': 'system:kube-aggregator', 'X-Remote-Group': ['system:masters'], Accept: 'application/json' },
          tls: backendTls(r, o.clientCert),
          signal,
          agent,
        });
        if (res.status !== 200) {
          await res.body?.cancel();
          throw new Error(`bad status ${res.status} from ${path}`);
        }
        return (await res.json()) as Record<string, unknown>;
      };
      const list = await get(`/apis/${r.group}/${r.version}`);
      const resources = Array.isArray(list.resources) ? (list.resources as Record<string, unknown>[]) : [];
      // The OpenAPI v3 document, when the backend publishes one (kubectl explain reads it).
      const index = await get('/openapi/v3').catch(() => undefined);
      const entry = (index?.paths as Record<string, { serverRelativeURL?: unknown }> | undefined)?.[`apis/${r.group}/${r.version}`];
      const openapi =
        typeof entry?.serverRelativeURL === 'string' && entry.serverRelativeURL.startsWith('/openapi/v3/')
          ? entry.serverRelativeURL
          : undefined;
      return { resources, openapi };
    },
    { intervalMs: o.resyncMs ?? 30_000, timeoutMs: o.checkTimeoutMs ?? 5000, log: o.log },
  );
  let stopped = false;
  const isStopped = () => stopped;
  let accept: AcceptUpgrade | undefined;
  const watchers = new Set<Watcher>();

  return {
    route(req, info, url, auditId) {
      if (remotes.size === 0) return undefined;
      // ['', 'apis', group, version, ...rest]: a resource request or the group version's discovery;
      // ['', 'openapi', 'v3', 'apis', group, version]: its OpenAPI v3 document.
      const segs = url.pathname.split('/');
      const at = segs[1] === 'apis' ? 2 : segs[1] === 'openapi' && segs[2] === 'v3' && segs[3] === 'apis' ? 4 : -1;
      if (at < 0 || segs.length < at + 2) return undefined;
      const remote = remotes.route(segs[at] as string, segs[at + 1] as string);
      if (!remote) return undefined;
      const rest = segs.slice(at + 2);
      const user = requestUser(req);
      if (!user) return Promise.resolve(proxyError('missing user', 500));
      const discovery = at === 2 && !info.isResourceRequest && rest.filter((s) => s !== '').length === 0;
      const path = [...segs.slice(0, at), remote.group, remote.version, ...rest].join('/');
      return proxy(
        req,
        { remote, path, query: url.searchParams.toString(), discovery },
        user,
        auditId,
        resolver,
        agent,
        (r) => availability.queue(r.name),
        { withUid: o.remoteUid === true, clientCert: o.clientCert, accept },
      );
    },
    discovery(path, local) {
      return remotes.size === 0 ? local : mergeDiscovery(path, local, remotes.all());
    },
    groupVersions() {
      return remotes.size === 0 ? [] : lists.groupVersions();
    },
    openapiV3Paths() {
      return remotes.size === 0 ? undefined : lists.openapiV3Paths();
    },
    set upgrader(a: AcceptUpgrade) {
      accept = a;
    },
    set leading(on: boolean) {
      availability.leading = on;
      if (on) availability.queueAll();
    },
    metrics(out) {
      const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
      out.push(
        '# HELP aggregator_unavailable_apiservice [ALPHA] Gauge of APIServices which are marked as unavailable broken down by APIService name.',
        '# TYPE aggregator_unavailable_apiservice gauge',
      );
      for (const c of apiServices.cache.list()) {
        const o = c.obj;
        const up = conditionOf(o, 'Available')?.status === 'True';
        out.push(`aggregator_unavailable_apiservice{name="${esc(String(o.metadata.name))}"} ${up ? 0 : 1}`);
      }
      out.push(
        '# HELP aggregator_unavailable_apiservice_total [ALPHA] Counter of APIServices which are marked as unavailable broken down by APIService name and reason.',
        '# TYPE aggregator_unavailable_apiservice_total counter',
      );
      for (const [name, byReason] of availability.unavailableTotal) {
        for (const [reason, n] of byReason)
          out.push(`aggregator_unavailable_apiservice_total{name="${esc(name)}",reason="${esc(reason)}"} ${n}`);
      }
    },
    async start() {
      await follow(
        apiServices.cache,
        (events) => {
          remotes.refresh();
          // The APIServices that changed (a new one, a new service or CA, our own status write).
          for (const e of events) {
            const name = e.obj.metadata.name as string;
            if (remotes.get(name)) availability.queue(name);
            void lists.refresh(name);
          }
        },
        isStopped,
        watchers,
      );
      remotes.refresh();
      // A change of a Service, its Endpoints or its EndpointSlices: check the APIServices naming it.
      const bySlice = (o: Obj) => `${o.metadata.namespace}/${o.metadata.labels?.[SERVICE_NAME_LABEL] ?? ''}`;
      const byName = (o: Obj) => `${o.metadata.namespace}/${o.metadata.name}`;
      const sources: [Cached | undefined, (o: Obj) => string][] = [
        [services, byName],
        [cached('', 'v1', 'endpoints'), byName],
        [cached('discovery.svc.io', 'v1', 'endpointslices'), bySlice],
      ];
      for (const [c, serviceOf] of sources) {
        if (!c) continue;
        await follow(
          c.cache,
          (events) => {
            if (remotes.size === 0) return;
            const changed = new Set(events.map((e) => serviceOf(e.obj)));
            for (const r of remotes.all()) if (changed.has(`${r.service.namespace}/${r.service.name}`)) availability.queue(r.name);
          },
          isStopped,
          watchers,
        );
      }
      availability.start();
      lists.start();
    },
    stop() {
      stopped = true;
      for (const w of watchers) w.end('closed');
      availability.stop();
      lists.stop();
      agent.destroy();
    },
  };
}
