/**
 * The in-process controllers as the server runs them. The CRD controller runs on every replica
 * (each serves the custom kinds through its own registry). Those that write on the cluster's
 * behalf (garbage collector, namespace lifecycle, disruption, quota, storage object protection,
 * the persistent volume binder, Endpoints and EndpointSlices, service accounts, role
 * aggregation, node lifecycle and taint eviction, ReplicaSets, ReplicationControllers,
 * Deployments, StatefulSets, DaemonSets, Jobs, CronJobs, TTL-after-finished, the pod garbage
 * collector and HorizontalPodAutoscalers, the node and kubelet simulation, and whatever
 * `leading` says, e.g. the APF bootstrap objects) run on one replica
 * at a time: on etcd the replicas elect one with a Lease in kube-system; the embedded store has
 * one replica, always the leader. New controllers register in `leaderSet`.
 */

import type { ConversionWebhooks } from '../admission/webhook/conversion';
import { type Config, controllerEnabled } from '../config/flags';
import type { ApiRegistry } from '../registry/api-registry';
import { EventRecorder } from '../registry/event-recorder';
import { CachedObjects } from '../scheduler/cluster-objects';
import { Scheduler } from '../scheduler/scheduler';
import type { SchemaSet } from '../schema/engine';
import { Simulation } from '../simulation/simulation';
import { ClusterRoleAggregation } from './cluster-role-aggregation';
import { CrdController } from './crd';
import { CronJobController } from './cronjob';
import { DaemonSetController } from './daemonset/controller';
import { DeploymentController } from './deployment/controller';
import { DisruptionController } from './disruption';
import { apiserverAddress, EndpointsController, hostIPv4Addresses } from './endpoints';
import { EndpointSliceController } from './endpointslice/controller';
import { EndpointSliceMirroringController } from './endpointslice/mirroring';
import { EventTtl } from './event-ttl';
import { GarbageCollector } from './gc';
import { HorizontalPodAutoscalerController } from './hpa/controller';
import { JobController } from './job/controller';
import { LeaderElector } from './leader-election';
import { NamespaceController } from './namespace';
import { DEFAULT_SERVICE_ACCOUNT, NamespaceObjects, rootCaConfigMap } from './namespace-objects';
import { NodeLifecycleController } from './node-lifecycle';
import { OwnerIndex } from './owner-index';
import { PodGarbageCollector } from './pod-gc';
import { REPLICATION_CONTROLLER, ReplicaSetController } from './replicaset';
import { ResourceQuotaController } from './resource-quota';
import { StatefulSetController } from './statefulset/controller';
import { StorageProtectionController } from './storage-protection';
import { TaintEviction } from './taint-eviction';
import { TtlAfterFinishedController } from './ttl-after-finished';
import { PersistentVolumeBinder } from './volumes/binder';

const RBAC_GROUP = 'rbac.authorization.svc.io';

export interface ControllerDeps {
  cfg: Config;
  api: ApiRegistry;
  schemas: SchemaSet;
  /** Resolves once authorization follows RBAC (role aggregation starts after it). */
  rbacFollowed: Promise<void>;
  /** The server's CA certificate (PEM), published in every namespace as ConfigMap kube-root-ca.crt. */
  rootCa?: string;
  /** Told when this replica starts and stops leading (the APF configuration controller). */
  leading?: (on: boolean) => void;
  /** CRD conversion webhooks (versions of a CRD with `conversion.strategy: Webhook`). */
  conversions?: ConversionWebhooks;
  log: (msg: string) => void;
}

/** One leader's running set: started together, stopped together. */
interface LeaderSet {
  gc: GarbageCollector;
  stop(): void;
}

export class Controllers {
  private leader: LeaderSet | undefined;
  private readonly crd: CrdController | undefined;
  private readonly elector: LeaderElector | undefined;

