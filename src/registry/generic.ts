/**
 * CRUD written once over the store, for every kind: create, get, list, update (incl. the status
 * subresource), patch and server-side apply, delete and deletecollection, with the reference's
 * resourceVersion semantics, metadata rules and Status errors. A kind contributes only its
 * KindDef (schema, strategy). Store errors are translated once per verb into Status errors.
 *
 * ResourceStore is the face every caller imports. Its verbs are written one concept to a file,
 * each file a class extending the one before it and using only what is below it:
 *
 *   reads.ts     ResourceReads: keys, store errors as Status errors, get, list and watch
 *   creating.ts  ResourceCreates: create, and the steps every later write takes again (a
 *                body's type meta, the schema pass, admission's attributes, field ownership)
 *   updating.ts  ResourceUpdates: update and updateFrom, the guaranteed-update loop and merge
 *   patching.ts  ResourcePatches: patch and server-side apply
 *   deleting.ts  ResourceDeletes: delete, forced deletion and deletecollection
 *
 * A chain of classes rather than functions over a context object: the hot paths (a create, a
 * get, a list, a kubelet's status patch) call their steps as methods of one object, as they did
 * when this was one class, with no context to reach through and no delegation per request, and
 * `protected` keeps those steps out of the type callers see. The chain is linear only because a
 * class has one base: patching and deleting do not use each other.
 *
 * Beside it: the request options (options.ts), list results and continue tokens (list.ts), the
 * deletion lifecycle's decisions (deletion.ts) and namespace lookups (namespaces.ts).
 */

import { ResourceDeletes } from './deleting';

export type { ResourceStoreDeps } from './creating';

/** A resource's store: every verb of the chain above, built from a KindDef and ResourceStoreDeps. */
export class ResourceStore extends ResourceDeletes {}
