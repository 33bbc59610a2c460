/**
 * PATCH: JSON, merge and strategic merge patches of the current object, and server-side apply
 * (which creates the object when it is absent, and computes managedFields itself). Both go
 * through the update loop (updating.ts), which applies them again to the newer object after a
 * write race. The patch formats are in patch/ and apply's merge and field sets in apply/: this
 * is where they meet the store.
 */

import { svcApiVersion } from '../api/brand';
import { apiVersionOf, clone, isObject, type Obj } from '../api/meta';
import { badRequest, conflict, notFound, STALE_OBJECT } from '../api/status';
import { ApplyConflictError, applyAfterClientSideApply, checkApplyManagedFields, conflictStatus } from './apply';
import { goJsonType } from './decode-errors';
import type { PatchType, Subresource, WriteOptions } from './options';
import { applyPatch, JSON_PATCH, leavesManagedFields, MERGE_PATCH, PatchError, STRATEGIC_MERGE_PATCH } from './patch';
import { ResourceUpdates } from './updating';

const PATCH_MEDIA: Record<Exclude<PatchType, 'apply-patch'>, typeof JSON_PATCH | typeof MERGE_PATCH | typeof STRATEGIC_MERGE_PATCH> = {
  'json-patch': JSON_PATCH,
  'merge-patch': MERGE_PATCH,
  'strategic-merge-patch': STRATEGIC_MERGE_PATCH,
};

