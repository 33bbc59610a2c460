/**
 * A simulated pod's life as a small state (RunState) and the status a kubelet reports for it
 * (the reference's pkg/kubelet/status/generate.go and the kubelet's container statuses). The
 * state is read back from the stored status (decodeRun), so a restarted server carries on
 * where the last one stopped; every container of a pod goes through the same steps.
 *
 *   new → pending → [init 0 … init n-1] → running ─┬→ succeeded / failed       (restartPolicy)
 *                                        ↑          └→ backoff (CrashLoopBackOff) ─┘
 */
import { isObject, type Obj } from '../api/meta';
import { hexId } from './node-status';

export type Stage = 'new' | 'pending' | 'init' | 'running' | 'backoff' | 'succeeded' | 'failed';

export interface Exit {
  code: number;
  startedAt: number;
  finishedAt: number;
}

export interface RunState {
  stage: Stage;
  /** Init containers completed. */
  initDone: number;
  /** Containers restarted so far (restartCount). */
  restarts: number;
  /** The running containers' start, or the pending/init step's. */
  since?: number;
  /** The last exit: lastState while backing off or running again, state when terminal. */
  lastExit?: Exit;
  /** The back-off being waited, in seconds. */
  backoffSec?: number;
}

/** The kubelet's container restart back-off: 10 s doubling to 5 minutes. */
export const BACKOFF_INITIAL_SEC = 10;
export const BACKOFF_MAX_SEC = 300;

export const backoffFor = (restarts: number): number => Math.min(BACKOFF_INITIAL_SEC * 2 ** restarts, BACKOFF_MAX_SEC);

interface Container {
  name: string;
  image?: string;
}

interface ContainerStatusIn {
  restartCount?: number;
  state?: {
    running?: { startedAt?: string };
    waiting?: { reason?: string; message?: string };
    terminated?: { exitCode?: number; startedAt?: string; finishedAt?: string };
  };
  lastState?: { terminated?: { exitCode?: number; startedAt?: string; finishedAt?: string } };
}

