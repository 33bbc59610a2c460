/**
 * Simulated kubelets: the pods bound to simulated nodes (spec.nodeName) go through the
 * kubelet's states (pod-status.ts) on the schedule behaviour.ts gives, one status write per
 * step (steps due together are written together), through the pods' status subresource. The
 * pod's IP is the next free address of its node's pod CIDR (.2 to .254).
 *
 * A deleted pod (deletionTimestamp) is removed with a grace-0 delete once its grace period, or
 * sim.svc.io/stop-delay, has passed: the kubelet confirming termination. Pods of a node that is
 * not heartbeating are left as they are until it resumes.
 *
 * Everything is driven from the pods' watch cache: an event re-derives the pod's next step from
 * its stored status and (re)schedules it in the TimerQueue; the step's write brings the next event.
 */
import type { Obj } from '../api/meta';
import { ipv4ToNumber, ipv4ToString } from '../api/net';
import { StatusError } from '../api/status';
import type { Resources } from '../registry/api-registry';
import { EventQueue, EventRecorder } from '../registry/event-recorder';
import type { ResourceStore } from '../registry/generic';
import type { WriteOptions } from '../registry/options';
import type { WatchCache } from '../watch/cache';
import { eachInSlices, sharedObjects } from '../watch/slices';
import { behaviourOf, type Profile, transition } from './behaviour';
import type { NodeFleet, SimNode } from './nodes';
import { buildStatus, containersOf, decodeRun, type RunState } from './pod-status';
import type { TimerQueue } from './timers';

export interface KubeletOptions {
  profile: Profile;
  clock?: () => number;
  log?: (msg: string) => void;
}

/** What the kubelet remembers of a pod between events. */
interface Run {
  uid: string;
  node: string;
  /** The stage the pod is in (stage/initDone/restarts) and when it began. */
  stageKey: string;
  since: number;
}

/** Stage keys are a handful of values: one string each, shared by the pods in that stage. */
const stageKeys = new Map<string, string>();
const stageKey = (rs: RunState): string => {
  const k = `${rs.stage}/${rs.initDone}/${rs.restarts}`;
  const shared = stageKeys.get(k);
  if (shared !== undefined) return shared;
  if (stageKeys.size >= 4096) stageKeys.clear();
  stageKeys.set(k, k);
  return k;
};

