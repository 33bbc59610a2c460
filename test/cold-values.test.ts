/**
 * Cold objects held packed (--pack-cold-values-after, src/watch/cold.ts): once the server has
 * packed them (its debug heap line counts them), every way a client reads them answers what it
 * answered before (GET, lists with and without selectors, kubectl, a watch's initial events), a
 * patch and a delete of a packed object work and are watched with the right objects, and a
 * restart on the same data dir serves the same state.
 */
import { afterAll, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type Server, startServer } from './helpers/server';
import { until } from './helpers/until';
import { openWatch } from './helpers/watch';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cold-'));
const args = ['--pack-cold-values-after=300ms'];
// Lists of 10 or more stream in chunks of ~8 KB (as long lists do; JSON too, however short), through
// the codec pool where it pays (gzip, Table).
const env = { SVC_DEBUG_HEAP_SIGNAL: '1', SVC_LIST_STREAM_MIN_ITEMS: '10', SVC_LIST_CHUNK_BYTES: '8192', SVC_LIST_WHOLE_JSON_BYTES: '0' };
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

/** The list's items, as JSON (gzip: through the codec pool) or as Table rows (name and data count). */
async function views(s: Server): Promise<unknown[]> {
  const gz = await s.fetch('/api/v1/namespaces/cold/configmaps', { headers: { 'accept-encoding': 'gzip' } });
  expect(gz.headers.get('content-encoding')).toBe('gzip');
  const table = await s.json('GET', '/api/v1/namespaces/cold/configmaps', undefined, { accept: TABLE });
  const pb = await s.fetch('/api/v1/namespaces/cold/configmaps', { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
  const pbText = new TextDecoder('latin1').decode(await pb.arrayBuffer());
  const names = ((await gz.json()) as { items: { metadata: { name: string } }[] }).items;
  return [
    names,
    (table.body.rows as { cells: unknown[] }[]).map((r) => r.cells.slice(0, 2)),
    names.map((o) => pbText.includes(o.metadata.name) && pbText.includes('registry.example/app:')),
  ];
}
let srv: Server | undefined;

afterAll(async () => {
  if (srv && srv.proc.exitCode === null) srv.proc.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/**
 * How many values the server has packed so far and how many packed ones clients' reads made hot
 * again (its debug heap line, on SIGUSR2).
 */
async function packStats(s: Server): Promise<{ packed: number; reheated: number }> {
  const before = s.logs().split('\n').length;
  s.proc.kill('SIGUSR2');
  const line = await until(
    async () =>
      s
        .logs()
        .split('\n')
        .slice(before - 1)
        .find((l) => /values packed so far \d+/.test(l)),
    (l) => l !== undefined,
    10_000,
  );
  const m = /values packed so far (\d+) .*made hot again by reads (\d+)/.exec(line ?? '');
  if (!m) throw new Error(`no packed count in the log: ${s.logs().slice(-2000)}`);
  return { packed: Number(m[1]), reheated: Number(m[2]) };
}

const packedCount = async (s: Server) => (await packStats(s)).packed;

const N = 40;
const cm = (i: number) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: `cold-${i}`, namespace: 'cold', labels: { app: 'cold', parity: i % 2 === 0 ? 'even' : 'odd' } },
  data: {
    index: String(i),
    text: `line ${i}\n`.repeat(250),
    settings: JSON.stringify({ replicas: i, image: `registry.example/app:${i}` }),
  },
});

test('packed objects: reads, kubectl, watches, patch and delete, a restart', async () => {
  srv = await startServer({ dataDir, args, env });
  const s = srv;
  expect((await s.json('POST', '/api/v1/namespaces', { metadata: { name: 'cold' } })).status).toBe(201);
  for (let i = 0; i < N; i++) expect((await s.json('POST', '/api/v1/namespaces/cold/configmaps', cm(i))).status).toBe(201);
  const list = await s.json('GET', '/api/v1/namespaces/cold/configmaps');
  const gets = await Promise.all(Array.from({ length: N }, (_, i) => s.json('GET', `/api/v1/namespaces/cold/configmaps/cold-${i}`)));
  const odd = await s.json('GET', '/api/v1/namespaces/cold/configmaps?labelSelector=parity%3Dodd');
  const byName = await s.json('GET', '/api/v1/namespaces/cold/configmaps?fieldSelector=metadata.name%3Dcold-7');
  const viewsBefore = await views(s);
  const kubectlBefore = s.kubectl(['get', 'configmaps', '-n', 'cold', '-o', 'json']);
  expect(kubectlBefore.code).toBe(0);

  // Cold: packed by the cache and the store (at least the ConfigMaps).
  expect(
    await until(
      () => packedCount(s),
      (n) => n >= N,
      15_000,
    ),
  ).toBeGreaterThanOrEqual(N);

  // Lists through the codec pool, as Table and protobuf, and kubectl's first (none of them make
  // objects hot again; plain JSON lists read twice do, below).
  expect(await views(s)).toEqual(viewsBefore);
  const kubectlAfter = s.kubectl(['get', 'configmaps', '-n', 'cold', '-o', 'json']);
  expect(JSON.parse(kubectlAfter.stdout).items).toEqual(JSON.parse(kubectlBefore.stdout).items);
  expect((await s.json('GET', '/api/v1/namespaces/cold/configmaps')).body.items).toEqual(list.body.items);
  // A list from the store at the list's own revision (not from the cache).
  const exact = await s.json(
    'GET',
    `/api/v1/namespaces/cold/configmaps?resourceVersion=${list.body.metadata.resourceVersion}&resourceVersionMatch=Exact`,
  );
  expect(exact.body.items).toEqual(list.body.items);
  for (let i = 0; i < N; i++) expect((await s.json('GET', `/api/v1/namespaces/cold/configmaps/cold-${i}`)).body).toEqual(gets[i]?.body);
  expect((await s.json('GET', '/api/v1/namespaces/cold/configmaps?labelSelector=parity%3Dodd')).body.items).toEqual(odd.body.items);
  expect((await s.json('GET', '/api/v1/namespaces/cold/configmaps?fieldSelector=metadata.name%3Dcold-7')).body.items).toEqual(
    byName.body.items,
  );
  expect(s.kubectl(['get', 'configmap', 'cold-3', '-n', 'cold', '-o', 'jsonpath={.data.index}']).stdout).toBe('3');

  // A watch from resourceVersion 0: the packed objects as initial events.
  const w = await openWatch(s, '/api/v1/namespaces/cold/configmaps?watch=1&resourceVersion=0');
  const initial = await w.take(N, 10_000);
  expect(initial.every((e) => e.type === 'ADDED')).toBe(true);
  const byNameOf = (items: { metadata: { name: string } }[]) => Object.fromEntries(items.map((o) => [o.metadata.name, o]));
  expect(byNameOf(initial.map((e) => e.object))).toEqual(byNameOf(list.body.items));

  // A patch of a packed object merges into its packed version; a delete of another.
  const patched = await s.json(
    'PATCH',
    '/api/v1/namespaces/cold/configmaps/cold-5',
    { data: { extra: 'yes' } },
    { 'content-type': 'application/merge-patch+json' },
  );
  expect(patched.status).toBe(200);
  expect(patched.body.data).toEqual({ ...cm(5).data, extra: 'yes' });
  const deleted = await s.json('DELETE', '/api/v1/namespaces/cold/configmaps/cold-6');
  expect(deleted.status).toBe(200);
  const changes = await w.take(2, 10_000);
  expect(changes.map((e) => e.type)).toEqual(['MODIFIED', 'DELETED']);
  expect(changes[0]?.object.data.extra).toBe('yes');
  expect(changes[1]?.object.data).toEqual(cm(6).data);
  await w.close();
  const want = (await s.json('GET', '/api/v1/namespaces/cold/configmaps')).body.items;
  expect(want).toHaveLength(N - 1);

  // Restart on the same data dir: the same objects, packed again once cold (the count starts over).
  expect(await s.stop()).toBe(0);
  srv = await startServer({ dataDir, args, env });
  const r = srv;
  expect((await r.json('GET', '/api/v1/namespaces/cold/configmaps')).body.items).toEqual(want);
  expect(
    await until(
      () => packedCount(r),
      (n) => n >= N - 1,
      15_000,
    ),
  ).toBeGreaterThanOrEqual(N - 1);
  expect((await r.json('GET', '/api/v1/namespaces/cold/configmaps')).body.items).toEqual(want);
  expect((await r.json('GET', '/api/v1/namespaces/cold/configmaps/cold-5')).body.data.extra).toBe('yes');
  expect(await r.stop()).toBe(0);
}, 90_000);

test('packed objects clients list again and again are held raw again, then packed again as they were', async () => {
  // A window long enough for the reads below to fall in it on a slow machine.
  const s = await startServer({ args: ['--pack-cold-values-after=2s'], env: { SVC_DEBUG_HEAP_SIGNAL: '1' } });
  try {
    const M = 20;
    expect((await s.json('POST', '/api/v1/namespaces', { metadata: { name: 'cold' } })).status).toBe(201);
    // The server's own objects packed first, so that the count below is the ConfigMaps'.
    await Bun.sleep(2_500);
    const before = await packStats(s);
    for (let i = 0; i < M; i++) expect((await s.json('POST', '/api/v1/namespaces/cold/configmaps', cm(i))).status).toBe(201);
    const want = (await s.json('GET', '/api/v1/namespaces/cold/configmaps')).body.items;
    const packed = await until(
      () => packStats(s),
      (p) => p.packed >= before.packed + M,
      20_000,
    );
    // From the watch cache on either backend (resourceVersion=0: on etcd the newest lists are the
    // store's), with a selector: a whole list of an unchanged collection is answered from the list
    // memo (src/http/list-memo.ts) without reading its items at all.
    const list = async () =>
      (await s.json('GET', '/api/v1/namespaces/cold/configmaps?labelSelector=app%3Dcold&resourceVersion=0')).body.items;
    // The cache's metrics say as much: M ConfigMaps (and maybe the server's own) held packed.
    const coldNow = async () => {
      const m = /^svc_watch_cache_packed_objects\{resource_prefix="\/configmaps"\} (\d+)$/m.exec(await (await s.fetch('/metrics')).text());
      return Number(m?.[1] ?? -1);
    };
    const packedBefore = await coldNow();
    expect(packedBefore).toBeGreaterThanOrEqual(M);
    // One list reads them packed; the second, within the window, makes all of them hot again.
    expect(await list()).toEqual(want);
    expect((await packStats(s)).reheated).toBe(packed.reheated);
    expect(await coldNow()).toBe(packedBefore);
    expect(await list()).toEqual(want);
    expect(await list()).toEqual(want);
    const hot = await packStats(s);
    expect(hot.reheated - packed.reheated).toBe(M);
    expect(await coldNow()).toBe(packedBefore - M);
    // Unread for the window: packed again as they were (nothing deflated anew), so two more lists
    // make them hot again.
    await Bun.sleep(2_500);
    const again = await until(
      async () => {
        expect(await list()).toEqual(want);
        expect(await list()).toEqual(want);
        return packStats(s);
      },
      (p) => p.reheated - hot.reheated >= M,
      20_000,
    );
    expect(again.reheated - hot.reheated).toBe(M);
    expect(again.packed).toBe(hot.packed);
  } finally {
    await s.stop();
  }
}, 90_000);