  constructor(private readonly d: ControllerDeps) {
    const { api, schemas } = d;
    // Custom resources: each CRD's versions are served through the same registry (the same
    // storage, admission and hooks as built-in kinds).
    const crdStore = api.lookup('apiextensions.svc.io', 'v1', 'customresourcedefinitions');
    this.crd = crdStore
      ? new CrdController(
          crdStore,
          crdStore.watchCache(),
          {
            install: ({ def: served, schema, list, webhook }) => {
              schemas.define(served.schema, schema);
              schemas.define(`${served.schema}List`, list);
              // Every version of a CRD converted by its webhook reads and writes the shared keys
              // through it (the storage version too: objects stored before it became the storage
              // version are converted when read).
              const def =
                webhook && served.storageVersion && d.conversions
                  ? {
                      ...served,
                      storageVersion: undefined,
                      convertedBy: d.conversions.mapping({
                        group: served.group,
                        kind: served.kind,
                        version: served.version,
                        storageVersion: served.storageVersion,
                        webhook,
                      }),
                    }
                  : served;
              const s = api.add(def);
              // Owner references on custom resources are followed like any others.
              if (this.leader) void this.leader.gc.watchStore(s);
              return s;
            },
            uninstall: (group, version, plural) => void api.remove(group, version, plural),
            builtinConflict: (group, plural, kind) =>
              api.stores.some((s) => !s.def.custom && s.def.group === group && (s.def.plural === plural || s.def.kind === kind)),
          },
          d.log,
        )
      : undefined;
    const leases = api.lookup('coordination.svc.io', 'v1', 'leases');
    const { cfg } = d;
    this.elector =
      cfg.etcdServers.length > 0 && cfg.leaderElect && leases
        ? new LeaderElector(leases, {
            namespace: 'kube-system',
            name: 'svc-apiserver-controllers',
            leaseDurationMs: cfg.leaderElectLeaseDurationMs,
            renewDeadlineMs: cfg.leaderElectRenewDeadlineMs,
            retryPeriodMs: cfg.leaderElectRetryPeriodMs,
            log: d.log,
            onStartedLeading: () => {
              this.startLeading().catch((e) => d.log(`starting the controllers failed: ${e instanceof Error ? e.message : String(e)}`));
            },
            onStoppedLeading: () => this.stopLeading(),
          })
        : undefined;
    // Until elected, this replica only reads.
    if (this.elector) d.leading?.(false);
  }

  /** Starts the CRD controller, and the leader set (now, or once elected). */
  async start(): Promise<void> {
    await Promise.all([this.crd?.start(), this.elector ? this.elector.start() : this.startLeading()]);
  }

  async stop(): Promise<void> {
    await this.elector?.stop();
    this.stopLeading();
    this.crd?.stop();
  }