interface Condition {
  type: string;
  status: string;
  lastProbeTime?: null;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export const stamp = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const parseTime = (s: unknown): number | undefined => (typeof s === 'string' && s ? Date.parse(s) : undefined);

export function containersOf(pod: Obj, field: 'containers' | 'initContainers'): Container[] {
  const c = (pod.spec as Record<string, unknown> | undefined)?.[field];
  return Array.isArray(c) ? (c as Container[]) : [];
}

/** The pod's RunState from its stored status. */
export function decodeRun(pod: Obj): RunState {
  const st = (isObject(pod.status) ? pod.status : {}) as {
    phase?: string;
    containerStatuses?: ContainerStatusIn[];
    initContainerStatuses?: ContainerStatusIn[];
  };
  const cs = st.containerStatuses?.[0];
  const restarts = cs?.restartCount ?? 0;
  const last = cs?.lastState?.terminated ?? cs?.state?.terminated;
  const lastExit: Exit | undefined = last
    ? { code: last.exitCode ?? 0, startedAt: parseTime(last.startedAt) ?? 0, finishedAt: parseTime(last.finishedAt) ?? 0 }
    : undefined;
  if (st.phase === 'Succeeded') return { stage: 'succeeded', initDone: 0, restarts, lastExit };
  if (st.phase === 'Failed') return { stage: 'failed', initDone: 0, restarts, lastExit };
  if (!cs) return { stage: 'new', initDone: 0, restarts: 0 };
  const inits = containersOf(pod, 'initContainers');
  let initDone = 0;
  for (const s of st.initContainerStatuses ?? []) {
    if (s.state?.terminated?.exitCode !== 0) break;
    initDone++;
  }
  if (cs.state?.running) return { stage: 'running', initDone, restarts, since: parseTime(cs.state.running.startedAt), lastExit };
  if (cs.state?.waiting?.reason === 'CrashLoopBackOff') {
    const m = /back-off (?:(\d+)m)?(\d+)s/.exec(cs.state.waiting.message ?? '');
    const sec = m ? Number(m[1] ?? 0) * 60 + Number(m[2]) : backoffFor(restarts);
    return { stage: 'backoff', initDone, restarts, lastExit, backoffSec: sec, since: lastExit?.finishedAt };
  }
  const initRunning = st.initContainerStatuses?.[initDone]?.state?.running;
  if (inits.length > 0 && initDone < inits.length && (initDone > 0 || initRunning)) {
    return { stage: 'init', initDone, restarts, since: parseTime(initRunning?.startedAt) };
  }
  return { stage: 'pending', initDone, restarts };
}

/** An image as the runtime reports it: `nginx` → `docker.io/library/nginx:latest`. */
export function normalizeImage(image: string): string {
  let ref = image;
  const first = ref.split('/')[0] as string;
  const hasDomain = ref.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (!hasDomain) ref = ref.includes('/') ? `docker.io/${ref}` : `docker.io/library/${ref}`;
  const last = ref.slice(ref.lastIndexOf('/') + 1);
  if (!last.includes(':') && !last.includes('@')) ref = `${ref}:latest`;
  return ref;
}

/** imageID by image: a pod's statuses are built at each step, each image's id hashed once. */
const imageIds = new Map<string, string>();

const imageIdOf = (image: string): string => {
  let id = imageIds.get(image);
  if (id !== undefined) return id;
  const n = normalizeImage(image);
  const at = n.indexOf('@');
  const repo = at >= 0 ? n.slice(0, at) : n.slice(0, n.lastIndexOf(':'));
  id = `${repo}@sha256:${hexId(n, 64)}`;
  if (imageIds.size >= 1024) imageIds.clear();
  imageIds.set(image, id);
  return id;
};

const containerId = (uid: string, name: string, restarts: number): string => `containerd://${hexId(`${uid}/${name}/${restarts}`, 64)}`;

export interface StatusContext {
  hostIP: string;
  /** Undefined until the sandbox exists (pending). */
  podIP?: string;
  now: number;
  /** sim.svc.io/ready: "false" keeps the containers unready. */
  ready: boolean;
}

function terminated(e: Exit, id: string): Record<string, unknown> {
  return {
    terminated: {
      exitCode: e.code,
      reason: e.code === 0 ? 'Completed' : 'Error',
      startedAt: stamp(e.startedAt),
      finishedAt: stamp(e.finishedAt),
      containerID: id,
    },
  };
}

/** The full status the kubelet writes for `rs` (the stored one gives transition times and qosClass). */
export function buildStatus(pod: Obj, rs: RunState, ctx: StatusContext): Record<string, unknown> {
  const old = (isObject(pod.status) ? pod.status : {}) as Record<string, unknown>;
  const uid = pod.metadata.uid as string;
  const podName = `${pod.metadata.name}_${pod.metadata.namespace}(${uid})`;
  const containers = containersOf(pod, 'containers');
  const inits = containersOf(pod, 'initContainers');
  const s = rs.stage;
  const terminal = s === 'succeeded' || s === 'failed';
  const sandbox = s === 'init' || s === 'running' || s === 'backoff';
  const initialized = inits.length === 0 || rs.initDone >= inits.length;
  const containersReady = s === 'running' && ctx.ready;
  const base = (c: Container) => ({ name: c.name, image: normalizeImage(c.image ?? ''), imageID: '' as string });
  const initStatuses = inits.map((c, i) => {
    const b = { ...base(c), lastState: {}, restartCount: 0 };
    const id = containerId(uid, c.name, 0);
    const ran = { ...b, imageID: imageIdOf(c.image ?? ''), containerID: id };
    if (i < rs.initDone || (terminal && initialized)) {
      const at = rs.since ?? ctx.now;
      return { ...ran, state: terminated({ code: 0, startedAt: at, finishedAt: at }, id), ready: true, started: false };
    }
    if (s === 'init' && i === rs.initDone)
      return { ...ran, state: { running: { startedAt: stamp(rs.since ?? ctx.now) } }, ready: false, started: true };
    return { ...b, state: { waiting: { reason: 'PodInitializing' } }, ready: false, started: false };
  });
  const statuses = containers.map((c) => {
    const b = base(c);
    const id = containerId(uid, c.name, rs.restarts);
    // Backing off, the dead container is the current one; running again, it is the previous one.
    const lastId = () => (s === 'backoff' ? id : containerId(uid, c.name, Math.max(0, rs.restarts - 1)));
    const lastState = rs.lastExit && (s === 'backoff' || (s === 'running' && rs.restarts > 0)) ? terminated(rs.lastExit, lastId()) : {};
    const ran = { ...b, imageID: imageIdOf(c.image ?? '') };
    switch (s) {
      case 'running':
        return {
          ...ran,
          containerID: id,
          state: { running: { startedAt: stamp(rs.since ?? ctx.now) } },
          lastState,
          ready: ctx.ready,
          restartCount: rs.restarts,
          started: true,
        };
      case 'backoff':
        return {
          ...ran,
          containerID: lastId(),
          state: {
            waiting: {
              reason: 'CrashLoopBackOff',
              message: `back-off ${backoffText(rs.backoffSec ?? BACKOFF_INITIAL_SEC)} restarting failed container=${c.name} pod=${podName}`,
            },
          },
          lastState,
          ready: false,
          restartCount: rs.restarts,
          started: false,
        };
      case 'succeeded':
      case 'failed': {
        const e = rs.lastExit ?? { code: s === 'succeeded' ? 0 : 1, startedAt: ctx.now, finishedAt: ctx.now };
        return {
          ...ran,
          containerID: id,
          state: terminated(e, id),
          lastState: {},
          ready: false,
          restartCount: rs.restarts,
          started: false,
        };
      }
      default:
        return {
          ...b,
          state: { waiting: { reason: inits.length > 0 && !initialized ? 'PodInitializing' : 'ContainerCreating' } },
          lastState: {},
          ready: false,
          restartCount: 0,
          started: false,
        };
    }
  });
  const unready = containers.map((c) => c.name).join(' ');
  const incomplete = inits
    .slice(rs.initDone)
    .map((c) => c.name)
    .join(' ');
  const phase = s === 'succeeded' ? 'Succeeded' : s === 'failed' ? 'Failed' : s === 'running' || s === 'backoff' ? 'Running' : 'Pending';
  const want: Condition[] = [
    { type: 'PodReadyToStartContainers', status: sandbox ? 'True' : 'False' },
    initialized
      ? { type: 'Initialized', status: 'True', ...(s === 'succeeded' ? { reason: 'PodCompleted' } : {}) }
      : {
          type: 'Initialized',
          status: 'False',
          reason: 'ContainersNotInitialized',
          message: `containers with incomplete status: [${incomplete}]`,
        },
    containersReady
      ? { type: 'Ready', status: 'True' }
      : s === 'succeeded'
        ? { type: 'Ready', status: 'False', reason: 'PodCompleted' }
        : { type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: `containers with unready status: [${unready}]` },
    containersReady
      ? { type: 'ContainersReady', status: 'True' }
      : s === 'succeeded'
        ? { type: 'ContainersReady', status: 'False', reason: 'PodCompleted' }
        : {
            type: 'ContainersReady',
            status: 'False',
            reason: 'ContainersNotReady',
            message: `containers with unready status: [${unready}]`,
          },
  ];
  const oldConds = Array.isArray(old.conditions) ? (old.conditions as Condition[]) : [];
  const byType = new Map(oldConds.map((c) => [c.type, c]));
  const nowText = stamp(ctx.now);
  const conditions: Condition[] = want.map((c) => {
    const prev = byType.get(c.type);
    const since = prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : nowText;
    return { type: c.type, status: c.status, lastProbeTime: null, lastTransitionTime: since, ...pick(c) };
  });
  // Conditions others own (PodScheduled from the binding, DisruptionTarget) are kept after the kubelet's.
  const mine = new Set(want.map((c) => c.type));
  const others = oldConds.filter((c) => !mine.has(c.type));
  if (!others.some((c) => c.type === 'PodScheduled')) {
    others.unshift({ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: nowText });
  }
  const out: Record<string, unknown> = {
    phase,
    conditions: [...conditions, ...others],
    hostIP: ctx.hostIP,
    hostIPs: [{ ip: ctx.hostIP }],
  };
  if (ctx.podIP) {
    out.podIP = ctx.podIP;
    out.podIPs = [{ ip: ctx.podIP }];
  }
  out.startTime = typeof old.startTime === 'string' ? old.startTime : nowText;
  if (inits.length > 0) out.initContainerStatuses = initStatuses;
  out.containerStatuses = statuses;
  if (old.qosClass !== undefined) out.qosClass = old.qosClass;
  return out;
}

function pick(c: Condition): Partial<Condition> {
  const o: Partial<Condition> = {};
  if (c.reason) o.reason = c.reason;
  if (c.message) o.message = c.message;
  return o;
}

/** A Go duration as the kubelet prints a back-off: 10s, 2m40s, 5m0s. */
export function backoffText(sec: number): string {
  return sec < 60 ? `${sec}s` : `${Math.floor(sec / 60)}m${sec % 60}s`;
}
