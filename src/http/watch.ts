/**
 * Watch responses: a chunked stream of `{"type": ..., "object": ...}` events, built on the
 * store's change feed. resourceVersion unset or "0": synthetic ADDED events for the current state,
 * then changes; N: changes after N; N older than the retained history: an ERROR event with a 410
 * Status. Selectors are applied to both the old and new object so that objects moving in or out
 * of the selection appear as ADDED / DELETED, as the reference does.
 *
 * (The watch cache of src/watch/ replaces the per-watcher store stream for fan-out at scale.)
 */

import type { Obj } from '../api/meta';
import type { ResourceRequest } from '../api/request-info';
import { matchesFields, matchesLabels } from '../api/selectors';
import { resourceExpired, StatusError } from '../api/status';
import { decodeStored, storedText } from '../registry/encoding';
import { parseResourceVersion, type ResourceStore } from '../registry/generic';
import type { ChangeEvent, ChangeStream, KV } from '../store/types';
import { isStoreError, prefixEnd } from '../store/types';
import type { Output } from './negotiate';
import { listOptions } from './resources';
import { toTable } from './table';

export interface WatchOptions {
  /** --min-request-timeout (seconds): watches without timeoutSeconds end after a random time in [t, 2t]. */
  minRequestTimeout: number;
  clock?: () => number;
}

type EventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export class WatchServer {
  readonly active = new Set<ChangeStream>();

  constructor(
    private readonly kv: KV,
    private readonly opts: WatchOptions,
  ) {}

  serve(store: ResourceStore, info: ResourceRequest, req: Request, q: URLSearchParams, out: Output): Response {
    const lo = listOptions(q, store);
    const name = info.name;
    const match = (o: Obj): boolean =>
      (name === '' || o.metadata.name === name) &&
      matchesLabels(lo.labelSelector, o.metadata.labels) &&
      matchesFields(lo.fieldSelector, (f) => store.fieldValue(o, f));
    const rvParam = q.get('resourceVersion') ?? '';
    const timeoutParam = q.get('timeoutSeconds');
    const timeoutSec = timeoutParam ? Number(timeoutParam) : this.opts.minRequestTimeout * (1 + Math.random());
    const start = store.def.namespaced && info.namespace ? `${store.prefix}${info.namespace}/` : store.prefix;
    const encode = (type: EventType, obj: Obj | string): string => {
      if (out.kind === 'table' && typeof obj !== 'string' && type !== 'ERROR') {
        return `{"type":"${type}","object":${JSON.stringify(toTable(store.def, [obj], { resourceVersion: obj.metadata.resourceVersion }, out.group, Date.now()))}}\n`;
      }
      return `{"type":"${type}","object":${typeof obj === 'string' ? obj : JSON.stringify(obj)}}\n`;
    };
    const kv = this.kv;
    const active = this.active;
    const abort = new Promise<'aborted'>((resolve) => {
      if (req.signal.aborted) resolve('aborted');
      req.signal.addEventListener('abort', () => resolve('aborted'), { once: true });
    });
    const body = new ReadableStream({
      type: 'direct',
      async pull(controller) {
        const deadline = Date.now() + timeoutSec * 1000;
        let stream: ChangeStream | undefined;
        try {
          let from: number;
          if (rvParam === '' || rvParam === '0') {
            const r = await store.list(info.namespace, {
              ...lo,
              limit: 0,
              continueToken: '',
              resourceVersion: '',
              resourceVersionMatch: '',
            });
            for (const item of r.items) {
              const o = decodeStored(item);
              if (match(o)) controller.write(encode('ADDED', out.kind === 'json' ? storedText(item) : o));
            }
            from = r.revision + 1;
          } else {
            from = parseResourceVersion(rvParam) + 1;
            if (from - 1 < kv.compactedRevision()) {
              const e = resourceExpired(`too old resource version: ${from - 1} (${kv.compactedRevision()})`);
              controller.write(encode('ERROR', JSON.stringify(e.body())));
              return;
            }
          }
          await controller.flush();
          stream = kv.watch(from, { key: start, end: prefixEnd(start) });
          active.add(stream);
          for (;;) {
            const left = deadline - Date.now();
            if (left <= 0) break;
            const next = await Promise.race([stream.next(), abort, Bun.sleep(left).then(() => 'timeout' as const)]);
            if (next === 'aborted' || next === 'timeout') break;
            let wrote = false;
            for (const e of next) {
              const line = eventLine(e, match, encode);
              if (line) {
                controller.write(line);
                wrote = true;
              }
            }
            if (wrote) await controller.flush();
          }
        } catch (e) {
          if (isStoreError(e, 'compacted')) {
            controller.write(encode('ERROR', JSON.stringify(resourceExpired(`too old resource version: ${e.message}`).body())));
          } else if (e instanceof StatusError) {
            controller.write(encode('ERROR', JSON.stringify(e.body())));
          } else if (!req.signal.aborted) {
            console.error(`watch: ${String(e)}`);
          }
        } finally {
          if (stream) {
            stream.close();
            active.delete(stream);
          }
          try {
            controller.close();
          } catch {
            // already closed by the client
          }
        }
      },
    });
    return new Response(body, { status: 200, headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' } });
  }
}

function eventLine(e: ChangeEvent, match: (o: Obj) => boolean, encode: (t: EventType, o: Obj) => string): string | undefined {
  if (e.type === 'delete') {
    if (!e.prev) return undefined;
    const old = decodeStored(e.prev);
    if (!match(old)) return undefined;
    old.metadata.resourceVersion = String(e.kv.modRevision);
    return encode('DELETED', old);
  }
  const obj = decodeStored(e.kv);
  const now = match(obj);
  const before = e.prev ? match(decodeStored(e.prev)) : false;
  if (now && before) return encode('MODIFIED', obj);
  if (now) return encode('ADDED', obj);
  if (before) return encode('DELETED', obj);
  return undefined;
}
