/**
 * The Available condition of remote APIServices (the reference's remote
 * AvailableConditionController): for each APIService with `spec.service`, in order,
 *
 *   the Service exists                          else False ServiceNotFound
 *   (ClusterIP) it has the APIService's port    else False ServicePortError
 *   (ClusterIP) it has EndpointSlices           else False EndpointsNotFound
 *   (ClusterIP) one has a ready endpoint with
 *               the port's name                 else False MissingEndpoints
 *   GET /apis/<group>/<version> of the backend
 *   answers 2xx within 5 s (5 tries at
 *   once, one success is enough)                else False FailedDiscoveryCheck
 *                                               then True Passed "all checks passed"
 *
 * Checked when an APIService, a Service or an EndpointSlice changes, every 30 s (the
 * reference's resync), again after a failed check (backing off from 5 ms to 30 s), and at once
 * when the proxy could not reach a backend. Status is written through the registry, only by the
 * replica that runs the controllers (`leading`), and only when it changes; lastTransitionTime
 * moves only when the status does (SetAPIServiceCondition).
 */
import type * as https from 'node:https';
import { deepEqual, now, type Obj } from '../api/meta';
import { StatusError } from '../api/status';
import { ResolveError, type ServiceResolver } from '../kinds/service-resolver';
import type { ResourceStore } from '../registry/generic';
import type { WriteOptions } from '../registry/options';
import { conditionOf, type RemoteApiService, type RemoteApiServices } from './api-services';
import { checkTls, type ProxyClientCert, send, transportError } from './transport';

export interface AvailabilityOptions {
  /** Every APIService is checked this often (the reference's 30 s resync). */
  resyncMs: number;
  /** A discovery check waits this long for the backend (the reference's client timeout, 5 s). */
  checkTimeoutMs: number;
  /** The proxy's client certificate, presented by the checks too. */
  clientCert?: ProxyClientCert;
  log: (msg: string) => void;
}

interface Condition {
  type: 'Available';
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime?: string;
}

const ATTEMPTS = 5;
const MIN_BACKOFF_MS = 5;
const MAX_BACKOFF_MS = 30_000;

const write = (): WriteOptions => ({ dryRun: false, fieldValidation: 'Ignore', warnings: [], fieldManager: 'kube-apiserver' });

/** The APIService's status with `c` set (SetAPIServiceCondition: the transition time moves with the status). */
export function withCondition(o: Obj, c: Condition): Record<string, unknown> {
  const status = structuredClone((o.status ?? {}) as Record<string, unknown>);
  const conds = Array.isArray(status.conditions) ? (status.conditions as Record<string, unknown>[]) : [];
  const cur = conds.find((x) => x.type === c.type);
  if (!cur) conds.push({ ...c, lastTransitionTime: now() });
  else {
    if (cur.status !== c.status) {
      cur.status = c.status;
      cur.lastTransitionTime = now();
    }
    cur.reason = c.reason;
    cur.message = c.message;
  }
  status.conditions = conds;
  return status;
}

