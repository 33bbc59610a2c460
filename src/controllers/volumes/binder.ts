/**
 * The PersistentVolume binder, as the reference's pkg/controller/volume/persistentvolume
 * (syncClaim, syncVolume), with the built-in provisioner (src/controllers/volumes/provisioner.ts):
 *
 *   unbound claim   binds to the volume pre-bound to it, else the smallest Available volume of its
 *                   class that is large enough, has its access modes and volume mode and matches
 *                   its selector; without one, a class whose provisioner is sim.svc.io/provisioner
 *                   gets a volume provisioned (events Provisioning, ProvisioningSucceeded), another
 *                   provisioner's claim is annotated and waits (ExternalProvisioning), a claim
 *                   without a class waits (FailedBinding); phase Pending meanwhile
 *   binding         volume: claimRef (with the claim's uid), pv.kubernetes.io/bound-by-controller
 *                   when the controller chose it, phase Bound; claim: volumeName,
 *                   pv.kubernetes.io/bind-completed (and bound-by-controller), phase Bound,
 *                   capacity and access modes of the volume
 *   WaitForFirstConsumer  a claim of such a class waits (event WaitForFirstConsumer) until a pod
 *                   using it is scheduled; then volume.kubernetes.io/selected-node is that pod's
 *                   node (the reference's scheduler sets it in its VolumeBinding plugin; this
 *                   server's scheduler does not look at volumes, so the binder sets it once the pod
 *                   has spec.nodeName), and the claim binds (volumes must fit the node's labels)
 *                   or is provisioned on that node
 *   bound claim     whose volume went or is bound to another: phase Lost (ClaimLost, ClaimMisbound)
 *   volume          without claimRef: Available; its claim deleted: Released, then its reclaim
 *                   policy: Retain keeps it, Delete deletes volumes this provisioner made (others:
 *                   VolumeFailedDelete and phase Failed, as without a deleter plugin; another
 *                   provisioner's are left to it), Recycle fails (VolumeFailedRecycle)
 *
 * It follows claims, volumes, classes and pods from the watch caches (and resyncs every 15 s, as
 * the reference's) and writes through the registry.
 */
import type { Obj } from '../../api/meta';
import { StatusError } from '../../api/status';
import type { EventRecorder } from '../../registry/event-recorder';
import type { ResourceStore } from '../../registry/generic';
import type { WatchCache } from '../../watch/cache';
import { phaseOf as podPhase, writeOptions } from '../controller-utils';
import { follow, followChanges, WorkQueue } from '../workqueue';
import {
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  ANN_DYNAMICALLY_PROVISIONED,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  annotation,
  claimClass,
  claimSpec,
  findBestMatch,
  isVolumeBoundToClaim,
  phaseOf,
  podClaimNames,
  volumeSpec,
  volumeUnfit,
} from './matching';
import { provisionedVolume, SIM_PROVISIONER, standardClass } from './provisioner';

const W = () => writeOptions('persistentvolume-binder-controller');
const gone = (e: unknown): boolean => e instanceof StatusError && e.code === 404;

interface Cached {
  store: ResourceStore;
  cache: WatchCache;
}

export class PersistentVolumeBinder {
  private readonly queue: WorkQueue;
  private readonly follows: { stop(): void }[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly claims: Cached,
    private readonly volumes: Cached,
    private readonly classes: Cached,
    private readonly pods: Cached,
    private readonly nodes: Cached,
    private readonly recorder: EventRecorder,
    private readonly opts: { resyncMs?: number; log?: (msg: string) => void } = {},
  ) {
    this.queue = new WorkQueue(
      (k) => (k.startsWith('c/') ? this.syncClaim(k.slice(2)) : this.syncVolume(k.slice(2))),
      (m) => opts.log?.(`persistentvolume binder: ${m}`),
    );
  }

