/**
 * API Priority and Fairness as the server wires it: the FlowControl filter, its configuration
 * controller over the two kinds' stores and watch caches, its metrics and its debug dumps.
 */
import type { ResourceRequest } from '../api/request-info';
import type { ApiRegistry } from '../registry/api-registry';
import { bootstrapConfig } from './bootstrap-config';
import { ApfConfigController } from './config-controller';
import { dumpPriorityLevels, dumpQueues, dumpRequests } from './debug';
import { FlowControl } from './flow-control';
import { flowControlMetrics } from './metrics';
import type { ResourceCounts } from './work-estimate';

export const FLOWCONTROL_GROUP = 'flowcontrol.apiserver.svc.io';
/** Objects read to estimate a resource's average stored size. */
const AVERAGE_SAMPLE = 64;

export interface ApfDeps {
  api: ApiRegistry;
  /** Where /metrics collects its text from: the flow control's families are added here. */
  metrics: { readonly sources: ((out: string[]) => void)[] };
  /** --max-requests-inflight + --max-mutating-requests-inflight. */
  serverConcurrencyLimit: number;
  requestTimeoutMs: number;
  /** The gate SizeBasedListCostEstimate: LIST seats by bytes rather than objects. */
  sizeBasedListEstimate?: boolean;
  log: (msg: string) => void;
}

export interface Apf {
  fc: FlowControl;
  controller: ApfConfigController;
  debug: Record<string, (req?: Request) => Response>;
}

/** undefined when the two kinds are not served or there are no seats to share. */
export function createApf(d: ApfDeps): Apf | undefined {
  const fsStore = d.api.lookup(FLOWCONTROL_GROUP, 'v1', 'flowschemas');
  const plStore = d.api.lookup(FLOWCONTROL_GROUP, 'v1', 'prioritylevelconfigurations');
  if (!fsStore || !plStore) return undefined;
  if (d.serverConcurrencyLimit <= 0) {
    d.log('priority and fairness needs --max-requests-inflight + --max-mutating-requests-inflight > 0; it is off');
    return undefined;
  }
  // The resource's objects in all namespaces (the reference counts per group and resource) and,
  // for size-based estimates, their average stored size from a sample of the cache's first
  // objects, taken at most once a second per resource.
  const averages = new Map<string, { at: number; bytes: number }>();
  const counts = (info: ResourceRequest): ResourceCounts => {
    const s = d.api.lookup(info.group, info.version, info.resource);
    const c = s?.cache;
    if (!s || !c) return { objects: 0, watchers: 0 };
    const averageBytes = () => {
      const now = performance.now();
      const known = averages.get(s.prefix);
      if (known && now - known.at < 1000) return known.bytes;
      const sample = c.list('', AVERAGE_SAMPLE);
      let sum = 0;
      for (const o of sample) sum += o.value.length;
      const bytes = sample.length > 0 ? sum / sample.length : 0;
      averages.set(s.prefix, { at: now, bytes });
      return bytes;
    };
    return { objects: c.size(''), watchers: c.watcherCount, averageBytes };
  };
  const fc = new FlowControl({
    serverConcurrencyLimit: d.serverConcurrencyLimit,
    // The reference: a quarter of the request timeout (15 s of the default minute).
    requestWaitLimitMs: d.requestTimeoutMs > 0 ? d.requestTimeoutMs / 4 : 15_000,
    counts,
    sizeBasedListEstimate: d.sizeBasedListEstimate,
  });
  // Until the controller has read the stored objects, the bootstrap configuration classifies.
  const boot = bootstrapConfig();
  fc.configure(
    [...boot.mandatory.flowSchemas, ...boot.suggested.flowSchemas],
    [...boot.mandatory.priorityLevels, ...boot.suggested.priorityLevels],
  );
  const controller = new ApfConfigController(
    fc,
    { store: fsStore, cache: fsStore.watchCache() },
    { store: plStore, cache: plStore.watchCache() },
    d.log,
  );
  d.metrics.sources.push((out) => flowControlMetrics(fc, out));
  const text = (body: string) => new Response(body, { headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
  return {
    fc,
    controller,
    debug: {
      'api_priority_and_fairness/dump_priority_levels': () => text(dumpPriorityLevels(fc)),
      'api_priority_and_fairness/dump_queues': () => text(dumpQueues(fc)),
      'api_priority_and_fairness/dump_requests': (req) => {
        const q = req ? new URL(req.url).searchParams.get('includeRequestDetails') : null;
        return text(dumpRequests(fc, q === '1' || q === 'true'));
      },
    },
  };
}