const readyOf = (pod: Obj): string | undefined =>
  ((pod.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Ready')
    ?.status;

/** Skip a step: the pod changed under it (another uid, being deleted, nothing due). */
class Skip extends Error {}

export class Kubelets {
  private readonly runs = new Map<string, Run>();
  private readonly byNode = new Map<string, Set<string>>();
  /** Per node, the host part (2..254) of each pod's IP by pod uid. */
  private readonly ips = new Map<string, Map<string, number>>();
  private readonly recorders = new Map<string, EventRecorder>();
  /** One queue for every node's recorder: the kubelets run in one process, and their events wait in its memory. */
  readonly events = new EventQueue();
  private readonly clock: () => number;
  private stopped = false;

  constructor(
    private readonly resources: Pick<Resources, 'lookup'>,
    private readonly pods: ResourceStore,
    private readonly podCache: WatchCache,
    private readonly fleet: NodeFleet,
    private readonly timers: TimerQueue,
    private readonly opts: KubeletOptions,
  ) {
    this.clock = opts.clock ?? Date.now;
  }

  async start(): Promise<void> {
    await this.podCache.start();
    const { watcher, initial } = this.podCache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    // The cache's shared parses, parsed and reconciled in slices that let other requests in
    // (watch/slices.ts); the watcher holds the events meanwhile.
    const stopped = (): boolean => this.stopped;
    const parsed = sharedObjects(initial, stopped);
    const taken = eachInSlices(parsed instanceof Promise ? await parsed : parsed, (p) => this.reconcile(p, false), stopped);
    if (taken) await taken;
    void (async () => {
      while (!this.stopped && !watcher.ended) {
        for (const e of await watcher.next(Number.POSITIVE_INFINITY)) this.reconcile(e.obj, e.type === 'DELETED');
      }
    })();
  }

  stop(): void {
    this.stopped = true;
  }

  /** A node appeared, went, stopped or resumed: its pods are looked at again. */
  nodeChanged(name: string): void {
    for (const key of this.byNode.get(name) ?? []) {
      const c = this.podCache.get(key);
      if (c) this.reconcile(c.obj, false);
    }
  }

  private write(): WriteOptions {
    return { dryRun: false, fieldValidation: 'Ignore', warnings: [], fieldManager: 'kubelet' };
  }

  private recorder(node: string): EventRecorder {
    let r = this.recorders.get(node);
    if (!r) {
      r = new EventRecorder(this.resources, { component: 'kubelet', host: node }, this.opts.log, this.clock, this.events);
      this.recorders.set(node, r);
    }
    return r;
  }

  private reconcile(pod: Obj, deleted: boolean): void {
    if (this.stopped) return;
    const ns = pod.metadata.namespace as string;
    const name = pod.metadata.name as string;
    const key = this.pods.key(ns, name);
    const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
    if (deleted || !nodeName) {
      this.forget(key, pod);
      return;
    }
    let on = this.byNode.get(nodeName);
    if (!on) {
      on = new Set();
      this.byNode.set(nodeName, on);
    }
    on.add(key);
    const node = this.fleet.nodes.get(nodeName);
    if (!node?.live) {
      // Not simulated, or silent: nothing happens to the pod (a stopped node's pods freeze).
      this.timers.cancel(`pod/${key}`);
      this.timers.cancel(`kill/${key}`);
      return;
    }
    const uid = pod.metadata.uid as string;
    let run = this.runs.get(key);
    if (!run || run.uid !== uid) {
      // The node's own name string, not the pod's copy (one string fewer per pod).
      run = { uid, node: node.name, stageKey: '', since: 0 };
      this.runs.set(key, run);
    }
    if (pod.metadata.deletionTimestamp) {
      this.timers.cancel(`pod/${key}`);
      this.scheduleKill(key, pod, node);
      return;
    }
    const rs = decodeRun(pod);
    if (rs.stage === 'succeeded' || rs.stage === 'failed') {
      this.timers.cancel(`pod/${key}`);
      this.releaseIp(nodeName, uid);
      return;
    }
    // After a restart: the IP a running pod has stays taken.
    if ((pod.status as { podIP?: string } | undefined)?.podIP && !(pod.spec as { hostNetwork?: boolean }).hostNetwork) {
      this.ipFor(node, uid, pod);
    }
    const now = this.clock();
    const sk = stageKey(rs);
    if (run.stageKey !== sk) {
      run.stageKey = sk;
      run.since = rs.since ?? now;
    }
    const b = behaviourOf(pod, this.opts.profile);
    // Its Ready condition as another wrote it (the node controller marks the pods of a lost node
    // not ready): the kubelet's next status sync writes its own back.
    if (rs.stage === 'running' && readyOf(pod) !== (b.ready ? 'True' : 'False')) {
      this.timers.schedule(`pod/${key}`, now, () => this.step(key, ns, name, run, node, true));
      return;
    }
    const t = transition(pod, rs, b, now);
    if (!t) {
      this.timers.cancel(`pod/${key}`);
      return;
    }
    const due = run.since + t.delayMs;
    if (this.timers.dueOf(`pod/${key}`) === due) return;
    this.timers.schedule(`pod/${key}`, due, () => this.step(key, ns, name, run, node));
  }

  private forget(key: string, pod: Obj): void {
    this.timers.cancel(`pod/${key}`);
    this.timers.cancel(`kill/${key}`);
    const run = this.runs.get(key);
    this.runs.delete(key);
    const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName ?? run?.node;
    if (nodeName) {
      this.byNode.get(nodeName)?.delete(key);
      this.releaseIp(nodeName, pod.metadata.uid as string);
    }
  }

  /** Every step due now, written at once. */
  private step(key: string, ns: string, name: string, run: Run, node: SimNode, sync = false): void {
    const started: string[] = [];
    let backoff = false;
    this.pods
      .updateFrom(ns, name, 'status', this.write(), (cur) => {
        // (The node may have been deleted and registered again: only its current record counts.)
        if (cur.metadata.uid !== run.uid || cur.metadata.deletionTimestamp || !node.live || this.fleet.nodes.get(node.name) !== node) {
          throw new Skip();
        }
        const now = this.clock();
        const b = behaviourOf(cur, this.opts.profile);
        let rs = decodeRun(cur);
        let since = stageKey(rs) === run.stageKey ? run.since : (rs.since ?? now);
        let moved = false;
        started.length = 0;
        backoff = false;
        for (;;) {
          const t = transition(cur, rs, b, now);
          // A few ms early is on time (the timer's granularity).
          if (!t || since + t.delayMs > now + 5) break;
          rs = t.next;
          since = rs.stage === 'backoff' ? (rs.since ?? now) : now;
          moved = true;
          if (rs.stage === 'running') started.push(...containersOf(cur, 'containers').map((c) => c.name));
          if (rs.stage === 'backoff') backoff = true;
        }
        if (!moved && !sync) throw new Skip();
        run.stageKey = stageKey(rs);
        run.since = since;
        const spec = (cur.spec ?? {}) as { hostNetwork?: boolean };
        const sandbox = rs.stage !== 'pending';
        const podIP = !sandbox ? undefined : spec.hostNetwork ? node.ip : this.ipFor(node, run.uid, cur);
        return { ...cur, status: buildStatus(cur, rs, { hostIP: node.ip, podIP, now, ready: b.ready }) };
      })
      .then(
        (pod) => {
          const r = this.recorder(node.name);
          if (started.length > 0 && decodeRun(pod).restarts === 0) {
            for (const c of containersOf(pod, 'containers')) {
              if (!started.includes(c.name)) continue;
              const path = `spec.containers{${c.name}}`;
              void r.event(pod, 'Normal', 'Pulled', `Container image "${c.image ?? ''}" already present on machine`, path);
              void r.event(pod, 'Normal', 'Created', `Created container: ${c.name}`, path);
              void r.event(pod, 'Normal', 'Started', `Started container ${c.name}`, path);
            }
          }
          if (backoff) {
            for (const c of containersOf(pod, 'containers')) {
              const msg = `Back-off restarting failed container ${c.name} in pod ${name}_${ns}(${run.uid})`;
              void r.event(pod, 'Warning', 'BackOff', msg, `spec.containers{${c.name}}`);
            }
          }
        },
        (e) => {
          if (e instanceof Skip || (e instanceof StatusError && e.code === 404)) return;
          this.opts.log?.(`simulation: kubelet of ${node.name}: pod ${ns}/${name}: ${String(e)}`);
          // The next event or a retry picks it up again.
          if (!this.stopped) this.timers.schedule(`pod/${key}`, this.clock() + 1000, () => this.step(key, ns, name, run, node));
        },
      );
  }

  /** Termination: after the grace period (or stop-delay), the grace-0 delete that removes the pod. */
  private scheduleKill(key: string, pod: Obj, node: SimNode): void {
    if (this.timers.has(`kill/${key}`)) return;
    const now = this.clock();
    const b = behaviourOf(pod, this.opts.profile);
    const end = Date.parse(pod.metadata.deletionTimestamp as string);
    const due = b.stopDelayMs !== undefined ? now + b.stopDelayMs : Number.isNaN(end) ? now : end;
    const ns = pod.metadata.namespace as string;
    const name = pod.metadata.name as string;
    const uid = pod.metadata.uid as string;
    const rs = decodeRun(pod);
    if (rs.stage === 'running') {
      const r = this.recorder(node.name);
      for (const c of containersOf(pod, 'containers')) {
        void r.event(pod, 'Normal', 'Killing', `Stopping container ${c.name}`, `spec.containers{${c.name}}`);
      }
    }
    this.timers.schedule(`kill/${key}`, due, () => {
      if (!node.live) return;
      this.pods.delete(ns, name, { dryRun: false, gracePeriodSeconds: 0, preconditions: { uid } }).catch((e) => {
        if (e instanceof StatusError && (e.code === 404 || e.code === 409)) return;
        this.opts.log?.(`simulation: kubelet of ${node.name}: deleting pod ${ns}/${name}: ${String(e)}`);
      });
    });
  }

  /** The pod's IP on its node: the one it has (after a restart), else the lowest free. */
  private ipFor(node: SimNode, uid: string, pod: Obj): string {
    let m = this.ips.get(node.name);
    if (!m) {
      m = new Map();
      this.ips.set(node.name, m);
    }
    let host = m.get(uid);
    if (host === undefined) {
      const had = ipv4ToNumber(String((pod.status as { podIP?: string } | undefined)?.podIP ?? ''));
      if (had !== undefined && had - node.cidrBase >= 2 && had - node.cidrBase <= 254) host = had - node.cidrBase;
      else {
        const used = new Set(m.values());
        host = 2;
        while (used.has(host) && host < 254) host++;
      }
      m.set(uid, host);
    }
    return ipv4ToString(node.cidrBase + host);
  }

  private releaseIp(node: string, uid: string): void {
    this.ips.get(node)?.delete(uid);
  }
}
