/**
 * A @kubernetes/client-node informer (ListWatch, unmodified) on the configmaps of one namespace,
 * against the real server: it sees every add, update and delete the test makes, exactly once
 * each, and it recovers after the server restarts on the same data dir and port.
 *
 * The informer runs in a child Bun process started with NODE_EXTRA_CA_CERTS=<data dir>/ca.crt:
 * client-node 2.x sends its requests with `fetch` from `undici`, passing the kubeconfig's CA in
 * an undici Agent as `dispatcher`; Bun replaces the `undici` module with a built-in stub whose
 * fetch ignores `dispatcher`, so in-process the TLS handshake fails with "unable to verify the
 * first certificate". Bun reads NODE_EXTRA_CA_CERTS at process start. Apart from that the client
 * works under Bun unchanged.
 *
 * client-node's ListWatch stops on a watch error other than 410 or a timeout (here: connection
 * refused while the server is down) and only reports it; restarting it from the error handler is
 * the documented pattern, and the child does that.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type Server, startServer } from './helpers/server';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;

const ROOT = path.resolve(import.meta.dir, '..');
const NS = 'inf';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-informer-'));

let srv: Server;
let port = 0;
let child: ReturnType<typeof Bun.spawn> | undefined;

interface Ev {
  ev: string;
  name?: string;
  rv?: string;
  data?: Record<string, string>;
  msg?: string;
  items?: { name: string; rv: string }[];
}
const events: Ev[] = [];
let stderr = '';

/** JSON request against the current server process on the fixed port. */
async function api(method: string, p: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const r = await fetch(`https://127.0.0.1:${port}${p}`, {
    method,
    headers: { authorization: `Bearer ${srv.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    tls: { ca: srv.ca },
  } as RequestInit);
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

async function ok(method: string, p: string, body?: unknown): Promise<Json> {
  const r = await api(method, p, body);
  if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const INFORMER = (lib: string, kubeconfig: string) => `
import * as k8s from ${JSON.stringify(lib)};
const kc = new k8s.KubeConfig();
kc.loadFromFile(${JSON.stringify(kubeconfig)});
const core = kc.makeApiClient(k8s.CoreV1Api);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
const informer = k8s.makeInformer(kc, ${JSON.stringify(CMS)}, () => core.listNamespacedConfigMap({ namespace: ${JSON.stringify(NS)} }));
const ev = (name) => (o) => out({ ev: name, name: o.metadata.name, rv: o.metadata.resourceVersion, data: o.data });
informer.on('add', ev('add'));
informer.on('update', ev('update'));
informer.on('delete', ev('delete'));
informer.on('connect', () => out({ ev: 'connect' }));
informer.on('error', (e) => {
  out({ ev: 'error', msg: String(e?.message ?? e) });
  setTimeout(() => informer.start().catch((e2) => out({ ev: 'error', msg: 'restart: ' + String(e2) })), 300);
});
for await (const line of console) {
  if (line.trim() === 'dump') out({ ev: 'dump', items: informer.list(${JSON.stringify(NS)}).map((o) => ({ name: o.metadata.name, rv: o.metadata.resourceVersion })).sort((a, b) => a.name < b.name ? -1 : 1) });
  if (line.trim() === 'start') { await informer.start(); out({ ev: 'started' }); }
}
`;

beforeAll(async () => {
  srv = await startServer({ dataDir });
  port = srv.port;
  expect((await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status).toBe(201);
  const script = path.join(dataDir, 'informer.ts');
  fs.writeFileSync(script, INFORMER(Bun.resolveSync('@kubernetes/client-node', ROOT), srv.kubeconfig));
  child = Bun.spawn([process.execPath, script], {
    cwd: ROOT,
    env: { ...process.env, NODE_EXTRA_CA_CERTS: path.join(dataDir, 'ca.crt') },
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  void (async () => {
    const dec = new TextDecoder();
    let buf = '';
    for await (const chunk of child.stdout as ReadableStream<Uint8Array>) {
      buf += dec.decode(chunk, { stream: true });
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (line.trim()) events.push(JSON.parse(line) as Ev);
      }
    }
  })();
  void (async () => {
    for await (const chunk of child.stderr as ReadableStream<Uint8Array>) stderr += new TextDecoder().decode(chunk);
  })();
}, 30_000);

afterAll(async () => {
  if (child) {
    child.kill();
    await child.exited;
  }
  if (srv && srv.proc.exitCode === null) await srv.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

function send(cmd: string): void {
  const stdin = child?.stdin as import('bun').FileSink;
  stdin.write(`${cmd}\n`);
  stdin.flush();
}

/** Wait until `n` events of the informer (after index `from`) satisfy `pred`, bounded. */
async function waitEvents(what: string, pred: (evs: Ev[]) => boolean, ms = 20_000): Promise<Ev[]> {
  const deadline = Date.now() + ms;
  while (!pred(events)) {
    if (Date.now() > deadline || child?.exitCode != null) {
      throw new Error(`informer: timed out waiting for ${what}; events: ${JSON.stringify(events)}\nstderr: ${stderr}`);
    }
    await Bun.sleep(50);
  }
  return events;
}

const changes = (evs: Ev[]) => evs.filter((e) => e.ev === 'add' || e.ev === 'update' || e.ev === 'delete');
const sig = (e: Ev) => `${e.ev} ${e.name}@${e.rv}`;

async function dump(): Promise<{ name: string; rv: string }[]> {
  const n = events.filter((e) => e.ev === 'dump').length;
  send('dump');
  const evs = await waitEvents('a dump', (all) => all.filter((e) => e.ev === 'dump').length > n, 5000);
  return evs.filter((e) => e.ev === 'dump')[n]?.items ?? [];
}

async function serverState(): Promise<{ name: string; rv: string }[]> {
  const l = await ok('GET', CMS);
  return l.items.map((o: Json) => ({ name: o.metadata.name, rv: o.metadata.resourceVersion }));
}

/** What the test did, as the informer should report it. */
const expected: string[] = [];

test('the informer lists, then sees every add, update and delete exactly once', async () => {
  const a = await ok('POST', CMS, { metadata: { name: 'pre-a' }, data: { v: '0' } });
  const b = await ok('POST', CMS, { metadata: { name: 'pre-b' }, data: { v: '0' } });
  expected.push(`add pre-a@${a.metadata.resourceVersion}`, `add pre-b@${b.metadata.resourceVersion}`);
  send('start');
  await waitEvents('the informer to start', (evs) => evs.some((e) => e.ev === 'started'));

  const made: Json[] = [];
  for (let i = 0; i < 5; i++) {
    const c = await ok('POST', CMS, { metadata: { name: `cm-${i}` }, data: { v: '1' } });
    made.push(c);
    expected.push(`add cm-${i}@${c.metadata.resourceVersion}`);
  }
  for (const i of [0, 2, 4, 2]) {
    const u = await ok('PUT', `${CMS}/cm-${i}`, { metadata: { name: `cm-${i}` }, data: { v: `u${expected.length}` } });
    expected.push(`update cm-${i}@${u.metadata.resourceVersion}`);
  }
  for (const n of ['cm-1', 'pre-a']) {
    const before = await ok('GET', `${CMS}/${n}`);
    expect((await api('DELETE', `${CMS}/${n}`)).status).toBe(200);
    // client-node reports the object of the DELETED event: the last state at the deletion's version.
    const rv = (await ok('GET', CMS)).metadata.resourceVersion;
    expect(Number(rv)).toBeGreaterThan(Number(before.metadata.resourceVersion));
    expected.push(`delete ${n}@${rv}`);
  }
  const evs = await waitEvents('every change', (all) => changes(all).length >= expected.length);
  await Bun.sleep(300); // and nothing more
  expect(changes(evs).map(sig)).toEqual(expected);
  const counts = (t: string) => changes(events).filter((e) => e.ev === t).length;
  expect([counts('add'), counts('update'), counts('delete')]).toEqual([7, 4, 2]);
  expect(await dump()).toEqual(await serverState());
  expect(events.filter((e) => e.ev === 'error')).toEqual([]);
}, 60_000);

test('after a restart on the same data dir and port the informer catches up and follows again', async () => {
  // A write to another resource moves the store past the informer's last configmap version,
  // so its resume point is older than the restarted server's history: it relists (410).
  await ok('POST', `/api/v1/namespaces/${NS}/secrets`, { metadata: { name: 's' }, stringData: { a: 'b' } });
  const seen = changes(events).length;
  expect(await srv.stop('SIGTERM')).toBe(0);
  // Let the informer notice (its watch ends, reconnects fail).
  await waitEvents('the informer to see the server go', (all) => all.some((e) => e.ev === 'error'), 10_000);
  srv = await startServer({ dataDir, args: [`--port=${port}`] });
  // The restarted server writes the same kubeconfig (same CA, same port).
  expect(fs.readFileSync(srv.kubeconfig, 'utf8')).toContain(`https://127.0.0.1:${port}`);

  const after: string[] = [];
  const c = await ok('POST', CMS, { metadata: { name: 'after-0' }, data: { v: '1' } });
  after.push(`add after-0@${c.metadata.resourceVersion}`);
  const u = await ok('PUT', `${CMS}/cm-0`, { metadata: { name: 'cm-0' }, data: { v: 'after' } });
  after.push(`update cm-0@${u.metadata.resourceVersion}`);
  expect((await api('DELETE', `${CMS}/cm-3`)).status).toBe(200);
  const delRv = (await ok('GET', CMS)).metadata.resourceVersion;

  // Either it resumed (events) or relisted after a 410 (the same adds/updates, the delete with
  // the object's last version): the names and kinds of change are the same, once each.
  await waitEvents('the changes after the restart', (all) => changes(all).length >= seen + 3, 30_000);
  await Bun.sleep(500);
  const got = changes(events).slice(seen);
  expect(got.map((e) => `${e.ev} ${e.name}`).sort()).toEqual(['add after-0', 'delete cm-3', 'update cm-0']);
  for (const e of got) {
    if (e.ev !== 'delete') expect(after).toContain(sig(e));
    else expect(Number(e.rv)).toBeLessThanOrEqual(Number(delRv));
  }
  expect(await dump()).toEqual(await serverState());
  // And it follows live changes again.
  const live = await ok('POST', CMS, { metadata: { name: 'live' }, data: { v: '1' } });
  await waitEvents('a live add', (all) => all.some((e) => e.ev === 'add' && e.name === 'live'), 20_000);
  expect(
    changes(events)
      .slice(seen + 3)
      .map(sig),
  ).toEqual([`add live@${live.metadata.resourceVersion}`]);
  console.log(`informer after the restart: ${JSON.stringify(events.slice(events.findIndex((e) => e.ev === 'error')).map((e) => e.ev))}`);
}, 90_000);
