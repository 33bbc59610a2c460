/**
 * The delete verbs' reads and writes of the store: delete (the object becomes Terminating or is
 * removed), the forced deletion of an object whose stored data cannot be decoded, and
 * deletecollection. What a delete decides (its options, preconditions, the garbage collector's
 * finalizers, grace periods) is in deletion.ts, apart from the store.
 */

import { apiVersionOf, deepEqual, type Obj } from '../api/meta';
import { badRequest, forbidden, notFound, StatusError } from '../api/status';
import { CorruptObjectError, decodeStored, encodeStored } from '../codec/stored';
import { remove as storeRemove, update as storeUpdate } from '../store/ops';
import { isStoreError, type Revision } from '../store/types';
import { checkDeleteOptions, checkPreconditions, checkUnsafeDeleteOptions, planDelete, UNSAFE_DELETE_FIELD } from './deletion';
import { listedObjects } from './list';
import type { DeleteOptions, ListOptions } from './options';
import { ResourcePatches } from './patching';

export class ResourceDeletes extends ResourcePatches {
  /**
   * Delete, with the reference's lifecycle: preconditions (uid, resourceVersion) → 409; the
   * propagation policy adds the `orphan` / `foregroundDeletion` finalizer for the garbage
   * collector; an object with finalizers (or a graceful delete pending, see
   * Strategy.beginDelete) becomes Terminating (deletionTimestamp set) and stays until they are
   * gone; otherwise it is removed. Deleting a Terminating object again changes nothing.
   */
  delete(namespace: string, name: string, o: DeleteOptions): Promise<{ obj: Obj; deleted: boolean }> {
    if (o.user === undefined && this.ownWrites) return this.ownWrites.run(() => this.deleteNow(namespace, name, o));
    return this.deleteNow(namespace, name, o);
  }

  private async deleteNow(namespace: string, name: string, o: DeleteOptions): Promise<{ obj: Obj; deleted: boolean }> {
    const key = this.key(namespace, name);
    const why = this.def.strategy.deleteForbidden?.(name);
    if (why) throw forbidden(this.target, name, why);
    if (o.ignoreStoreReadError) return this.unsafeDelete(namespace, name, o);
    checkDeleteOptions(o);
    for (;;) {
      const curKv = await this.get(namespace, name);
      const cur = decodeStored(curKv);
      checkPreconditions(this.target, name, cur, o.preconditions);
      if (this.admission?.wants(this.def.group, this.def.plural, '', 'DELETE')) {
        const attrs = this.attributes('DELETE', '', namespace, name, cur, cur, o, 'DeleteOptions');
        if (this.admission.wantsAdmit(this.def.group, this.def.plural, '', 'DELETE')) await this.admission.admit(attrs);
        await this.admission.validate(attrs);
      }
      const { next, remove } = planDelete(this.def.strategy, cur, o, this.clock);
      if (remove) {
        if (o.dryRun) return { obj: cur, deleted: true };
        try {
          await storeRemove(this.kv, key, curKv.modRevision);
          await this.hooks?.release(cur);
          return { obj: cur, deleted: true };
        } catch (e) {
          if (isStoreError(e, 'conflict')) continue;
          throw this.translate(e, name);
        }
      }
      if (deepEqual(next, cur)) return { obj: cur, deleted: false };
      if (o.dryRun) return { obj: next, deleted: false };
      try {
        const rev = await storeUpdate(this.kv, key, encodeStored(next, this.updatedSlabs), curKv.modRevision);
        next.metadata.resourceVersion = String(rev);
        return { obj: next, deleted: false };
      } catch (e) {
        if (isStoreError(e, 'conflict')) continue;
        throw this.translate(e, name);
      }
    }
  }

  /**
   * Forced deletion of an object that cannot be read (spec 1, "Forced deletion (unsafe)"): the
   * other delete options must be unset; a readable object is refused; finalizers and
   * preconditions are skipped. The caller checked the gate.
   */
  private async unsafeDelete(namespace: string, name: string, o: DeleteOptions): Promise<{ obj: Obj; deleted: boolean }> {
    checkUnsafeDeleteOptions(o);
    const key = this.key(namespace, name);
    const r = await this.read(() => this.kv.range(key));
    const kv = r.kvs[0];
    if (!kv) throw notFound(this.target, name);
    try {
      decodeStored(kv);
    } catch (e) {
      if (!(e instanceof CorruptObjectError)) throw e;
      try {
        await storeRemove(this.kv, key, kv.modRevision);
      } catch (err) {
        throw this.translate(err, name);
      }
      const obj: Obj = { apiVersion: apiVersionOf(this.def), kind: this.def.kind, metadata: { name, uid: '' } };
      if (this.def.namespaced) obj.metadata.namespace = namespace;
      return { obj, deleted: true };
    }
    throw badRequest(
      `the object ${name} of ${this.def.plural} is readable; ${UNSAFE_DELETE_FIELD} is only for objects whose stored data cannot be decoded: use a normal delete`,
    );
  }

  /** Delete everything a list with these options returns; answers the deleted objects. */
  async deleteCollection(namespace: string, lo: ListOptions, o: DeleteOptions): Promise<{ items: Obj[]; revision: Revision }> {
    const r = await this.list(namespace, { ...lo, limit: 0, continueToken: '' });
    const items: Obj[] = [];
    for (const obj of listedObjects(r)) {
      try {
        const d = await this.delete(obj.metadata.namespace ?? '', obj.metadata.name as string, { ...o, preconditions: undefined });
        items.push(d.obj);
      } catch (e) {
        if (e instanceof StatusError && e.code === 404) continue;
        throw e;
      }
    }
    return { items, revision: this.kv.currentRevision() };
  }
}
