/**
 * A small HTTP load generator run as its own process (so it does not share the server's event
 * loop): `bun bench/load.ts <json spec>`; prints one JSON line of results.
 *
 * spec: { url, method, headers, body?, bodyTemplate? ("{{i}}" replaced by a counter),
 *         concurrency, durationMs, ca, retryAfter? (wait out a 429's Retry-After, as client-go),
 *         discard? (read bodies as a stream and drop them, not decompressed: long lists),
 *         rate? (requests/s on a fixed schedule: request i is due at start + i/rate, its latency
 *         counted from when it was due, so a stall is not hidden by the client waiting) }
 */
interface Spec {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  bodyTemplate?: string;
  urlTemplate?: string;
  /** The URL's {{i}} is the counter modulo this (the body's stays the counter): the same objects written again and again. */
  urlModulo?: number;
  concurrency: number;
  durationMs: number;
  ca?: string;
  start?: number;
  retryAfter?: boolean;
  discard?: boolean;
  rate?: number;
}

const spec = JSON.parse(process.argv[2] as string) as Spec;
let counter = spec.start ?? 0;
let ok = 0;
let errors = 0;
const codes: Record<string, number> = {};
const latencies: number[] = [];
const deadline = performance.now() + spec.durationMs;

const first = counter;
const scheduleStart = performance.now();

async function worker(): Promise<void> {
  while (performance.now() < deadline) {
    const i = counter++;
    let t = performance.now();
    if (spec.rate) {
      const due = scheduleStart + ((i - first) * 1000) / spec.rate;
      if (due >= deadline) break;
      if (due > t) await Bun.sleep(due - t);
      // From when it was due; from when it was sent if the timer woke early.
      t = Math.min(due, performance.now());
    }
    const body = spec.bodyTemplate ? spec.bodyTemplate.replaceAll('{{i}}', String(i)) : spec.body;
    const url = spec.urlTemplate ? spec.urlTemplate.replaceAll('{{i}}', String(spec.urlModulo ? i % spec.urlModulo : i)) : spec.url;
    try {
      const r = await fetch(url, {
        method: spec.method,
        headers: spec.headers,
        body,
        tls: spec.ca ? { ca: spec.ca } : { rejectUnauthorized: false },
        decompress: !spec.discard,
      } as RequestInit);
      if (spec.discard && r.body) {
        const reader = r.body.getReader();
        while (!(await reader.read()).done) {}
      } else await r.arrayBuffer();
      codes[r.status] = (codes[r.status] ?? 0) + 1;
      if (r.status < 300) ok++;
      else errors++;
      if (r.status === 429 && spec.retryAfter) {
        latencies.push(performance.now() - t);
        await Bun.sleep(Math.min(Number(r.headers.get('retry-after') ?? 1) * 1000, deadline - performance.now()));
        continue;
      }
    } catch {
      errors++;
    }
    latencies.push(performance.now() - t);
  }
}

const started = performance.now();
await Promise.all(Array.from({ length: spec.concurrency }, worker));
const elapsed = performance.now() - started;
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
console.log(
  JSON.stringify({
    ops: Math.round((ok / elapsed) * 1000),
    ok,
    errors,
    codes,
    p50: +pct(0.5).toFixed(2),
    p99: +pct(0.99).toFixed(2),
    next: counter,
  }),
);

export {};
