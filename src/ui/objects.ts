/**
 * The objects page's endpoints: a resource's objects (one namespace or all), one object as YAML,
 * and a stream of change notices (server-sent events) from the resource's watch cache, which the
 * browser turns into a refetch. Each asks RBAC for the user's own right (list, get, watch) on
 * the resource, as the API would: the dashboard shows no object its user could not read.
 */

import { stringify } from 'yaml';
import type { UserInfo } from '../api/user';
import type { Authorizer } from '../auth/authz';
import type { ApiRegistry } from '../registry/api-registry';
import type { ResourceStore } from '../registry/generic';
import { ALL_OBJECTS } from '../registry/list';

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

export async function listObjects(api: ApiRegistry, authz: Authorizer, user: UserInfo, q: URLSearchParams) {
  const t = target(api, q);
  authorize(authz, user, 'list', t);
  // One page of MAX_LISTED, as a client paging the list would read it: the watch's change
  // notices make the browser read it again, so a namespace of 50,000 objects must not cost a
  // full list each time.
  const r = await t.store.list(t.namespace, { ...ALL_OBJECTS, limit: MAX_LISTED });
  const items = r.items.map((i) => {
    const m = i.obj.metadata;
    return {
      namespace: (m.namespace as string | undefined) ?? '',
      name: m.name as string,
      created: (m.creationTimestamp as string | undefined) ?? '',
      resourceVersion: String(i.rv),
    };
  });
  return { revision: r.revision, total: r.items.length + (r.remainingItemCount ?? 0), items };
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
 * Server-sent events, one `data:` line per change ({type, namespace, name, resourceVersion}),
 * a comment every 30 s so proxies keep the stream, until the browser goes away.
 */
export async function watchObjects(
  api: ApiRegistry,
  authz: Authorizer,
  user: UserInfo,
  q: URLSearchParams,
  signal: AbortSignal,
  open: Set<{ end(reason: 'closed'): void }>,
) {
  const t = target(api, q);
  authorize(authz, user, 'watch', t);
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
  const KEEPALIVE_MS = 30_000;
  let keepaliveAt = Date.now() + KEEPALIVE_MS;
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
      controller.enqueue(enc.encode(': watching\n\n'));
      stream.onSignal = () => {
        if (stream.ended) return close();
        const events = stream.take();
        let out = '';
        for (const e of events) {
          const m = e.obj.metadata;
          out += `data: ${JSON.stringify({ type: e.type, namespace: m.namespace ?? '', name: m.name, resourceVersion: String(e.event.rv) })}\n\n`;
        }
        if (Date.now() >= keepaliveAt) {
          out += ': keepalive\n\n';
          keepaliveAt = Date.now() + KEEPALIVE_MS;
        }
        if (out) controller.enqueue(enc.encode(out));
        stream.wakeAt(keepaliveAt);
      };
      stream.wakeAt(keepaliveAt);
    },
    cancel() {
      open.delete(stream);
      stream.end('closed');
    },
  });
}