  async start(): Promise<void> {
    const all = [this.claims, this.volumes, this.classes, this.pods, this.nodes];
    await Promise.all(all.map((c) => c.cache.start()));
    await this.ensureStandardClass();
    const claimKey = (c: Obj) => `c/${c.metadata.namespace}/${c.metadata.name}`;
    const queueAll = () => {
      for (const c of this.claims.cache.list()) this.queue.add(claimKey(c.obj));
      for (const v of this.volumes.cache.list()) this.queue.add(`v/${v.obj.metadata.name}`);
    };
    this.follows.push(
      follow(
        this.claims.cache,
        (objs) => {
          for (const o of objs) this.queue.add(claimKey(o));
        },
        (c, type) => {
          this.queue.add(claimKey(c));
          // A deleted claim releases its volume.
          if (type === 'DELETED' && claimSpec(c).volumeName) this.queue.add(`v/${claimSpec(c).volumeName}`);
        },
      ),
      follow(
        this.volumes.cache,
        (objs) => {
          for (const o of objs) this.queue.add(`v/${o.metadata.name}`);
        },
        (v, type) => {
          if (type !== 'DELETED') this.queue.add(`v/${v.metadata.name}`);
          const ref = volumeSpec(v).claimRef;
          if (ref?.name) this.queue.add(`c/${ref.namespace}/${ref.name}`);
        },
      ),
      followChanges(
        this.pods.cache,
        () => {},
        (p, type) => {
          if (type === 'DELETED' || !(p.spec as { nodeName?: string } | undefined)?.nodeName) return;
          for (const n of podClaimNames(p)) this.queue.add(`c/${p.metadata.namespace}/${n}`);
        },
      ),
      followChanges(this.classes.cache, () => {}, queueAll),
    );
    this.timer = setInterval(queueAll, this.opts.resyncMs ?? 15_000);
    this.timer.unref?.();
  }

  stop(): void {
    for (const f of this.follows) f.stop();
    clearInterval(this.timer);
    this.queue.stop();
  }

