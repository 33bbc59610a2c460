/**
 * The APIServices the server lists (apiregistration.svc.io/v1): one per served group version,
 * Local (served here) and Available, as the reference's aggregator registers its built-in groups
 * at start (label kube-aggregator.kubernetes.io/automanaged: onstart) and a CRD's group while the
 * CRD serves it (automanaged: true). Names use the group as stored, in the svc spelling
 * (`v1.apps`, `v1.scheduling.svc.io`); the brand view shows apiVersions in either spelling, not
 * names, as it does for every object.
 *
 * The set follows the registry: created at start, then kept in step whenever a kind is added
 * or removed (custom resources).
 */
import { now, type Obj } from '../api/meta';
import { StatusError } from '../api/status';
import type { ApiRegistry } from './api-registry';
import type { ResourceStore } from './generic';
import { ALL_OBJECTS, listedObjects } from './list';
import type { WriteOptions } from './options';

export const APISERVICE_GROUP = 'apiregistration.svc.io';
const AUTOMANAGED = 'kube-aggregator.kubernetes.io/automanaged';

/** The reference's priorities of the built-in group versions (kube-apiserver's aggregator.go), by group. */
const PRIORITIES: Record<string, [group: number, version: number]> = {
  '': [18000, 1],
  'events.svc.io': [17750, 15],
  apps: [17800, 15],
  'authentication.svc.io': [17700, 15],
  'authorization.svc.io': [17600, 15],
  autoscaling: [17500, 15],
  batch: [17400, 15],
  'certificates.svc.io': [17300, 15],
  'networking.svc.io': [17200, 15],
  policy: [17100, 15],
  'rbac.authorization.svc.io': [17000, 15],
  'storage.svc.io': [16800, 15],
  'apiextensions.svc.io': [16700, 15],
  'admissionregistration.svc.io': [16700, 15],
  'scheduling.svc.io': [16600, 15],
  'coordination.svc.io': [16500, 15],
  'node.svc.io': [16300, 15],
  'discovery.svc.io': [16200, 15],
  'flowcontrol.apiserver.svc.io': [16100, 21],
  'apiregistration.svc.io': [18000, 15],
  // metrics-server's APIService (served here, not aggregated).
  'metrics.svc.io': [100, 100],
};

const write = (): WriteOptions => ({ dryRun: false, fieldValidation: 'Ignore', warnings: [], fieldManager: 'kube-apiserver' });
const ignoreStatus = (code: number) => (e: unknown) => {
  if (!(e instanceof StatusError) || e.code !== code) throw e;
};

export const apiServiceName = (group: string, version: string): string => `${version}.${group}`;

/** The APIService of a served group version. */
function desired(group: string, version: string, custom: boolean): Obj {
  const [gp, vp] = PRIORITIES[group] ?? (custom ? [1000, 100] : [1000, 15]);
  return {
    apiVersion: `${APISERVICE_GROUP}/v1`,
    kind: 'APIService',
    metadata: { name: apiServiceName(group, version), labels: { [AUTOMANAGED]: custom ? 'true' : 'onstart' } },
    spec: { group, version, groupPriorityMinimum: gp, versionPriority: vp },
  };
}

const available = (o: Obj): boolean =>
  ((o.status as { conditions?: Record<string, unknown>[] } | undefined)?.conditions ?? []).some(
    (c) => c.type === 'Available' && c.status === 'True',
  );

/** Set the Available condition (True, Local) unless it is set already (objects of older servers). */
async function markAvailable(s: ResourceStore, name: string): Promise<void> {
  await s.updateFrom('', name, 'status', write(), (cur) => {
    if (available(cur as Obj)) return cur as Obj;
    const next = structuredClone(cur) as Obj;
    next.status = {
      conditions: [
        {
          type: 'Available',
          status: 'True',
          lastTransitionTime: now(),
          reason: 'Local',
          message: 'Local APIServices are always available',
        },
      ],
    };
    return next;
  });
}

/**
 * Create what is missing; remove automanaged ones no longer served: built-in ones (onstart) not
 * served now, and custom ones this process served and no longer does (a custom group not served
 * yet at start, its CRD still to be loaded, keeps its APIService). `served`: names wanted so far.
 */
async function reconcile(api: ApiRegistry, s: ResourceStore, served: Set<string>): Promise<void> {
  const want = new Map<string, Obj>();
  for (const g of api.groups()) {
    for (const v of g.versions) {
      const custom = api.resources(g.group, v).every((r) => r.def.custom === true);
      want.set(apiServiceName(g.group, v), desired(g.group, v, custom));
    }
  }
  const have = listedObjects(await s.list('', ALL_OBJECTS));
  const present = new Map(have.map((o) => [o.metadata.name, o]));
  // All at once (one log sync for the lot at start).
  await Promise.all(
    [...want].map(async ([name, o]) => {
      served.add(name);
      const cur = present.get(name);
      // A new local APIService is available from its creation on (its strategy); an older one is marked.
      if (!cur) await s.create('', o, write()).catch(ignoreStatus(409));
      // One pointed at a backend (spec.service) is the aggregator's to check (src/aggregation/).
      else if (!available(cur) && !(cur.spec as { service?: unknown } | undefined)?.service)
        await markAvailable(s, name).catch(ignoreStatus(404));
    }),
  );
  for (const o of have) {
    const name = o.metadata.name as string;
    const managed = o.metadata.labels?.[AUTOMANAGED];
    if (!want.has(name) && (managed === 'onstart' || (managed === 'true' && served.has(name)))) {
      served.delete(name);
      await s.delete('', name, { dryRun: false }).catch(ignoreStatus(404));
    }
  }
}

/**
 * Create the APIServices of the served group versions, then follow the registry. Answers once
 * the first pass is done.
 */
export async function followApiServices(api: ApiRegistry, log: (msg: string) => void): Promise<void> {
  const s = api.lookup(APISERVICE_GROUP, 'v1', 'apiservices');
  if (!s) return;
  const served = new Set<string>();
  await reconcile(api, s, served);
  let running: Promise<void> | undefined;
  let again = false;
  const run = (): void => {
    if (running) {
      again = true;
      return;
    }
    running = reconcile(api, s, served)
      .catch((e) => log(`apiservices: ${(e as Error).message}`))
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          run();
        }
      });
  };
  api.onChange(run);
}
