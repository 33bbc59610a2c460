/**
 * Watch clients for bench/watch.ts, run as their own process: opens `count` watches on one
 * resource and records, per event, the receipt time by resourceVersion. `stalled` watches are
 * opened and never read. On SIGTERM (or after `durationMs`) prints one JSON line:
 * { received, perRv: { rv: [firstMs, lastMs, count] }, duplicates, gaps }.
 */
interface Spec {
  url: string;
  token: string;
  ca: string;
  count: number;
  stalled: number;
  durationMs: number;
  /** Watchers that parse events and record receipt times; the others only count lines (cheap). */
  sample?: number;
}

const spec = JSON.parse(process.argv[2] as string) as Spec;
const clock = () => performance.timeOrigin + performance.now();
const perRv = new Map<number, [number, number, number]>();
let received = 0;
let duplicates = 0;
let opened = 0;
const RV = /"resourceVersion":"(\d+)"/;

let lines = 0;

/** A watcher that only counts event lines (native byte search), so the client stays cheap. */
async function counter(): Promise<void> {
  const res = await fetch(spec.url, { headers: { authorization: `Bearer ${spec.token}` }, tls: { ca: spec.ca } } as RequestInit);
  opened++;
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const b = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, i + 1)) lines++;
  }
}

async function watcher(read: boolean): Promise<void> {
  const res = await fetch(spec.url, { headers: { authorization: `Bearer ${spec.token}` }, tls: { ca: spec.ca } } as RequestInit);
  opened++;
  if (!read) {
    // Hold the response without reading: the server must cut this watcher off, not buffer forever.
    await new Promise(() => {});
    return;
  }
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const dec = new TextDecoder();
  let buf = '';
  let last = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += dec.decode(value, { stream: true });
    let nl = buf.indexOf('\n');
    while (nl >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      nl = buf.indexOf('\n');
      if (!line.startsWith('{"type":"MODIFIED"') && !line.startsWith('{"type":"ADDED"')) continue;
      const m = RV.exec(line);
      if (!m) continue;
      const rv = Number(m[1]);
      if (rv <= last) duplicates++;
      last = rv;
      received++;
      const t = clock();
      const e = perRv.get(rv);
      if (e) {
        e[1] = t;
        e[2]++;
      } else perRv.set(rv, [t, t, 1]);
    }
  }
}

const sample = spec.sample ?? spec.count;
const all = [
  ...Array.from({ length: spec.count }, (_, i) => (i % Math.max(1, Math.floor(spec.count / sample)) === 0 ? watcher(true) : counter())),
  ...Array.from({ length: spec.stalled }, () => watcher(false)),
];
void Promise.allSettled(all);
const started = clock();
const ready = setInterval(() => {
  if (opened >= spec.count + spec.stalled) {
    console.log(JSON.stringify({ ready: true, ms: Math.round(clock() - started) }));
    clearInterval(ready);
  }
}, 50);

const finish = () => {
  console.log(JSON.stringify({ received, duplicates, lines, perRv: Object.fromEntries(perRv) }));
  process.exit(0);
};
process.on('SIGTERM', finish);
setTimeout(finish, spec.durationMs);

export {};