  private async ensureStandardClass(): Promise<void> {
    const body = standardClass(this.classes.cache.list().map((c) => c.obj));
    if (!body) return;
    try {
      await this.classes.store.create('', body, W());
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 409))
        this.opts.log?.(`persistentvolume binder: creating StorageClass standard: ${String(e)}`);
    }
  }

  private claim(ns: string, name: string): Obj | undefined {
    return this.claims.cache.get(this.claims.store.key(ns, name))?.obj;
  }

  private volume(name: string): Obj | undefined {
    return this.volumes.cache.get(this.volumes.store.key('', name))?.obj;
  }

  private storageClass(name: string): Obj | undefined {
    return name ? this.classes.cache.get(this.classes.store.key('', name))?.obj : undefined;
  }

  // ---- claims ----

  private async syncClaim(key: string): Promise<void> {
    const slash = key.indexOf('/');
    const c = this.claim(key.slice(0, slash), key.slice(slash + 1));
    if (!c) return;
    if (annotation(c, ANN_BIND_COMPLETED) === undefined) await this.syncUnboundClaim(c);
    else await this.syncBoundClaim(c);
  }

  private async syncUnboundClaim(c: Obj): Promise<void> {
    const spec = claimSpec(c);
    const className = claimClass(c);
    const cls = this.storageClass(className);
    const delay = (cls as { volumeBindingMode?: string } | undefined)?.volumeBindingMode === 'WaitForFirstConsumer';
    if (spec.volumeName) {
      const v = this.volume(spec.volumeName);
      if (!v) return this.claimPhase(c, 'Pending');
      if (!volumeSpec(v).claimRef) {
        const why = volumeUnfit(v, c);
        if (why) {
          void this.recorder.event(c, 'Warning', 'VolumeMismatch', `Cannot bind to requested volume "${spec.volumeName}": ${why}`);
          return this.claimPhase(c, 'Pending');
        }
        return this.bind(v, c);
      }
      if (isVolumeBoundToClaim(v, c)) return this.bind(v, c);
      void this.recorder.event(c, 'Warning', 'FailedBinding', `volume "${spec.volumeName}" already bound to a different claim.`);
      return this.claimPhase(c, 'Pending');
    }
    let nodeName = annotation(c, ANN_SELECTED_NODE);
    if (delay && !nodeName) nodeName = await this.selectNode(c);
    const node = nodeName ? this.nodes.cache.get(this.nodes.store.key('', nodeName))?.obj : undefined;
    const v = findBestMatch(
      c,
      this.volumes.cache.list().map((x) => x.obj),
      delay,
      delay ? node : undefined,
    );
    if (v) return this.bind(v, c);
    await this.claimPhase(c, 'Pending');
    if (delay && !nodeName) {
      void this.recorder.event(c, 'Normal', 'WaitForFirstConsumer', 'waiting for first consumer to be created before binding');
      return;
    }
    if (!className) {
      void this.recorder.event(c, 'Normal', 'FailedBinding', 'no persistent volumes available for this claim and no storage class is set');
      return;
    }
    if (!cls) {
      void this.recorder.event(c, 'Warning', 'ProvisioningFailed', `storageclass.storage.k8s.io "${className}" not found`);
      return;
    }
    await this.provision(c, cls, nodeName);
  }

  /** The node of a scheduled pod using a WaitForFirstConsumer claim, written to the claim's selected-node. */
  private async selectNode(c: Obj): Promise<string | undefined> {
    const ns = c.metadata.namespace as string;
    const pod = this.pods.cache
      .list(`${this.pods.store.prefix}${ns}/`)
      .map((x) => x.obj)
      .find((p) => {
        const phase = podPhase(p);
        return (
          !!(p.spec as { nodeName?: string }).nodeName &&
          phase !== 'Succeeded' &&
          phase !== 'Failed' &&
          !p.metadata.deletionTimestamp &&
          podClaimNames(p).includes(c.metadata.name as string)
        );
      });
    const node = (pod?.spec as { nodeName?: string } | undefined)?.nodeName;
    if (!node) return undefined;
    await this.annotateClaim(c, { [ANN_SELECTED_NODE]: node });
    return node;
  }

  private async provision(c: Obj, cls: Obj, node: string | undefined): Promise<void> {
    const provisioner = (cls as { provisioner?: string }).provisioner ?? '';
    if (annotation(c, ANN_STORAGE_PROVISIONER) !== provisioner || annotation(c, ANN_BETA_STORAGE_PROVISIONER) !== provisioner) {
      await this.annotateClaim(c, { [ANN_STORAGE_PROVISIONER]: provisioner, [ANN_BETA_STORAGE_PROVISIONER]: provisioner });
    }
    const ref = `${c.metadata.namespace}/${c.metadata.name}`;
    if (provisioner !== SIM_PROVISIONER) {
      void this.recorder.event(
        c,
        'Normal',
        'ExternalProvisioning',
        `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`,
      );
      return;
    }
    const body = provisionedVolume(c, cls, node);
    if (this.volume(body.metadata.name as string)) return;
    void this.recorder.event(c, 'Normal', 'Provisioning', `External provisioner is provisioning volume for claim "${ref}"`);
    try {
      await this.volumes.store.create('', body, W());
    } catch (e) {
      if (e instanceof StatusError && e.code === 409) return;
      void this.recorder.event(
        c,
        'Warning',
        'ProvisioningFailed',
        `failed to provision volume with StorageClass "${cls.metadata.name}": ${String(e)}`,
      );
      throw e;
    }
    void this.recorder.event(c, 'Normal', 'ProvisioningSucceeded', `Successfully provisioned volume ${body.metadata.name}`);
  }

  private async syncBoundClaim(c: Obj): Promise<void> {
    const name = claimSpec(c).volumeName;
    const v = name ? this.volume(name) : undefined;
    if (!v) {
      if (phaseOf(c) !== 'Lost')
        void this.recorder.event(
          c,
          'Warning',
          'ClaimLost',
          'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!',
        );
      return this.claimPhase(c, 'Lost');
    }
    const ref = volumeSpec(v).claimRef;
    if (!ref || ref.uid === c.metadata.uid) return this.bind(v, c);
    if (phaseOf(c) !== 'Lost')
      void this.recorder.event(c, 'Warning', 'ClaimMisbound', 'Two claims are bound to the same volume, this one is bound incorrectly');
    return this.claimPhase(c, 'Lost');
  }

  /** bind: the volume to the claim, then the claim to the volume, and both statuses. */
  private async bind(v: Obj, c: Obj): Promise<void> {
    const vname = v.metadata.name as string;
    const ns = c.metadata.namespace as string;
    const cname = c.metadata.name as string;
    const ref = volumeSpec(v).claimRef;
    if (!ref || ref.uid !== c.metadata.uid) {
      await this.volumes.store.updateFrom('', vname, '', W(), (cur) => {
        const spec = { ...((cur.spec ?? {}) as Record<string, unknown>) };
        const curRef = spec.claimRef as { uid?: string; name?: string; namespace?: string } | undefined;
        if (curRef?.uid && curRef.uid !== c.metadata.uid) throw new StatusError(409, 'Conflict', 'bound meanwhile');
        if (curRef && (curRef.name !== cname || curRef.namespace !== ns)) throw new StatusError(409, 'Conflict', 'bound meanwhile');
        spec.claimRef = {
          kind: 'PersistentVolumeClaim',
          namespace: ns,
          name: cname,
          uid: c.metadata.uid,
          apiVersion: 'v1',
          resourceVersion: c.metadata.resourceVersion,
        };
        const annotations = { ...(cur.metadata.annotations ?? {}) };
        if (!curRef) annotations[ANN_BOUND_BY_CONTROLLER] = 'yes';
        return { ...cur, metadata: { ...cur.metadata, annotations }, spec } as Obj;
      });
    }
    if (phaseOf(v) !== 'Bound') await this.volumePhase(vname, 'Bound');
    const cs = claimSpec(c);
    if (cs.volumeName !== vname || annotation(c, ANN_BIND_COMPLETED) !== 'yes') {
      await this.claims.store.updateFrom(ns, cname, '', W(), (cur) => {
        if (cur.metadata.uid !== c.metadata.uid) throw new StatusError(404, 'NotFound', 'replaced');
        const spec = { ...((cur.spec ?? {}) as Record<string, unknown>) };
        const annotations: Record<string, string> = { ...(cur.metadata.annotations ?? {}), [ANN_BIND_COMPLETED]: 'yes' };
        if (!spec.volumeName) annotations[ANN_BOUND_BY_CONTROLLER] = 'yes';
        spec.volumeName = vname;
        return { ...cur, metadata: { ...cur.metadata, annotations }, spec } as Obj;
      });
    }
    const vs = volumeSpec(v);
    const st = (c.status ?? {}) as { phase?: string; capacity?: unknown; accessModes?: unknown };
    if (
      st.phase === 'Bound' &&
      JSON.stringify(st.capacity) === JSON.stringify(vs.capacity) &&
      JSON.stringify(st.accessModes) === JSON.stringify(vs.accessModes)
    )
      return;
    await this.claims.store.updateFrom(ns, cname, 'status', W(), (cur) => {
      if (cur.metadata.uid !== c.metadata.uid) throw new StatusError(404, 'NotFound', 'replaced');
      const status: Record<string, unknown> = { ...((cur.status ?? {}) as Record<string, unknown>), phase: 'Bound' };
      if (vs.capacity) status.capacity = vs.capacity;
      if (vs.accessModes) status.accessModes = vs.accessModes;
      return { ...cur, status } as Obj;
    });
  }

  private async annotateClaim(c: Obj, add: Record<string, string>): Promise<void> {
    try {
      await this.claims.store.updateFrom(c.metadata.namespace as string, c.metadata.name as string, '', W(), (cur) => {
        if (cur.metadata.uid !== c.metadata.uid) throw new StatusError(404, 'NotFound', 'replaced');
        return { ...cur, metadata: { ...cur.metadata, annotations: { ...(cur.metadata.annotations ?? {}), ...add } } } as Obj;
      });
    } catch (e) {
      if (!gone(e)) throw e;
    }
  }

  private async claimPhase(c: Obj, phase: string): Promise<void> {
    if (phaseOf(c) === phase) return;
    try {
      await this.claims.store.updateFrom(c.metadata.namespace as string, c.metadata.name as string, 'status', W(), (cur) => {
        if (cur.metadata.uid !== c.metadata.uid) throw new StatusError(404, 'NotFound', 'replaced');
        return { ...cur, status: { ...((cur.status ?? {}) as Record<string, unknown>), phase } } as Obj;
      });
    } catch (e) {
      if (!gone(e)) throw e;
    }
  }

  // ---- volumes ----

  private async volumePhase(name: string, phase: string, message?: string): Promise<void> {
    try {
      await this.volumes.store.updateFrom('', name, 'status', W(), (cur) => {
        const status: Record<string, unknown> = { ...((cur.status ?? {}) as Record<string, unknown>), phase };
        if (message) status.message = message;
        else delete status.message;
        if (phaseOf(cur as Obj) !== phase) status.lastPhaseTransitionTime = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
        return { ...cur, status } as Obj;
      });
    } catch (e) {
      if (!gone(e)) throw e;
    }
  }

  private async syncVolume(name: string): Promise<void> {
    const v = this.volume(name);
    if (!v || v.metadata.deletionTimestamp) return;
    const ref = volumeSpec(v).claimRef;
    if (!ref?.name || !ref.uid) {
      // Unbound, or pre-bound by a user to a claim (the claim's sync binds it).
      if (phaseOf(v) !== 'Available') await this.volumePhase(name, 'Available');
      return;
    }
    let c = this.claim(ref.namespace ?? '', ref.name);
    if (c && c.metadata.uid !== ref.uid) c = undefined;
    if (!c) {
      // The claim is gone: Released, then the reclaim policy.
      if (phaseOf(v) === 'Failed') return;
      if (phaseOf(v) !== 'Released') await this.volumePhase(name, 'Released');
      return this.reclaim(v);
    }
    const cv = claimSpec(c).volumeName;
    if (!cv) {
      // Being bound: the claim's sync completes it.
      this.queue.add(`c/${c.metadata.namespace}/${c.metadata.name}`);
      return;
    }
    if (cv === name) {
      if (phaseOf(v) !== 'Bound') await this.volumePhase(name, 'Bound');
      return;
    }
    // The claim is bound to another volume: a volume the controller bound is freed.
    if (annotation(v, ANN_BOUND_BY_CONTROLLER) === 'yes') {
      await this.volumes.store.updateFrom('', name, '', W(), (cur) => {
        const spec = { ...((cur.spec ?? {}) as Record<string, unknown>) };
        delete spec.claimRef;
        const annotations = { ...(cur.metadata.annotations ?? {}) };
        delete annotations[ANN_BOUND_BY_CONTROLLER];
        return { ...cur, metadata: { ...cur.metadata, annotations }, spec } as Obj;
      });
      await this.volumePhase(name, 'Available');
    }
  }

  /** reclaimVolume. */
  private async reclaim(v: Obj): Promise<void> {
    const name = v.metadata.name as string;
    const policy = volumeSpec(v).persistentVolumeReclaimPolicy ?? 'Retain';
    if (policy === 'Retain') return;
    if (policy === 'Recycle') {
      void this.recorder.event(v, 'Warning', 'VolumeFailedRecycle', 'No recycler plugin found for the volume!');
      return this.volumePhase(name, 'Failed', 'No recycler plugin found for the volume!');
    }
    const by = annotation(v, ANN_DYNAMICALLY_PROVISIONED);
    if (by === SIM_PROVISIONER) {
      try {
        await this.volumes.store.delete('', name, { dryRun: false, preconditions: { uid: v.metadata.uid as string } });
      } catch (e) {
        if (!gone(e) && !(e instanceof StatusError && e.code === 409)) throw e;
      }
      return;
    }
    // Another provisioner's volume is deleted by it.
    if (by) return;
    const msg = `error getting deleter volume plugin for volume "${name}": no deletable volume plugin matched`;
    void this.recorder.event(v, 'Warning', 'VolumeFailedDelete', msg);
    return this.volumePhase(name, 'Failed', msg);
  }
}
