/**
 * What the workload controllers share, as the reference's pkg/controller/controller_utils.go and
 * pkg/api/v1/pod: pod readiness and availability, controller references, and the
 * ControllerRefManager's claim (adopt orphans the selector matches, release owned objects it no
 * longer matches), writing through the registry.
 */
import type { Obj, OwnerReference } from '../api/meta';
import { type SelectorMatcher, selectorMatcher } from '../api/selectors';
import { StatusError } from '../api/status';
import type { ResourceStore } from '../registry/generic';
import type { WriteOptions } from '../registry/options';

export const writeOptions = (fieldManager: string): WriteOptions => ({
  dryRun: false,
  fieldValidation: 'Ignore',
  warnings: [],
  fieldManager,
});

/** metav1.Time text (seconds) of a moment. */
export const timeText = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

export const labelsOf = (o: Obj): Record<string, string> => (o.metadata.labels ?? {}) as Record<string, string>;

interface Condition {
  type?: string;
  status?: string;
  lastTransitionTime?: string;
}

const readyCondition = (p: Obj): Condition | undefined =>
  ((p.status as { conditions?: Condition[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Ready');

/** podutil.IsPodReady. */
export const isPodReady = (p: Obj): boolean => readyCondition(p)?.status === 'True';

/** When the pod became Ready (ms), 0 when it is not or the time is unset (podReadyTime). */
export function podReadyTime(p: Obj): number {
  const c = readyCondition(p);
  if (c?.status !== 'True' || !c.lastTransitionTime) return 0;
  return Date.parse(c.lastTransitionTime) || 0;
}

/** podutil.IsPodAvailable: Ready for at least minReadySeconds. */
export function isPodAvailable(p: Obj, minReadySeconds: number, now: number): boolean {
  if (!isPodReady(p)) return false;
  if (minReadySeconds <= 0) return true;
  const t = podReadyTime(p);
  return t > 0 && t + minReadySeconds * 1000 < now;
}

/** When a Ready pod not yet available becomes available (ms), else undefined. */
export function availableAt(p: Obj, minReadySeconds: number, now: number): number | undefined {
  if (minReadySeconds <= 0 || !isPodReady(p)) return undefined;
  const t = podReadyTime(p);
  if (t === 0) return undefined;
  const at = t + minReadySeconds * 1000;
  return at >= now ? at : undefined;
}

export const phaseOf = (p: Obj): string => ((p.status as { phase?: string } | undefined)?.phase ?? '') as string;

/** controller.IsPodActive: not finished, not being deleted. */
export const isPodActive = (p: Obj): boolean => phaseOf(p) !== 'Succeeded' && phaseOf(p) !== 'Failed' && !p.metadata.deletionTimestamp;

/** metav1.GetControllerOf. */
export const controllerOf = (o: Obj): OwnerReference | undefined => (o.metadata.ownerReferences ?? []).find((r) => r.controller === true);

/** metav1.NewControllerRef. */
export const controllerRef = (owner: Obj, apiVersion: string, kind: string): OwnerReference => ({
  apiVersion,
  kind,
  name: owner.metadata.name as string,
  uid: owner.metadata.uid as string,
  controller: true,
  blockOwnerDeletion: true,
});

export const intOr = (v: unknown, dflt: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : dflt);

/** The owner's label selector, or undefined when it cannot be converted. */
export const selectorOf = (o: Obj): SelectorMatcher | undefined =>
  selectorMatcher((o.spec as { selector?: unknown } | undefined)?.selector);

const gone = (e: unknown): boolean => e instanceof StatusError && (e.code === 404 || e.code === 409);

/**
 * ControllerRefManager.ClaimObjects: the objects (pods of a ReplicaSet, ReplicaSets of a
 * Deployment) `owner` controls after adopting orphans its selector matches and releasing owned ones
 * it no longer matches. An owner being deleted neither adopts nor releases. Adoption first checks
 * the owner afresh (canAdopt: same uid, not being deleted).
 */
export async function claim(
  owner: Obj,
  ownerApiVersion: string,
  ownerKind: string,
  sel: SelectorMatcher,
  candidates: Obj[],
  store: ResourceStore,
  w: WriteOptions,
  fresh: () => Promise<Obj | undefined>,
): Promise<Obj[]> {
  const uid = owner.metadata.uid as string;
  const deleting = !!owner.metadata.deletionTimestamp;
  const out: Obj[] = [];
  let canAdopt: boolean | undefined;
  for (const o of candidates) {
    const ref = controllerOf(o);
    const ns = o.metadata.namespace as string;
    const name = o.metadata.name as string;
    const ouid = o.metadata.uid as string;
    if (ref) {
      if (ref.uid !== uid) continue;
      if (sel.matches(labelsOf(o))) {
        out.push(o);
        continue;
      }
      if (deleting) continue;
      try {
        await store.updateFrom(ns, name, '', w, (cur) => {
          if (cur.metadata.uid !== ouid) throw new StatusError(409, 'Conflict', 'uid changed');
          const refs = (cur.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid);
          const meta: Obj['metadata'] = { ...cur.metadata, ownerReferences: refs };
          if (refs.length === 0) delete meta.ownerReferences;
          return { ...cur, metadata: meta };
        });
      } catch (e) {
        if (!gone(e)) throw e;
      }
      continue;
    }
    if (deleting || !sel.matches(labelsOf(o)) || o.metadata.deletionTimestamp) continue;
    if (canAdopt === undefined) {
      const f = await fresh();
      canAdopt = !!f && f.metadata.uid === uid && !f.metadata.deletionTimestamp;
    }
    if (!canAdopt) continue;
    try {
      const adopted = await store.updateFrom(ns, name, '', w, (cur) => {
        if (cur.metadata.uid !== ouid || controllerOf(cur as Obj)) throw new StatusError(409, 'Conflict', 'changed');
        return {
          ...cur,
          metadata: {
            ...cur.metadata,
            ownerReferences: [...(cur.metadata.ownerReferences ?? []), controllerRef(owner, ownerApiVersion, ownerKind)],
          },
        };
      });
      out.push(adopted);
    } catch (e) {
      if (!gone(e)) throw e;
    }
  }
  return out;
}

/**
 * slowStartBatch: calls `fn` count times in batches of 1, 2, 4, ... (each batch in parallel),
 * stopping after the first batch with an error; answers the successes and the first error.
 */
export async function slowStartBatch(count: number, initial: number, fn: () => Promise<void>): Promise<{ ok: number; err?: unknown }> {
  let remaining = count;
  let ok = 0;
  for (let batch = Math.min(remaining, initial); batch > 0; batch = Math.min(2 * batch, remaining)) {
    const results = await Promise.allSettled(Array.from({ length: batch }, () => fn()));
    const failed = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
    ok += batch - failed.length;
    if (failed.length > 0) return { ok, err: failed[0]?.reason };
    remaining -= batch;
  }
  return { ok };
}

// --- hashes (controller.ComputeHash) and int-or-percent ---

/** FNV-1a, 32 bits. */
function fnv32a(bytes: Uint8Array, h = 0x811c9dc5): number {
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

/** JSON with object keys in order: the same template always hashes the same. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

const SAFE = 'bcdfghjklmnpqrstvwxz2456789';

/** rand.SafeEncodeString: each byte to a character of the alphabet without vowels or look-alikes. */
export function safeEncodeString(s: string): string {
  let out = '';
  for (const b of new TextEncoder().encode(s)) out += SAFE[b % SAFE.length];
  return out;
}

/**
 * controller.ComputeHash: FNV-32a over the template (here its canonical JSON: the reference
 * hashes the Go struct's printed form), then the collision count as 8 little-endian bytes;
 * the decimal sum rendered with SafeEncodeString.
 */
export function computeHash(template: unknown, collisionCount?: number): string {
  let h = fnv32a(new TextEncoder().encode(canonical(template)));
  if (collisionCount !== undefined) {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setUint32(0, collisionCount >>> 0, true);
    h = fnv32a(b, h);
  }
  return safeEncodeString(String(h));
}

/** intstr.GetScaledValueFromIntOrPercent. */
export function scaledValue(v: number | string | undefined, total: number, roundUp: boolean): number {
  if (v === undefined) return 0;
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v);
  if (!m) return /^\d+$/.test(v) ? Number(v) : 0;
  const x = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}