  /** The controllers that write on the cluster's behalf: register new ones here. */
  private leaderSet(): { gc: GarbageCollector; all: { start(): Promise<void> | void; stop(): void }[] } {
    const { api, cfg, log } = this.d;
    const lookup = (group: string, plural: string) => api.lookup(group, 'v1', plural);
    const gc = new GarbageCollector(api, { log });
    const all: { start(): Promise<void> | void; stop(): void }[] = [gc];
    const namespaces = lookup('', 'namespaces');
    if (namespaces) all.push(new NamespaceController(api, namespaces.watchCache(), { log }));
    // The apiserver's --event-ttl (not a controller-manager controller: --controllers leaves it).
    const events = lookup('', 'events');
    if (events && cfg.eventTtlMs > 0) all.push(new EventTtl(events, events.watchCache(), cfg.eventTtlMs, { log }));
    const pdbs = lookup('policy', 'poddisruptionbudgets');
    const pods = lookup('', 'pods');
    if (pdbs && pods) all.push(new DisruptionController(pdbs, pdbs.watchCache(), pods, pods.watchCache(), api, { log }));
    const quotas = lookup('', 'resourcequotas');
    if (quotas) all.push(new ResourceQuotaController(api, quotas, { resyncMs: cfg.resourceQuotaSyncPeriodMs, log }));
    const clusterRoles = lookup(RBAC_GROUP, 'clusterroles');
    if (clusterRoles) {
      const aggregation = new ClusterRoleAggregation(clusterRoles, clusterRoles.watchCache(), log);
      all.push({ start: () => this.d.rbacFollowed.then(() => aggregation.start()), stop: () => aggregation.stop() });
    }
    const claims = lookup('', 'persistentvolumeclaims');
    const volumes = lookup('', 'persistentvolumes');
    if (claims && volumes && pods) {
      all.push(
        new StorageProtectionController(
          claims,
          claims.watchCache(),
          volumes,
          volumes.watchCache(),
          { cache: pods.watchCache(), prefix: pods.prefix },
          { log },
        ),
      );
    }
    const services = lookup('', 'services');
    const endpoints = lookup('', 'endpoints');
    const slices = api.lookup('discovery.svc.io', 'v1', 'endpointslices');
    if (services && endpoints && pods && controllerEnabled(cfg, 'endpoints-controller')) {
      // The `kubernetes` Service's own endpoints: only for a routable bind address (see endpoints.ts).
      const address = apiserverAddress(cfg.bindAddress, cfg.port, hostIPv4Addresses());
      const apiserver = address && slices ? { ...address, slices } : undefined;
      all.push(
        new EndpointsController(services, services.watchCache(), endpoints, endpoints.watchCache(), pods, pods.watchCache(), {
          log,
          apiserver,
        }),
      );
    }
    const nodes = lookup('', 'nodes');
    if (services && slices && pods && nodes && controllerEnabled(cfg, 'endpointslice-controller')) {
      all.push(
        new EndpointSliceController(
          services,
          services.watchCache(),
          slices,
          slices.watchCache(),
          pods,
          pods.watchCache(),
          { cache: nodes.watchCache(), prefix: nodes.prefix },
          { log },
        ),
      );
    }
    if (services && endpoints && slices && controllerEnabled(cfg, 'endpointslice-mirroring-controller')) {
      all.push(
        new EndpointSliceMirroringController(
          services,
          services.watchCache(),
          endpoints,
          endpoints.watchCache(),
          slices,
          slices.watchCache(),
          {
            log,
          },
        ),
      );
    }
    const classes = api.lookup('storage.svc.io', 'v1', 'storageclasses');
    if (claims && volumes && classes && pods && nodes && controllerEnabled(cfg, 'persistentvolume-binder-controller')) {
      const cached = (store: NonNullable<typeof pods>) => ({ store, cache: store.watchCache() });
      all.push(
        new PersistentVolumeBinder(
          cached(claims),
          cached(volumes),
          cached(classes),
          cached(pods),
          cached(nodes),
          new EventRecorder(api, { component: 'persistentvolume-controller' }, log),
          { log },
        ),
      );
    }
    const accounts = lookup('', 'serviceaccounts');
    if (accounts && namespaces && controllerEnabled(cfg, 'serviceaccount-controller')) {
      all.push(new NamespaceObjects(namespaces.watchCache(), accounts, accounts.watchCache(), DEFAULT_SERVICE_ACCOUNT, log));
    }
    const configMaps = lookup('', 'configmaps');
    if (configMaps && namespaces && this.d.rootCa && controllerEnabled(cfg, 'root-ca-certificate-publisher-controller')) {
      all.push(new NamespaceObjects(namespaces.watchCache(), configMaps, configMaps.watchCache(), rootCaConfigMap(this.d.rootCa), log));
    }
    if (pods && nodes && cfg.scheduler) {
      const recorder = new EventRecorder(api, { component: 'default-scheduler' }, log);
      const cached = (r: ReturnType<typeof lookup>) => r && { cache: r.watchCache(), prefix: r.prefix };
      const objects = new CachedObjects({
        budgets: cached(pdbs),
        services: cached(lookup('', 'services')),
        replicationControllers: cached(lookup('', 'replicationcontrollers')),
        replicaSets: cached(api.lookup('apps', 'v1', 'replicasets')),
        statefulSets: cached(api.lookup('apps', 'v1', 'statefulsets')),
      });
      all.push(new Scheduler(pods, pods.watchCache(), nodes.watchCache(), recorder, { log, objects }));
    }
    // The pods by controller, shared by the controllers of pods (ReplicaSets, RCs, Deployments, Jobs,
    // StatefulSets, DaemonSets).
    const podIndex = pods && new OwnerIndex(pods.watchCache(), pods.prefix);
    const replicaSets = api.lookup('apps', 'v1', 'replicasets');
    if (replicaSets && pods && controllerEnabled(cfg, 'replicaset-controller')) {
      const recorder = new EventRecorder(api, { component: 'replicaset-controller' }, log);
      all.push(
        new ReplicaSetController(replicaSets, replicaSets.watchCache(), pods, pods.watchCache(), recorder, { log, index: podIndex }),
      );
    }
    const rcs = lookup('', 'replicationcontrollers');
    if (rcs && pods && controllerEnabled(cfg, 'replicationcontroller-controller')) {
      const recorder = new EventRecorder(api, { component: 'replication-controller' }, log);
      all.push(
        new ReplicaSetController(rcs, rcs.watchCache(), pods, pods.watchCache(), recorder, {
          log,
          kind: REPLICATION_CONTROLLER,
          index: podIndex,
        }),
      );
    }
    const deployments = api.lookup('apps', 'v1', 'deployments');
    if (deployments && replicaSets && pods && controllerEnabled(cfg, 'deployment-controller')) {
      const recorder = new EventRecorder(api, { component: 'deployment-controller' }, log);
      all.push(
        new DeploymentController(
          deployments,
          deployments.watchCache(),
          replicaSets,
          replicaSets.watchCache(),
          pods,
          pods.watchCache(),
          recorder,
          { log, index: podIndex },
        ),
      );
    }
    const statefulSets = api.lookup('apps', 'v1', 'statefulsets');
    const revisions = api.lookup('apps', 'v1', 'controllerrevisions');
    if (statefulSets && revisions && pods && claims && controllerEnabled(cfg, 'statefulset-controller')) {
      const recorder = new EventRecorder(api, { component: 'statefulset-controller' }, log);
      all.push(new StatefulSetController({ sets: statefulSets, pods, revisions, claims }, recorder, { log, index: podIndex }));
    }
    const daemonSets = api.lookup('apps', 'v1', 'daemonsets');
    if (daemonSets && revisions && pods && nodes && controllerEnabled(cfg, 'daemonset-controller')) {
      const recorder = new EventRecorder(api, { component: 'daemonset-controller' }, log);
      all.push(new DaemonSetController({ sets: daemonSets, pods, revisions, nodes }, recorder, { log, index: podIndex }));
    }
    const jobs = api.lookup('batch', 'v1', 'jobs');
    if (jobs && pods && controllerEnabled(cfg, 'job-controller')) {
      const recorder = new EventRecorder(api, { component: 'job-controller' }, log);
      all.push(
        new JobController(jobs, jobs.watchCache(), pods, pods.watchCache(), recorder, {
          log,
          podFailureBackoffMs: cfg.jobPodFailureBackoffMs,
          index: podIndex,
        }),
      );
    }
    const cronJobs = api.lookup('batch', 'v1', 'cronjobs');
    if (cronJobs && jobs && controllerEnabled(cfg, 'cronjob-controller')) {
      const recorder = new EventRecorder(api, { component: 'cronjob-controller' }, log);
      const scale = cfg.cronJobTimeScale;
      const t0 = Date.now();
      const now = scale === 1 ? Date.now : () => t0 + (Date.now() - t0) * scale;
      all.push(new CronJobController(cronJobs, cronJobs.watchCache(), jobs, jobs.watchCache(), recorder, { log, now, timeScale: scale }));
    }
    if (jobs && controllerEnabled(cfg, 'ttl-after-finished-controller')) {
      all.push(new TtlAfterFinishedController(jobs, jobs.watchCache(), { log }));
    }
    if (pods && nodes && controllerEnabled(cfg, 'pod-garbage-collector-controller')) {
      all.push(
        new PodGarbageCollector(pods, pods.watchCache(), nodes, nodes.watchCache(), {
          threshold: cfg.terminatedPodGcThreshold,
          periodMs: cfg.podGcPeriodMs,
          quarantineMs: cfg.podGcQuarantineMs,
          log,
        }),
      );
    }
    const hpas = api.lookup('autoscaling', 'v2', 'horizontalpodautoscalers');
    if (hpas && pods && controllerEnabled(cfg, 'horizontal-pod-autoscaler-controller')) {
      const recorder = new EventRecorder(api, { component: 'horizontal-pod-autoscaler' }, log);
      all.push(
        new HorizontalPodAutoscalerController(hpas, hpas.watchCache(), api, pods.watchCache(), pods.prefix, recorder, { ...cfg.hpa, log }),
      );
    }
    const leases = api.lookup('coordination.svc.io', 'v1', 'leases');
    if (nodes && leases && pods) {
      const recorder = new EventRecorder(api, { component: 'node-controller' }, log);
      all.push(
        new NodeLifecycleController(
          nodes,
          nodes.watchCache(),
          leases.watchCache(),
          leases.prefix,
          recorder,
          {
            monitorPeriodMs: cfg.nodeMonitorPeriodMs,
            gracePeriodMs: cfg.nodeMonitorGracePeriodMs,
            startupGracePeriodMs: cfg.nodeStartupGracePeriodMs,
            evictionRate: cfg.nodeEvictionRate,
            secondaryEvictionRate: cfg.secondaryNodeEvictionRate,
            unhealthyZoneThreshold: cfg.unhealthyZoneThreshold,
            largeClusterThreshold: cfg.largeClusterSizeThreshold,
            log,
          },
          { store: pods, cache: pods.watchCache() },
        ),
        new TaintEviction(
          pods,
          pods.watchCache(),
          nodes.watchCache(),
          nodes.prefix,
          new EventRecorder(api, { component: 'taint-eviction-controller' }, log),
          { log },
        ),
      );
    }
    // Simulated nodes and their kubelets (src/simulation): on the leader, as a controller.
    all.push(
      new Simulation(api, {
        nodes: cfg.simulatedNodes,
        capacity: cfg.simulatedNodeCapacity,
        leaseDurationMs: cfg.simulatedNodeLeaseDurationMs,
        clusterCidr: cfg.clusterCIDR,
        profile: cfg.simulatedPodProfile,
        log,
      }),
    );
    return { gc, all };
  }

  private async startLeading(): Promise<void> {
    const { gc, all } = this.leaderSet();
    this.leader = {
      gc,
      stop: () => {
        for (const c of all) c.stop();
      },
    };
    this.d.leading?.(true);
    await Promise.all(all.map((c) => c.start()));
  }

  private stopLeading(): void {
    this.leader?.stop();
    this.leader = undefined;
    this.d.leading?.(false);
  }
}
