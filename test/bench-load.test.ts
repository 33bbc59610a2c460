/**
 * The benches' load generators (bench/harness.ts): both write the objects a spec names. A
 * urlTemplate's {{i}} is the request's counter, or with urlModulo the counter modulo it, while
 * the body's stays the counter (bench/pod-patch.ts patches 5,000 pods again and again, each time
 * with a value never sent before). wrk runs a generated Lua script; bench/load.ts (the fallback,
 * and the client of fixed-rate phases) does it in TypeScript: each is checked against a server
 * that records what it was sent.
 */
import { afterAll, expect, test } from 'bun:test';
import { load, loadWrk } from '../bench/harness';
import { needs } from './helpers/needs';

const seen: { path: string; n: number }[] = [];
const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(req) {
    const { n } = (await req.json()) as { n: number };
    seen.push({ path: new URL(req.url).pathname, n });
    return new Response('{}', { headers: { 'content-type': 'application/json' } });
  },
});
afterAll(() => server.stop(true));

const spec = (extra: Record<string, unknown>) => ({
  urlTemplate: `http://127.0.0.1:${server.port}/objects/x-{{i}}`,
  urlModulo: 3,
  method: 'PATCH',
  headers: { 'content-type': 'application/json' },
  bodyTemplate: '{"n":{{i}}}',
  concurrency: 2,
  ...extra,
});

/** Every request went to x-(n mod 3) with a counter n sent once, and all three objects were written. */
function expectModulo(from: number): void {
  const sent = seen.slice(from);
  expect(sent.length).toBeGreaterThan(6);
  for (const s of sent) expect(s.path).toBe(`/objects/x-${s.n % 3}`);
  expect(new Set(sent.map((s) => s.n)).size).toBe(sent.length);
  expect(new Set(sent.map((s) => s.path))).toEqual(new Set(['/objects/x-0', '/objects/x-1', '/objects/x-2']));
}

test('bench/load.ts: the URL counts modulo urlModulo, the body does not', async () => {
  const from = seen.length;
  // A fixed rate makes load() use bench/load.ts whether wrk is installed or not.
  const r = await load(spec({ durationMs: 600, rate: 100 }));
  expect(r.errors).toBe(0);
  expect(r.ok).toBe(seen.length - from);
  expectModulo(from);
});

needs('wrk').test('wrk: the URL counts modulo urlModulo, the body does not', async () => {
  const from = seen.length;
  const r = await loadWrk(spec({ durationMs: 1000 }));
  expect(r.errors).toBe(0);
  expectModulo(from);
});

test('without urlModulo the URL counts on with the body', async () => {
  const from = seen.length;
  await load(spec({ urlModulo: undefined, durationMs: 400, rate: 50 }));
  const sent = seen.slice(from);
  expect(sent.length).toBeGreaterThan(3);
  for (const s of sent) expect(s.path).toBe(`/objects/x-${s.n}`);
});
