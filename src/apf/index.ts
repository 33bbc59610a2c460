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

export const FLOWCONTROL_GROUP = 'flowcontrol.apiserver.svc.io';

export interface ApfDeps {
  api: ApiRegistry;
  /** Where /metrics collects its text from: the flow control's families are added here. */
  metrics: { readonly sources: ((out: string[]) => void)[] };
  /** --max-requests-inflight + --max-mutating-requests-inflight. */
  serverConcurrencyLimit: number;
  requestTimeoutMs: number;
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
  const counts = (info: ResourceRequest) => {
    const s = d.api.lookup(info.group, info.version, info.resource);
    const c = s?.cache;
    if (!s || !c) return { objects: 0, watchers: 0 };
    return { objects: c.size(info.namespace && s.def.namespaced ? `${s.prefix}${info.namespace}/` : ''), watchers: c.watcherCount };
  };
  const fc = new FlowControl({
    serverConcurrencyLimit: d.serverConcurrencyLimit,
    // The reference: a quarter of the request timeout (15 s of the default minute).
    requestWaitLimitMs: d.requestTimeoutMs > 0 ? d.requestTimeoutMs / 4 : 15_000,
    counts,
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