export class ResourcePatches extends ResourceUpdates {
  /**
   * PATCH: the patch is applied to the current object and the result goes through the update
   * path; after a write race the patch is applied again to the newer object (unless it carried
   * a resourceVersion, which makes it conditional: 409). Server-side apply creates the object
   * when it is absent, and computes managedFields itself.
   */
  async patch(
    namespace: string,
    name: string,
    type: PatchType,
    body: unknown,
    w: WriteOptions,
    subresource: Subresource,
    force: boolean,
  ): Promise<{ obj: Obj; created: boolean }> {
    w.patch = true;
    // The apply's configuration checked and admitted for the existence check below, used as it is
    // by the update's first attempt (a retry makes its own: apply may keep parts of it).
    let firstApplied: Obj | undefined;
    if (type === 'apply-patch') {
      if (!w.fieldManager) {
        // Issue 5 asks for 400 here; the reference's text is kept (the reference answers 422 Invalid PatchOptions).
        throw badRequest('PatchOptions.meta.svc.io "" is invalid: fieldManager: Required value: is required for apply patch');
      }
      if (body === null) body = {};
      if (!isObject(body)) {
        throw badRequest(
          `error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${goJsonType(body)} into Go value of type map[string]interface {}`,
        );
      }
      // The reference's field manager takes only its own group, version and kind (versionCheckManager).
      const { apiVersion, kind } = body;
      if (typeof apiVersion !== 'string' || svcApiVersion(apiVersion) !== apiVersionOf(this.def) || kind !== this.def.kind) {
        const gv = typeof apiVersion === 'string' ? apiVersion : '';
        throw badRequest(`invalid object type: ${gv.includes('/') ? gv : `/${gv}`}, Kind=${typeof kind === 'string' ? kind : ''}`);
      }
      checkApplyManagedFields(body);
      const applied = this.checkTypeMeta(clone(body));
      // The applied configuration as its manager wrote it: defaults are not the manager's fields
      // (the reference defaults the object apply makes, not the configuration).
      this.admit(applied, w, undefined, false);
      if (applied.metadata.name !== undefined && applied.metadata.name !== name) {
        throw badRequest(`the name of the object (${applied.metadata.name}) does not match the name on the URL (${name})`);
      }
      applied.metadata.name = name;
      firstApplied = applied;
      // The newest version, durable or not, as the update below reads it; absent there, the
      // durable read decides (as in updateLoop).
      const key = this.key(namespace, name);
      const exists = this.latestOf(key, name) !== undefined || (await this.kv.range(key)).kvs.length > 0;
      if (!exists) {
        if (subresource !== '') throw notFound(this.target, name);
        const r = this.runApply(undefined, applied, w, subresource, force);
        return { obj: await this.create(namespace, r, w, true), created: true };
      }
    }
    const r = await this.guaranteedUpdate(namespace, name, w, subresource, 0, (cur) => {
      if (type === 'apply-patch') {
        let applied = firstApplied;
        firstApplied = undefined;
        if (!applied) {
          applied = this.checkTypeMeta(clone(body));
          this.admit(applied, { ...w, warnings: [] }, undefined, false);
          applied.metadata.name = name;
        }
        // apply() neither modifies the live object nor shares structure with it (its result is
        // built of copies: apply.test.ts applies to frozen objects and looks for shared parts),
        // but for FieldsV1 trees, which nothing writes into once made.
        const input = this.runApply(cur, applied, w, subresource, force);
        // What apply made is defaulted as any written object (fields it dropped come back as defaults).
        this.admit(input, { ...w, warnings: [] });
        return { input, managed: true, fresh: true };
      }
      let patched: unknown;
      // A patch that cannot reach managedFields (a label, a status) gets the list itself in its
      // result instead of a copy: `cur` holds an empty list while the patch copies it, and the
      // result's copy of that is replaced by the list. Copying a pod's list (every manager's
      // FieldsV1 tree), then comparing the copy with the list entry by entry to learn that the
      // request did not edit it (recordUpdate), took ~6% of a pod's merge patch (the profile in
      // bench/history.md, 2026-11-29 seventeenth session). `cur` is this attempt's own decode
      // and gets its list back at once; `input` and `cur` then share the list until
      // recordUpdate gives `input` a new one, before any admission plugin sees it. Not on other
      // subresources: a binding keeps the shared list, where a mutating webhook's edit of it
      // would reach `cur` too.
      const live = cur.metadata.managedFields;
      const lend = live !== undefined && (subresource === '' || subresource === 'status') && leavesManagedFields(PATCH_MEDIA[type], body);
      try {
        if (lend) cur.metadata.managedFields = [];
        patched = applyPatch(PATCH_MEDIA[type], cur, body, {
          fieldValidation: w.fieldValidation,
          schemas: this.schemas,
          defName: this.def.schema,
        });
      } catch (e) {
        if (e instanceof PatchError) throw e.toStatusError();
        throw e;
      } finally {
        if (lend) cur.metadata.managedFields = live;
      }
      if (lend && isObject(patched) && isObject(patched.metadata)) patched.metadata.managedFields = live;
      const input = this.checkTypeMeta(patched);
      const again = () =>
        applyPatch(PATCH_MEDIA[type], cur, body, { fieldValidation: w.fieldValidation, schemas: this.schemas, defName: this.def.schema });
      this.admit(input, { ...w, warnings: w.warnings }, type === 'strategic-merge-patch' ? { smp: body } : { json: again });
      if (input.metadata.name !== name)
        throw badRequest(`the name of the object (${input.metadata.name ?? ''}) does not match the name on the URL (${name})`);
      const rv = input.metadata.resourceVersion;
      if (rv !== undefined && rv !== cur.metadata.resourceVersion) throw conflict(this.target, name, STALE_OBJECT);
      // The three patch kinds neither modify `cur` nor share structure with it.
      return { input, managed: false, fresh: true };
    });
    return { obj: r.obj, created: false };
  }

  /** Server-side apply of `applied` over `live` (undefined: create); conflicts become 409. */
  private runApply(live: Obj | undefined, applied: Obj, w: WriteOptions, subresource: Subresource, force: boolean): Obj {
    try {
      return applyAfterClientSideApply(live, applied, { ...this.ownership(w, subresource), force }).obj;
    } catch (e) {
      if (e instanceof ApplyConflictError) throw conflictStatus(e, this.target, applied.metadata.name);
      throw e;
    }
  }
}
