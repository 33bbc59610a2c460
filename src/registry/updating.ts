/**
 * Changes of an existing object through the update path: PUT (update, the status subresource
 * included), a write computed from the current object (updateFrom: bindings, the server's
 * controllers), and the loop they and patches (patching.ts) run, the reference's
 * GuaranteedUpdate: read the newest version, compute the input from it, carry server-owned state
 * over (merge), record ownership, admit, validate, and write if anything changed, retrying on a
 * write race. The loop is the hot path of every patch (a kubelet's pod status), which is why its
 * comments count awaits and copies.
 */

import { clone, deepEqual, type Obj } from '../api/meta';
import { badRequest, conflict, invalid, STALE_OBJECT } from '../api/status';
import { type FieldError, validateObjectMeta, validateObjectMetaUpdate } from '../api/validation';
import { decodeStored, encodeStored } from '../codec/stored';
import { remove as storeRemove, update as storeUpdate } from '../store/ops';
import { isStoreError, type KeyValue } from '../store/types';
import { ResourceCreates } from './creating';
import { deletionComplete } from './deletion';
import { type StatusLike, statusLikeOf } from './kind';
import { parseResourceVersion } from './list';
import type { Subresource, WriteOptions } from './options';

export class ResourceUpdates extends ResourceCreates {
  /**
   * PUT of the main resource or of its status subresource. The body's resourceVersion, when set,
   * must be current (else 409); without it the update is unconditional and retried on races.
   * An update that changes nothing writes nothing and keeps the resourceVersion.
   */
  async update(namespace: string, name: string, body: unknown, w: WriteOptions, subresource: Subresource): Promise<Obj> {
    const input = this.checkTypeMeta(body);
    this.admit(input, w);
    const meta = input.metadata;
    if (meta.name !== name) throw badRequest(`the name of the object (${meta.name ?? ''}) does not match the name on the URL (${name})`);
    if (this.def.namespaced && meta.namespace && meta.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    const wantRv = meta.resourceVersion ? parseResourceVersion(meta.resourceVersion, 'resourceVersion') : 0;
    return (await this.guaranteedUpdate(namespace, name, w, subresource, wantRv, () => ({ input, managed: false }))).obj;
  }

  /**
   * A write computed from the current object by `f` (which throws a StatusError to refuse), as
   * the reference's GuaranteedUpdate: retried on the newer object after a race.
   */
  async updateFrom(
    namespace: string,
    name: string,
    subresource: Subresource,
    w: WriteOptions,
    f: (cur: Readonly<Obj>) => Obj,
  ): Promise<Obj> {
    return (await this.guaranteedUpdate(namespace, name, w, subresource, 0, (cur) => ({ input: f(cur), managed: false, fresh: true }))).obj;
  }

  /**
   * The update loop (the reference's GuaranteedUpdate): read the current object, compute the
   * input from it, carry server-owned state over, record ownership, validate, and write if
   * anything changed, retrying on a write race unless the caller pinned a resourceVersion.
   */
  protected guaranteedUpdate(...a: Parameters<ResourceUpdates['guaranteedUpdateNow']>): Promise<{ obj: Obj }> {
    const run = () => this.guaranteedUpdateNow(...a);
    return a[2].user === undefined && this.ownWrites ? this.ownWrites.run(run, a[2].background) : run();
  }

  private async guaranteedUpdateNow(
    namespace: string,
    name: string,
    w: WriteOptions,
    subresource: Subresource,
    wantRv: number,
    tryUpdate: (cur: Readonly<Obj>) => { input: Obj; managed: boolean; fresh?: boolean },
  ): Promise<{ obj: Obj }> {
    if (this.kv.latest) return this.updateLoop(namespace, name, w, subresource, wantRv, tryUpdate);
    // A store without latest() (etcd) would make concurrent updates of one key from this
    // replica fail their compares against each other, each retry a round trip (100 concurrent
    // patches: thousands of txns). Queued per key here, each reads what the previous wrote;
    // writes from other replicas still meet in etcd's compare and retry.
    const key = this.key(namespace, name);
    const before = this.keyQueue.get(key);
    let done = () => {};
    const mine = new Promise<void>((r) => {
      done = r;
    });
    const tail = before ? before.then(() => mine) : mine;
    this.keyQueue.set(key, tail);
    try {
      if (before) await before;
      return await this.updateLoop(namespace, name, w, subresource, wantRv, tryUpdate);
    } finally {
      done();
      if (this.keyQueue.get(key) === tail) this.keyQueue.delete(key);
    }
  }

  /** Per key, the end of the queue of updates from this process (stores without latest()). */
  private readonly keyQueue = new Map<string, Promise<void>>();

  private async updateLoop(
    namespace: string,
    name: string,
    w: WriteOptions,
    subresource: Subresource,
    wantRv: number,
    tryUpdate: (cur: Readonly<Obj>) => { input: Obj; managed: boolean; fresh?: boolean },
  ): Promise<{ obj: Obj }> {
    const key = this.key(namespace, name);
    for (;;) {
      // On the embedded store, start from the newest version even if its write is not durable
      // yet: the txn below (no await in between) then chains after it in the log instead of
      // failing its compare and waiting a sync per retry (100 concurrent patches of one object
      // took 100 syncs). Any answer not followed by our own write waits until that version is
      // durable, so nothing not yet acknowledged reaches this client.
      // Absent there (never created, or deleted by a write not yet durable): the durable read
      // decides, so a 404 is never answered before the delete is durable.
      const curKv = this.latestOf(key, name) ?? (await this.get(namespace, name));
      let next: Obj;
      let cur: Obj;
      try {
        if (wantRv && wantRv !== curKv.modRevision) throw conflict(this.target, name, STALE_OBJECT);
        cur = decodeStored(curKv);
        // `cur` is this attempt's own decode; tryUpdate only reads it. A `fresh` input was made for
        // this attempt (a patch's result) and becomes the new object without another copy.
        const { input, managed, fresh } = tryUpdate(cur);
        next = this.merge(input, cur, subresource, managed, fresh);
        // A binding leaves managedFields alone: the reference's BindingREST writes through the
        // storage's GuaranteedUpdate, not the field manager (and the slow path of recordUpdate was
        // ~40% of a scheduled pod's server CPU in bench/scheduler.ts).
        if (!managed && subresource !== 'binding') this.recordManaged(cur, next, w, subresource);
        // Mutating admission of updates (webhooks, policies): awaited only when a mutating plugin
        // looks at the request; what it changes is not owned by the writer, as on create.
        if (this.admission?.wantsAdmit(this.def.group, this.def.plural, subresource, 'UPDATE')) {
          await this.admission.admit(
            this.attributes('UPDATE', subresource, namespace, name, next, cur, w, w.patch ? 'PatchOptions' : 'UpdateOptions'),
          );
        }
        const errs: FieldError[] = validateObjectMeta(next.metadata, this.def.namespaced, this.def.nameRule);
        errs.push(...validateObjectMetaUpdate(next.metadata, cur.metadata));
        const like = statusLikeOf(this.def, subresource);
        if (like?.validate) errs.push(...like.validate(next, cur));
        else {
          errs.push(...(this.def.strategy.validate?.(next, cur) ?? []));
          // A binding sets what updates may not (spec.nodeName), having checked it may.
          if (subresource !== 'binding') errs.push(...(this.def.strategy.validateUpdate?.(next, cur, subresource) ?? []));
        }
        if (errs.length > 0) throw invalid(this.def.kind, this.def.group, name, errs);
      } catch (e) {
        await this.durable(curKv);
        throw e;
      }
      // Validating admission of updates (policies): only when a plugin looks at them, since the
      // await gives up the chaining above (a race then retries).
      if (this.admission?.wants(this.def.group, this.def.plural, subresource, 'UPDATE')) {
        try {
          await this.admission.validate(
            this.attributes('UPDATE', subresource, namespace, name, next, cur, w, w.patch ? 'PatchOptions' : 'UpdateOptions'),
          );
        } catch (e) {
          await this.durable(curKv);
          throw e;
        }
      }
      if (deepEqual(next, cur)) {
        await this.durable(curKv);
        return { obj: cur };
      }
      const removing = deletionComplete(next, this.def.strategy);
      // Kinds with write hooks reserve what the new version needs (an await here gives up the
      // chaining above for them: a conflict retries, after giving the reservation back).
      const undo = this.hooks && !removing ? await this.hooks.reserve(next, cur, w.dryRun) : undefined;
      if (w.dryRun) {
        await this.durable(curKv);
        return { obj: next };
      }
      try {
        if (removing) {
          // The last finalizer is gone from a Terminating object: it is removed now.
          await storeRemove(this.kv, key, curKv.modRevision);
          await this.hooks?.release(cur);
          return { obj: next };
        }
        const rev = await storeUpdate(this.kv, key, encodeStored(next, this.updatedSlabs), curKv.modRevision);
        next.metadata.resourceVersion = String(rev);
        await this.hooks?.release(cur, next);
        return { obj: next };
      } catch (e) {
        await undo?.();
        if (isStoreError(e, 'conflict') && !wantRv) continue;
        throw this.translate(e, name);
      }
    }
  }

  /** The newest version of `key` where the store has KV.latest (possibly not durable yet). */
  protected latestOf(key: string, name: string): KeyValue | undefined {
    if (!this.kv.latest) return undefined;
    try {
      return this.kv.latest(key);
    } catch (e) {
      throw this.translate(e, name);
    }
  }

  /** Wait until `kv` is durable before answering from it (see guaranteedUpdate). */
  private async durable(kv: KeyValue): Promise<void> {
    if (!this.kv.durable || kv.modRevision <= this.kv.currentRevision()) return;
    try {
      await this.kv.durable(kv.modRevision);
    } catch (e) {
      throw this.translate(e, '');
    }
  }

  /** The object an update stores: the input with server-owned state carried over from `cur`. */
  private merge(input: Obj, cur: Obj, subresource: Subresource, managed = false, fresh = false): Obj {
    let next: Obj;
    if (subresource === 'finalize') {
      // namespaces/finalize changes only spec.finalizers.
      next = clone(cur);
      const spec = { ...((next.spec as Record<string, unknown> | undefined) ?? {}) };
      const want = (input.spec as { finalizers?: string[] } | undefined)?.finalizers;
      if (want === undefined || want.length === 0) delete spec.finalizers;
      else spec.finalizers = want;
      next.spec = spec;
    } else if (subresource === 'binding') {
      // The binder made the new object from the current one (pods/binding: spec.nodeName).
      next = fresh ? input : clone(input);
    } else if (statusLikeOf(this.def, subresource)) {
      // A status-like subresource picks what it may change (a CertificateSigningRequest's approval).
      next = (statusLikeOf(this.def, subresource) as StatusLike).merge(input, cur);
      if (managed && input.metadata.managedFields) next.metadata.managedFields = clone(input.metadata.managedFields);
    } else if (subresource === 'status') {
      // Status writes change only status: everything else is the current object's (copied), the
      // status is the input's, taken as it is when the input was made for this attempt (a
      // patch's result) rather than copied. A kubelet's status patch of a pod copied the pod's
      // status twice (the current one with the object, then the input's over it).
      const { status: _old, ...rest } = cur;
      next = clone(rest as Obj);
      if (input.status !== undefined) next.status = fresh ? input.status : clone(input.status);
      this.def.strategy.prepareForStatusUpdate?.(next, cur);
      // Server-side apply computed the new ownership on the input: keep it.
      if (managed && input.metadata.managedFields) next.metadata.managedFields = clone(input.metadata.managedFields);
    } else {
      next = fresh ? input : clone(input);
      if (this.def.status) {
        if (cur.status === undefined) delete next.status;
        else next.status = clone(cur.status);
      }
      this.def.strategy.prepareForUpdate?.(next, cur);
    }
    const m = next.metadata;
    const c = cur.metadata;
    m.namespace = c.namespace;
    m.uid = c.uid;
    m.creationTimestamp = c.creationTimestamp;
    m.resourceVersion = c.resourceVersion;
    if (c.deletionTimestamp) m.deletionTimestamp = c.deletionTimestamp;
    else delete m.deletionTimestamp;
    if (c.deletionGracePeriodSeconds !== undefined) m.deletionGracePeriodSeconds = c.deletionGracePeriodSeconds;
    else delete m.deletionGracePeriodSeconds;
    if (m.namespace === undefined) delete m.namespace;
    delete m.selfLink;
    if (this.def.generation) {
      const bump = specChanged(next, cur) || (subresource === '' && this.def.strategy.bumpsGeneration?.(next, cur) === true);
      m.generation = (c.generation ?? 1) + (bump ? 1 : 0);
    } else {
      delete m.generation;
    }
    return next;
  }
}

/** Whether anything outside metadata and status differs (drives metadata.generation). */
function specChanged(a: Obj, b: Obj): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    if (k === 'metadata' || k === 'status' || k === 'kind' || k === 'apiVersion') continue;
    if (!deepEqual(a[k], b[k])) return true;
  }
  return false;
}