export class AvailabilityController {
  /** This replica runs the controllers: it checks and writes. */
  leading = false;
  private readonly queued = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly retries = new Map<string, ReturnType<typeof setTimeout>>();
  private draining = false;
  /** aggregator_unavailable_apiservice_total: name → reason → times marked unavailable by this replica. */
  readonly unavailableTotal = new Map<string, Map<string, number>>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly store: ResourceStore,
    private readonly remotes: RemoteApiServices,
    private readonly resolver: ServiceResolver,
    private readonly agent: https.Agent,
    private readonly o: AvailabilityOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.queueAll(), this.o.resyncMs);
    this.timer.unref();
    this.queueAll();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    for (const t of this.retries.values()) clearTimeout(t);
    this.retries.clear();
    this.queued.clear();
  }

  /** Check every remote APIService (something they depend on changed). */
  queueAll(): void {
    for (const r of this.remotes.all()) this.queue(r.name);
  }

  queue(name: string): void {
    if (!this.leading) return;
    this.queued.add(name);
    void this.drain();
  }

  private async drain(): Promise<void> {
    if (this.draining) return;
    this.draining = true;
    try {
      while (this.queued.size > 0 && this.leading) {
        const batch = [...this.queued];
        this.queued.clear();
        await Promise.all(batch.map((n) => this.sync(n)));
      }
    } finally {
      this.draining = false;
    }
  }

  private async sync(name: string): Promise<void> {
    const r = this.remotes.get(name);
    if (!r) {
      this.failures.delete(name);
      return;
    }
    let c: Condition;
    try {
      c = await this.check(r);
    } catch (e) {
      this.o.log(`apiservice ${name}: availability check failed: ${(e as Error).message}`);
      return;
    }
    if (c.status === 'True') this.failures.delete(name);
    else this.retry(name);
    await this.writeStatus(r, c);
  }

  /** Queue `name` again after its backoff (5 ms doubling to 30 s, as the reference's rate limiter). */
  private retry(name: string): void {
    if (this.retries.has(name)) return;
    const n = this.failures.get(name) ?? 0;
    this.failures.set(name, n + 1);
    const delay = Math.min(MIN_BACKOFF_MS * 2 ** n, MAX_BACKOFF_MS);
    const t = setTimeout(() => {
      this.retries.delete(name);
      this.queue(name);
    }, delay);
    t.unref();
    this.retries.set(name, t);
  }

  private async writeStatus(r: RemoteApiService, c: Condition): Promise<void> {
    if (deepEqual(withCondition(r.obj, c), r.obj.status ?? {})) return;
    const cur = conditionOf(r.obj, 'Available');
    if (cur?.status !== c.status) {
      this.o.log(`apiservice ${r.name}: Available ${cur?.status ?? 'Unknown'} -> ${c.status} (${c.reason})`);
      // SetUnavailableCounter: counted when the condition turns from True to anything else.
      if (cur?.status === 'True') {
        const byReason = this.unavailableTotal.get(r.name) ?? new Map<string, number>();
        byReason.set(c.reason, (byReason.get(c.reason) ?? 0) + 1);
        this.unavailableTotal.set(r.name, byReason);
      }
    }
    try {
      await this.store.updateFrom('', r.name, 'status', write(), (o) => ({ ...(o as Obj), status: withCondition(o as Obj, c) }));
    } catch (e) {
      // Deleted meanwhile, or changed (its event queues it again).
      if (e instanceof StatusError && (e.code === 404 || e.code === 409)) return;
      this.o.log(`apiservice ${r.name}: writing status: ${(e as Error).message}`);
    }
  }

  /** The Available condition the APIService should have now. */
  async check(r: RemoteApiService): Promise<Condition> {
    const { namespace, name, port } = r.service;
    const no = (reason: string, message: string): Condition => ({ type: 'Available', status: 'False', reason, message });
    const svc = this.resolver.service(namespace, name);
    if (!svc) return no('ServiceNotFound', `service/${name} in "${namespace}" is not present`);
    const type = ((svc.spec as { type?: string } | undefined)?.type ?? '') || 'ClusterIP';
    if (type === 'ClusterIP') {
      const sp = this.resolver.servicePort(svc, port);
      if (!sp) return no('ServicePortError', `service/${name} in "${namespace}" is not listening on port ${port}`);
      const slices = this.resolver.slicesOf(namespace, name);
      if (slices.length === 0) return no('EndpointsNotFound', `cannot find endpointslices for service/${name} in "${namespace}"`);
      if (!this.resolver.hasAvailableEndpoint(slices, sp.name)) {
        return no('MissingEndpoints', `endpointslices for service/${name} in "${namespace}" have no addresses with port name "${sp.name}"`);
      }
    }
    const results = await Promise.all(Array.from({ length: ATTEMPTS }, () => this.discoveryCheck(r)));
    const failed = results.every((x) => x !== undefined);
    if (failed) return no('FailedDiscoveryCheck', results[results.length - 1] as string);
    return { type: 'Available', status: 'True', reason: 'Passed', message: 'all checks passed' };
  }

  /** One GET of the backend's discovery document: undefined when it answered 2xx, else why not. */
  private async discoveryCheck(r: RemoteApiService): Promise<string | undefined> {
    let hostPort: string;
    try {
      hostPort = this.resolver.resolve(r.service.namespace, r.service.name, r.service.port);
    } catch (e) {
      if (e instanceof ResolveError) return e.message;
      throw e;
    }
    const path = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
    const url = `https://${hostPort}${path}`;
    try {
      const res = await send({
        hostPort,
        path,
        method: 'GET',
        // The system:masters identity: the check always has access rights.
        headers: { 'X-Remote-User': 'system:kube-aggregator', 'X-Remote-Group': ['system:masters'] },
        tls: checkTls(this.o.clientCert),
        signal: AbortSignal.timeout(this.o.checkTimeoutMs),
        agent: this.agent,
      });
      await res.body?.cancel();
      if (res.status < 200 || res.status >= 300) {
        return `failing or missing response from ${url}: bad status from ${url}: ${res.status}`;
      }
      return undefined;
    } catch (e) {
      const why = transportError(e, hostPort);
      const text = why === 'context deadline exceeded' ? `${why} (Client.Timeout exceeded while awaiting headers)` : why;
      return `failing or missing response from ${url}: Get "${url}": ${text}`;
    }
  }
}
