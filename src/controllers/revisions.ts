/**
 * ControllerRevisions, as the reference's pkg/controller/history and the StatefulSet and DaemonSet
 * controllers use them: a revision holds a patch `{"spec":{"template":{..., "$patch":"replace"}}}`
 * that restores the owner's pod template (kubectl's `rollout undo` applies it as a strategic merge
 * patch), a revision number, and the owner's template labels (so `rollout history` finds it by the
 * owner's selector). Revisions are claimed like pods; a new one whose name is taken by a different
 * revision bumps the owner's collisionCount; the oldest ones no pod uses beyond
 * revisionHistoryLimit are deleted.
 */
import { clone, type Obj } from '../api/meta';
import { StatusError } from '../api/status';
import { decodeStored } from '../codec/stored';
import type { ResourceStore } from '../registry/generic';
import type { WriteOptions } from '../registry/options';
import type { WatchCache } from '../watch/cache';
import { canonical, claim, controllerRef, intOr, selectorOf } from './controller-utils';

export const REVISION_HASH_LABEL = 'controller-revision-hash';

export const revisionNumber = (cr: Obj): number => intOr((cr as { revision?: number }).revision, 0);

const created = (o: Obj): number => Date.parse(o.metadata.creationTimestamp ?? '') || 0;

/** history.ByRevision: by revision number, then creation, then name. */
export const byRevisionNumber = (a: Obj, b: Obj): number =>
  revisionNumber(a) - revisionNumber(b) || created(a) - created(b) || ((a.metadata.name as string) < (b.metadata.name as string) ? -1 : 1);

export const nextRevision = (revs: Obj[]): number => revs.reduce((m, r) => Math.max(m, revisionNumber(r)), 0) + 1;

/** getPatch: the owner's pod template as a replacing strategic merge patch. */
export function templatePatch(owner: Obj): Record<string, unknown> {
  const template = clone(((owner.spec as { template?: Obj } | undefined)?.template ?? {}) as Obj) as Record<string, unknown>;
  template.$patch = 'replace';
  return { spec: { template } };
}

/** The pod template a revision restores (ApplyRevision). */
export function revisionTemplate(cr: Obj): Obj {
  const t = clone(((cr as { data?: { spec?: { template?: Obj } } }).data?.spec?.template ?? {}) as Obj as Obj) as Record<string, unknown>;
  delete t.$patch;
  return t as unknown as Obj;
}

/** history.EqualRevision: the same data. */
export const equalRevision = (a: Obj, b: Obj): boolean =>
  canonical((a as { data?: unknown }).data ?? null) === canonical((b as { data?: unknown }).data ?? null);

export interface RevisionStore {
  store: ResourceStore;
  cache: WatchCache;
  w: () => WriteOptions;
}

/** The owner's revisions (claimed: orphans its selector matches adopted), oldest first. */
export async function ownedRevisions(
  rs: RevisionStore,
  owner: Obj,
  ownerKind: string,
  fresh: () => Promise<Obj | undefined>,
): Promise<Obj[]> {
  const sel = selectorOf(owner);
  if (!sel) return [];
  const all = rs.cache.list(`${rs.store.prefix}${owner.metadata.namespace}/`).map((c) => c.obj);
  const out = await claim(owner, 'apps/v1', ownerKind, sel, all, rs.store, rs.w(), fresh);
  return out.sort(byRevisionNumber);
}

/** NewControllerRevision: owned by `owner`, labelled with its template's labels (plus `extraLabels`), its annotations. */
export function newRevision(
  owner: Obj,
  ownerKind: string,
  data: Record<string, unknown>,
  revision: number,
  extraLabels: Record<string, string> = {},
): Obj {
  const tl = ((owner.spec as { template?: Obj } | undefined)?.template?.metadata?.labels ?? {}) as Record<string, string>;
  const meta: Obj['metadata'] = {
    namespace: owner.metadata.namespace,
    labels: { ...tl, ...extraLabels },
    ownerReferences: [controllerRef(owner, 'apps/v1', ownerKind)],
  };
  if (owner.metadata.annotations) meta.annotations = { ...owner.metadata.annotations };
  return { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: meta, data, revision } as Obj;
}

/**
 * CreateControllerRevision: named `<owner>-<hash(collisionCount)>`; a name taken by an equal
 * revision answers that one, by a different one retries with collisionCount + 1. Answers the
 * revision and the collision count used. `hashLabel`: a label set to the hash (DaemonSets).
 */
export async function createRevision(
  rs: RevisionStore,
  parent: Obj,
  cr: Obj,
  collisionCount: number,
  hashOf: (collisionCount: number) => string,
  hashLabel?: string,
): Promise<{ rev: Obj; collisionCount: number }> {
  const ns = parent.metadata.namespace as string;
  for (let cc = collisionCount; ; cc++) {
    const hash = hashOf(cc);
    const body = clone(cr);
    body.metadata.name = `${parent.metadata.name}-${hash}`;
    if (hashLabel) body.metadata.labels = { ...(body.metadata.labels ?? {}), [hashLabel]: hash };
    try {
      return { rev: await rs.store.create(ns, body, rs.w()), collisionCount: cc };
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 409)) throw e;
      const existing = decodeStored(await rs.store.get(ns, body.metadata.name as string));
      if (equalRevision(existing, body) && existing.metadata.ownerReferences?.some((r) => r.uid === parent.metadata.uid)) {
        return { rev: existing, collisionCount: cc };
      }
    }
  }
}

/** Gives an existing revision a new revision number (an older template made current again). */
export async function renumberRevision(rs: RevisionStore, cr: Obj, revision: number): Promise<Obj> {
  const uid = cr.metadata.uid;
  return rs.store.updateFrom(cr.metadata.namespace as string, cr.metadata.name as string, '', rs.w(), (cur) => {
    if (cur.metadata.uid !== uid) throw new StatusError(409, 'Conflict', 'revision replaced');
    return { ...cur, revision } as Obj;
  });
}

/** truncateHistory: deletes the oldest revisions not in `live` beyond `limit`. */
export async function truncateHistory(rs: RevisionStore, revs: Obj[], live: Set<string>, limit: number): Promise<void> {
  const history = revs.filter((r) => !live.has(r.metadata.name as string)).sort(byRevisionNumber);
  for (const r of history.slice(0, Math.max(0, history.length - limit))) {
    try {
      await rs.store.delete(r.metadata.namespace as string, r.metadata.name as string, {
        dryRun: false,
        preconditions: { uid: r.metadata.uid as string },
      });
    } catch (e) {
      if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
    }
  }
}
