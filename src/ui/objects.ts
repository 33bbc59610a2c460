/**
 * The objects page's endpoints: a resource's objects (one namespace or all), one object as YAML,
 * and a stream of batched changes (server-sent events) from the resource's watch cache, which
 * the browser applies to the list it holds. Each asks RBAC for the user's own right (list, get, watch) on
 * the resource, as the API would: the dashboard shows no object its user could not read.
 */

import { stringify } from 'yaml';
import type { Obj } from '../api/meta';
import type { UserInfo } from '../api/user';
import type { Authorizer } from '../auth/authz';
import type { ApiRegistry } from '../registry/api-registry';
import type { ResourceStore } from '../registry/generic';
import { BATCH_DEFAULTS, type Batch, type BatchOptions, type Change, ChangeBatcher } from './change-batches';

/** The most objects one read returns (the page says how many there are in all). */
export const MAX_LISTED = 500;

export class UiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface Target {
  store: ResourceStore;
  namespace: string;
}

function target(api: ApiRegistry, q: URLSearchParams): Target {
  const store = api.lookup(q.get('group') ?? '', q.get('version') ?? '', q.get('resource') ?? '');
  if (!store?.cache) throw new UiError(404, 'no such resource (or it has no watch cache)');
  return { store, namespace: store.def.namespaced ? (q.get('namespace') ?? '') : '' };
}

function authorize(authz: Authorizer, user: UserInfo, verb: string, t: Target, name = ''): void {
  const ok = authz.allows(user, {
    verb,
    resourceRequest: true,
    namespace: t.namespace,
    group: t.store.def.group,
    resource: t.store.def.plural,
    subresource: '',
    name,
    path: '',
  });
  if (!ok) throw new UiError(403, `User "${user.name}" cannot ${verb} resource "${t.store.def.plural}"`);
}

/** The cache's key prefix of a target's objects ('' for all of the resource). */
const keyPrefix = (t: Target) => (t.store.def.namespaced && t.namespace ? `${t.store.prefix}${t.namespace}/` : '');

const summary = (o: Obj, rv: number): Change => {
  const m = o.metadata;
  return {
    namespace: (m.namespace as string | undefined) ?? '',
    name: m.name as string,
    created: (m.creationTimestamp as string | undefined) ?? '',
    resourceVersion: String(rv),
  };
};

/**
 * The first MAX_LISTED objects in key order, read from the watch cache (no store read; the
 * page costs its own size, not the resource's), with the count of all and the cache's
 * revision: the change stream (watchObjects) starts from that same cache, so the browser
 * applies its changes to this list by revision.
 */
export async function listObjects(api: ApiRegistry, authz: Authorizer, user: UserInfo, q: URLSearchParams) {
  const t = target(api, q);
  authorize(authz, user, 'list', t);
  const cache = t.store.watchCache();
  await cache.start();
  const prefix = keyPrefix(t);
  const items = cache.list(prefix, MAX_LISTED).map((c) => summary(c.obj, c.rv));
  return { revision: cache.revision, total: cache.size(prefix), limit: MAX_LISTED, items };
}

export async function getObject(api: ApiRegistry, authz: Authorizer, user: UserInfo, q: URLSearchParams) {
  const t = target(api, q);
  const name = q.get('name') ?? '';
  authorize(authz, user, 'get', t, name);
  const cache = t.store.watchCache();
  await cache.start();
  const c = cache.get(t.store.key(t.namespace, name));
  if (!c) throw new UiError(404, `${t.store.def.plural} "${name}" not found`);
  return { yaml: stringify(c.obj) };
}

/**
 * Server-sent events: first `{revision, total, changes: []}` (where the stream starts), then
 * batches of changes at most every `intervalMs` (change-batches.ts: only the shown fields of each
 * object, or a `resync` marker when too many objects changed at once), and a comment every 30 s
 * so proxies keep the stream, until the browser goes away. The watch's events are taken as they
 * come (its queue never fills), but only the newest of each object is held, and none past
 * `maxChanges`.
 */
export async function watchObjects(
  api: ApiRegistry,
  authz: Authorizer,
  user: UserInfo,
  q: URLSearchParams,
  signal: AbortSignal,
  open: Set<{ end(reason: 'closed'): void }>,
  opts: BatchOptions = BATCH_DEFAULTS,
) {
  const t = target(api, q);
  authorize(authz, user, 'watch', t);
  const cache = t.store.watchCache();
  const prefix = keyPrefix(t);
  const w = await t.store.watch({
    namespace: t.namespace,
    name: '',
    selectors: { labelSelector: [], fieldSelector: [] },
    selectionKey: '',
    resourceVersion: '0',
    initialEvents: false,
    freshnessTimeoutMs: 3000,
  });
  const stream = w.stream;
  open.add(stream);
  const enc = new TextEncoder();
  const batches = new ChangeBatcher(opts);
  const KEEPALIVE_MS = 30_000;
  let keepaliveAt = Date.now() + KEEPALIVE_MS;
  const message = (b: Batch) => `data: ${JSON.stringify(b)}\n\n`;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const close = () => {
        open.delete(stream);
        stream.end('closed');
        try {
          controller.close();
        } catch {
          // already closed
        }
      };
      signal.addEventListener('abort', close, { once: true });
      controller.enqueue(enc.encode(message({ revision: w.revision, total: cache.size(prefix), changes: [] })));
      stream.onSignal = () => {
        if (stream.ended) return close();
        for (const e of stream.take()) {
          const rv = e.event.rv;
          const deleted = e.type === 'DELETED';
          batches.add({
            key: e.event.key,
            describe: () => (deleted ? { ...summary(e.obj, rv), deleted: true } : summary(e.obj, rv)),
          });
        }
        const now = Date.now();
        let out = '';
        // All events up to the cache's revision are taken: the batch states the selection there.
        const b = batches.take(now, cache.revision, cache.size(prefix));
        if (b) out += message(b);
        if (now >= keepaliveAt) {
          out += ': keepalive\n\n';
          keepaliveAt = now + KEEPALIVE_MS;
        }
        if (out) controller.enqueue(enc.encode(out));
        stream.wakeAt(batches.dueAt(now) ?? keepaliveAt);
      };
      stream.wakeAt(keepaliveAt);
    },
    cancel() {
      open.delete(stream);
      stream.end('closed');
    },
  });
}
