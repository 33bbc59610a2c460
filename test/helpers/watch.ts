/**
 * Read a watch response (newline-delimited JSON events) with bounded waits:
 *
 *   const w = await openWatch(srv, '/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=5');
 *   const evs = await w.take(3, 5000);          // exactly 3 events or throw after 5 s
 *   const rest = await w.until((e) => e.type === 'BOOKMARK', 5000);
 *   await w.close();
 */
import type { Server } from './server';

export interface WatchEvent {
  type: string;
  // biome-ignore lint/suspicious/noExplicitAny: decoded JSON
  object: any;
}

export interface WatchReader {
  status: number;
  headers: Headers;
  /** Every event received so far (also the ones already taken). */
  all: WatchEvent[];
  /** Resolves when the server ended the stream (or it broke); never rejects. */
  ended: Promise<void>;
  isEnded(): boolean;
  /** The next event, or undefined when the stream ended / the wait ran out. */
  next(timeoutMs: number): Promise<WatchEvent | undefined>;
  /** Exactly n events (throws with what arrived if fewer come in time). */
  take(n: number, timeoutMs: number): Promise<WatchEvent[]>;
  /** Events up to and including the first one matching `pred` (throws on timeout / end). */
  until(pred: (e: WatchEvent) => boolean, timeoutMs: number): Promise<WatchEvent[]>;
  /** Whatever arrives within `ms` (stops early at stream end). */
  drain(ms: number): Promise<WatchEvent[]>;
  close(): Promise<void>;
}

/** The events of a watch body, one per newline-delimited JSON line, until the stream ends. */
export async function* watchLines(body: ReadableStream<Uint8Array>): AsyncGenerator<WatchEvent> {
  const reader = body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line) yield JSON.parse(line) as WatchEvent;
    }
  }
  if (buf.trim()) yield JSON.parse(buf) as WatchEvent;
}

export async function openWatch(srv: Pick<Server, 'fetch'>, path: string, init: RequestInit = {}): Promise<WatchReader> {
  const ac = new AbortController();
  const res = await srv.fetch(path, { ...init, signal: ac.signal });
  return readWatch(res, () => ac.abort());
}

export function readWatch(res: Response, abort: () => void = () => {}): WatchReader {
  const queue: WatchEvent[] = [];
  const all: WatchEvent[] = [];
  let waiter: (() => void) | undefined;
  let done = false;
  const wake = () => {
    const w = waiter;
    waiter = undefined;
    w?.();
  };
  const reader = res.body?.getReader();
  const ended = (async () => {
    if (!reader) return;
    const dec = new TextDecoder();
    let buf = '';
    try {
      for (;;) {
        const r = await reader.read();
        if (r.done) break;
        buf += dec.decode(r.value, { stream: true });
        for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
          const line = buf.slice(0, i).trim();
          buf = buf.slice(i + 1);
          if (!line) continue;
          const e = JSON.parse(line) as WatchEvent;
          queue.push(e);
          all.push(e);
        }
        wake();
      }
      if (buf.trim()) {
        const e = JSON.parse(buf) as WatchEvent;
        queue.push(e);
        all.push(e);
      }
    } catch {
      // aborted or broken
    } finally {
      done = true;
      wake();
    }
  })();
  const wait = (deadline: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, Math.max(0, deadline - Date.now()));
      waiter = () => {
        clearTimeout(t);
        resolve();
      };
    });
  const w: WatchReader = {
    status: res.status,
    headers: res.headers,
    all,
    ended,
    isEnded: () => done,
    async next(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (queue.length === 0 && !done && Date.now() < deadline) await wait(deadline);
      return queue.shift();
    },
    async take(n, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      const out: WatchEvent[] = [];
      while (out.length < n) {
        const e = await w.next(deadline - Date.now());
        if (!e) throw new Error(`watch: wanted ${n} events, got ${out.length}${done ? ' (stream ended)' : ''}: ${summary(out)}`);
        out.push(e);
      }
      return out;
    },
    async until(pred, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      const out: WatchEvent[] = [];
      for (;;) {
        const e = await w.next(deadline - Date.now());
        if (!e) throw new Error(`watch: no matching event${done ? ' (stream ended)' : ''}; got ${summary(out)}`);
        out.push(e);
        if (pred(e)) return out;
      }
    },
    async drain(ms) {
      const deadline = Date.now() + ms;
      const out: WatchEvent[] = [];
      for (;;) {
        const e = await w.next(deadline - Date.now());
        if (!e) return out;
        out.push(e);
      }
    },
    async close() {
      abort();
      try {
        await reader?.cancel();
      } catch {
        // already gone
      }
      await ended;
    },
  };
  return w;
}

/** "ADDED a@12, MODIFIED a@13" — for assertion messages and sequence comparisons. */
export function summary(evs: WatchEvent[]): string {
  return evs.map(sig).join(', ');
}

export function sig(e: WatchEvent): string {
  return `${e.type} ${e.object?.metadata?.name ?? ''}@${e.object?.metadata?.resourceVersion ?? ''}`;
}
