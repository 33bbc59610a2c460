/**
 * The dashboard (/ui, src/ui/): its login and access rules and its JSON endpoints over HTTP,
 * then the pages in headless Chromium (puppeteer-core): log in through the form, every page
 * renders data with no console error, a ConfigMap created through the API appears on the
 * objects page without a reload. Screenshots go to $SVC_TEST_ARTIFACTS/ui (default: the temp dir).
 *
 *     bun test test/ui.test.ts
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Apf, Nodes, Objects, ObjectsBatch, Overview, Requests, Watches } from '../src/ui/client/types';
import { CHROMIUM, needs } from './helpers/needs';
import { type Server, startServer } from './helpers/server';
import { until } from './helpers/until';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ui-'));
const tokenFile = path.join(dir, 'tokens.csv');
fs.writeFileSync(tokenFile, ['viewer-token,viewer,uid-viewer,"ui-viewers"', 'nobody-token,nobody,uid-nobody,"others"', ''].join('\n'));
const ARTIFACTS = path.join(process.env.SVC_TEST_ARTIFACTS ?? path.join(os.tmpdir(), 'svc-test-artifacts'), 'ui');
const NS = 'ui-test';

let srv: Server;

beforeAll(async () => {
  // Compaction every 500 ms: the overview's count of compactions moves within the test.
  srv = await startServer({ args: [`--token-auth-file=${tokenFile}`, '--simulated-nodes=2', '--etcd-compaction-interval=500ms'] });
  const ok = (r: { status: number; body: unknown }) => expect([200, 201]).toContain(r.status);
  ok(await srv.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }));
  // The bootstrap policy grants /ui to no role but cluster-admin: a role of its own for the viewers,
  // with list/get/watch of ConfigMaps only.
  ok(
    await srv.json('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'ui-viewer' },
      rules: [
        { nonResourceURLs: ['/ui', '/ui/*'], verbs: ['get'] },
        { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
      ],
    }),
  );
  ok(
    await srv.json('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'ui-viewer' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'ui-viewer' },
      subjects: [{ kind: 'Group', name: 'ui-viewers', apiGroup: 'rbac.authorization.k8s.io' }],
    }),
  );
});

afterAll(async () => {
  await srv?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const cookieOf = (token: string) => `svc_ui_token=${token}`;

/** A dashboard request as a browser with the login cookie (no Authorization header) sends it. */
function ui(p: string, token: string | undefined, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (token) headers.set('cookie', cookieOf(token));
  return srv.fetch(p, { ...init, headers, token: null, redirect: 'manual' });
}

/** A dashboard endpoint's answer (its types: src/ui/client/types.ts). */
async function uiJson<T>(p: string, token = srv.token): Promise<T> {
  const r = await ui(p, token);
  expect(r.status).toBe(200);
  return (await r.json()) as T;
}

/** The login form's POST; `origin` null: without an Origin header. */
function login(token: string, origin: string | null = srv.url): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (origin !== null) headers.origin = origin;
  return ui('/ui/api/login', undefined, { method: 'POST', headers, body: new URLSearchParams({ token }).toString() });
}

/** The objects page's change stream of a namespace's ConfigMaps, message by message. */
async function openStream(ns: string) {
  const controller = new AbortController();
  const r = await ui(`/ui/api/objects/watch?version=v1&resource=configmaps&namespace=${ns}`, srv.token, { signal: controller.signal });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toBe('text/event-stream');
  const reader = (r.body as ReadableStream<Uint8Array>).getReader();
  const dec = new TextDecoder();
  let buf = '';
  return {
    /** The next message (undefined after 3 s without one). */
    async next(): Promise<ObjectsBatch | undefined> {
      const end = Date.now() + 3000;
      for (;;) {
        const m = /^data: (.*)$/m.exec(buf);
        if (m) {
          buf = buf.slice((m.index ?? 0) + m[0].length);
          return JSON.parse(m[1] as string) as ObjectsBatch;
        }
        const left = end - Date.now();
        if (left <= 0) return undefined;
        const chunk = await Promise.race([reader.read(), Bun.sleep(left).then(() => undefined)]);
        if (!chunk || chunk.done) return undefined;
        buf += dec.decode(chunk.value);
      }
    },
    close: () => controller.abort(),
  };
}

async function createConfigMap(name: string): Promise<void> {
  const r = await srv.json('POST', `/api/v1/namespaces/${NS}/configmaps`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name },
    data: { k: 'v' },
  });
  expect(r.status).toBe(201);
}

describe('access', () => {
  test('without the cookie: the API answers 401, a page redirects to the login form', async () => {
    for (const p of [
      '/ui/api/overview',
      '/ui/api/objects?version=v1&resource=configmaps',
      '/ui/api/objects/watch?version=v1&resource=configmaps',
    ]) {
      expect((await ui(p, undefined)).status).toBe(401);
    }
    // A bearer header is not the dashboard's credential: the cookie is.
    const bearer = await srv.fetch('/ui/api/overview', { redirect: 'manual' });
    expect(bearer.status).toBe(401);
    for (const p of ['/ui/', '/ui/app.js']) {
      const r = await ui(p, undefined);
      expect(r.status).toBe(303);
      expect(r.headers.get('location')).toBe('/ui/login');
    }
    const form = await ui('/ui/login', undefined);
    expect(form.status).toBe(200);
    expect(await form.text()).toContain('name="token"');
    // An unknown token in the cookie: 401, and a page sends the browser back to the form.
    expect((await ui('/ui/api/overview', 'not-a-token')).status).toBe(401);
    expect((await ui('/ui/', 'not-a-token')).headers.get('location')).toBe('/ui/login');
  });

  test('login sets an HttpOnly, Secure, SameSite=Strict cookie scoped to /ui; logout clears it', async () => {
    const r = await login(srv.token);
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe('/ui/');
    const c = r.headers.get('set-cookie') ?? '';
    expect(c).toStartWith(`svc_ui_token=${srv.token};`);
    const attrs = c.split(';').map((x) => x.trim());
    expect(attrs).toContain('Path=/ui');
    expect(attrs).toContain('HttpOnly');
    expect(attrs).toContain('Secure');
    expect(attrs).toContain('SameSite=Strict');
    const out = await ui('/ui/api/logout', srv.token, { method: 'POST', headers: { origin: srv.url } });
    expect(out.status).toBe(303);
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
  });

  test('login is refused: a bad token (401), a foreign or missing Origin (403, CSRF), a user without RBAC for /ui (403)', async () => {
    const bad = await login('wrong');
    expect(bad.status).toBe(401);
    expect(bad.headers.get('set-cookie')).toBeNull();
    for (const origin of ['https://evil.example', 'null', null]) {
      const r = await login(srv.token, origin);
      expect(r.status).toBe(403);
      expect(r.headers.get('set-cookie')).toBeNull();
    }
    const nobody = await login('nobody-token');
    expect(nobody.status).toBe(403);
    expect(await nobody.text()).toContain('User &#34;nobody&#34; cannot get path &#34;/ui/&#34;');
    expect((await login('viewer-token')).status).toBe(303);
  });

  test('a user without RBAC permission for /ui gets 403 from every endpoint', async () => {
    for (const p of ['/ui/api/overview', '/ui/api/requests', '/ui/api/objects?version=v1&resource=configmaps']) {
      const r = await ui(p, 'nobody-token');
      expect(r.status).toBe(403);
      const body = (await r.json()) as { message: string };
      expect(body.message).toBe(`forbidden: User "nobody" cannot get path "${p.replace(/\?.*/, '')}"`);
    }
    // Pages and the bundle: 403 too (a page says so on the login form).
    for (const p of ['/ui/', '/ui/app.js']) expect((await ui(p, 'nobody-token')).status).toBe(403);
  });

  test('read-only: methods other than GET under /ui get 405', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      expect((await ui('/ui/api/overview', srv.token, { method })).status).toBe(405);
    }
  });

  test("objects follow the user's own RBAC: a viewer lists ConfigMaps, not Secrets", async () => {
    expect((await ui(`/ui/api/objects?version=v1&resource=configmaps&namespace=${NS}`, 'viewer-token')).status).toBe(200);
    const secrets = await ui(`/ui/api/objects?version=v1&resource=secrets&namespace=${NS}`, 'viewer-token');
    expect(secrets.status).toBe(403);
    expect((await ui(`/ui/api/object?version=v1&resource=secrets&namespace=${NS}&name=x`, 'viewer-token')).status).toBe(403);
    expect((await ui(`/ui/api/objects/watch?version=v1&resource=secrets&namespace=${NS}`, 'viewer-token')).status).toBe(403);
    // The pages themselves need only /ui.
    expect((await ui('/ui/api/overview', 'viewer-token')).status).toBe(200);
  });
});

describe('data', () => {
  test('overview: the version, the store, objects per kind move when a ConfigMap is created', async () => {
    const before = await uiJson<Overview>('/ui/api/overview');
    expect(before.version.gitVersion).toBe('v1.33.0+svc');
    expect(before.store.backend).toBe(process.env.SVC_TEST_STORE === 'etcd' ? 'etcd' : 'embedded');
    expect(before.process.rssBytes).toBeGreaterThan(0);
    const count = (o: Overview) => o.kinds.find((k) => k.resource === 'configmaps')?.objects;
    const n = count(before) ?? Number.NaN;
    expect(Number.isInteger(n)).toBe(true);
    await createConfigMap('overview-cm');
    const after = await until(
      () => uiJson<Overview>('/ui/api/overview'),
      (o) => count(o) === n + 1,
    );
    expect(count(after)).toBe(n + 1);
    expect(after.store.revision).toBeGreaterThan(before.store.revision);
  });

  test("overview: the store's own compactions (the compactor every 500 ms here)", async () => {
    const before = await uiJson<Overview>('/ui/api/overview');
    const n = before.store.compactions ?? Number.NaN;
    expect(Number.isInteger(n)).toBe(true);
    // The compactor compacts to the revision it saw one interval ago, when that is newer than
    // the compacted one: a write, then two intervals.
    await createConfigMap('compaction-cm');
    const after = await until(
      () => uiJson<Overview>('/ui/api/overview'),
      (o) => (o.store.compactions ?? 0) > n,
      5000,
    );
    expect(after.store.compactions).toBeGreaterThan(n);
    expect(after.store.compactedRevision).toBeGreaterThan(before.store.compactedRevision);
  });

  test('requests: the counters of POST configmaps move', async () => {
    const ofPosts = (r: Requests) => r.series.filter((s) => s.verb === 'POST' && s.resource === 'configmaps');
    const posts = (r: Requests) => ofPosts(r).reduce((a, s) => a + s.total, 0);
    const before = posts(await uiJson<Requests>('/ui/api/requests'));
    await createConfigMap('requests-cm');
    const after = await uiJson<Requests>('/ui/api/requests');
    expect(posts(after)).toBe(before + 1);
    const s = ofPosts(after)[0];
    expect(s?.codes['201']).toBeGreaterThanOrEqual(1);
    expect(s?.buckets.length).toBe(after.bounds.length);
  });

  test('priority and fairness, watches, nodes, load runs', async () => {
    const apf = await uiJson<Apf>('/ui/api/apf');
    expect(apf.enabled).toBe(true);
    expect(apf.levels.map((l) => l.name)).toEqual(expect.arrayContaining(['exempt', 'catch-all', 'workload-low']));
    const w = await uiJson<Watches>('/ui/api/watches');
    const cms = w.resources.find((r) => r.resource === 'configmaps');
    expect(cms?.events).toBeGreaterThan(0);
    const nodes = await until(
      () => uiJson<Nodes>('/ui/api/nodes'),
      (n) => n.nodes.length === 2 && n.nodes.every((x) => x.ready === 'True'),
      5000,
    );
    expect(nodes.nodes.map((x) => x.name).sort()).toEqual(['sim-node-0', 'sim-node-1']);
    expect(nodes.nodes[0]).toMatchObject({ ready: 'True', simulated: true, heartbeat: 'on', pods: 0 });
    expect(await uiJson('/ui/api/loadruns')).toEqual({ running: null, past: [] });
  });

  test('objects: one page from the cache with the count of all, YAML, and a new ConfigMap on the change stream', async () => {
    await createConfigMap('listed-cm');
    const list = await uiJson<Objects>(`/ui/api/objects?version=v1&resource=configmaps&namespace=${NS}`);
    expect(list.items.map((i) => i.name)).toContain('listed-cm');
    expect(list.total).toBe(list.items.length);
    expect(list.limit).toBe(500);
    expect(list.items.find((i) => i.name === 'listed-cm')).toMatchObject({ namespace: NS, created: expect.stringMatching(/^\d{4}-/) });
    const one = await uiJson<{ yaml: string }>(`/ui/api/object?version=v1&resource=configmaps&namespace=${NS}&name=listed-cm`);
    expect(one.yaml).toContain('name: listed-cm');
    expect(one.yaml).toContain('k: v');
    const s = await openStream(NS);
    try {
      const hello = await s.next();
      expect(hello).toMatchObject({ changes: [], total: list.total + 0 });
      expect(hello?.revision).toBeGreaterThanOrEqual(list.revision);
      await createConfigMap('watched-cm');
      const b = await s.next();
      expect(b?.total).toBe(list.total + 1);
      expect(b && 'changes' in b ? b.changes : []).toEqual([
        { namespace: NS, name: 'watched-cm', created: expect.stringMatching(/^\d{4}-/), resourceVersion: expect.any(String) },
      ]);
      const del = await srv.fetch(`/api/v1/namespaces/${NS}/configmaps/watched-cm`, { method: 'DELETE' });
      expect(del.status).toBe(200);
      const d = await s.next();
      expect(d && 'changes' in d ? d.changes : []).toEqual([expect.objectContaining({ name: 'watched-cm', deleted: true })]);
      expect(d?.total).toBe(list.total);
    } finally {
      s.close();
    }
  });

  test('objects: a burst of creates is a few batches on the stream, not a message per object', async () => {
    const ns = 'ui-burst';
    await srv.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const s = await openStream(ns);
    try {
      await s.next();
      const N = 300;
      const t0 = Date.now();
      for (let i = 0; i < N; i += 50) {
        await Promise.all(
          Array.from({ length: 50 }, (_, j) =>
            srv.json('POST', `/api/v1/namespaces/${ns}/configmaps`, {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: `b-${i + j}` },
            }),
          ),
        );
      }
      // Every object is named by a batch, or a resync said "read the list again".
      const named = new Set<string>();
      let resyncs = 0;
      let messages = 0;
      let last: ObjectsBatch | undefined;
      while (last?.total !== N) {
        last = await s.next();
        if (!last) break;
        messages++;
        if ('changes' in last) for (const c of last.changes) named.add(c.name);
        else resyncs++;
      }
      const elapsed = Date.now() - t0;
      expect(last?.total).toBe(N);
      expect(resyncs > 0 || named.size === N).toBe(true);
      // At most one message per 300 ms interval (and one at once).
      expect(messages).toBeLessThanOrEqual(Math.ceil(elapsed / 300) + 1);
      expect(messages).toBeLessThan(N / 10);
    } finally {
      s.close();
    }
  });

  test('the client bundle is served with an ETag and revalidates', async () => {
    const js = await ui('/ui/app.js', srv.token);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toContain('javascript');
    expect((await js.text()).length).toBeGreaterThan(10_000);
    const etag = js.headers.get('etag') as string;
    expect((await ui('/ui/app.js', srv.token, { headers: { 'if-none-match': etag } })).status).toBe(304);
    const css = await ui('/ui/app.css', srv.token);
    expect(await css.text()).toContain('.uplot');
  });
});

needs('chromium').describe('in the browser', () => {
  test('log in, every page renders data with no console error, a new ConfigMap appears live', async () => {
    const puppeteer = await import('puppeteer-core');
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--headless=new', '--ignore-certificate-errors'],
    });
    const errors: string[] = [];
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 900 });
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(String(e)));
      const shot = (name: string) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
      const text = (sel: string) => page.$eval(sel, (e) => e.textContent ?? '');
      // Page-side code goes as text: this file is type-checked without the DOM library.
      const js = (expr: string, timeout = 5000) => page.waitForFunction(expr, { timeout });
      const q = JSON.stringify;

      // Not logged in: the form.
      await page.goto(`${srv.url}/ui/`, { waitUntil: 'domcontentloaded' });
      expect(new URL(page.url()).pathname).toBe('/ui/login');
      await page.type('#token', srv.token);
      await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click('#login')]);
      expect(new URL(page.url()).pathname).toBe('/ui/');

      // Overview: the version and the objects per kind.
      await page.waitForSelector('[data-figure="version"]');
      expect(await text('[data-figure="version"]')).toBe('v1.33.0+svc');
      await page.waitForSelector('#kinds');
      expect(await text('#kinds')).toContain('configmaps');
      await page.waitForSelector('[data-figure="compactions"]');
      expect(await text('[data-figure="compactions"]')).toMatch(/^\d+$/);
      await page.waitForSelector('.uplot');
      await shot('overview');

      const visit = async (hash: string, sel: string, expected: string, name: string) => {
        await page.evaluate(`location.hash = ${q(hash)}`);
        await js(`document.querySelector(${q(sel)})?.textContent?.includes(${q(expected)}) === true`);
        await shot(name);
      };
      await visit('#/requests', '#requests', 'configmaps', 'requests');
      await visit('#/apf', '#levels', 'workload-low', 'apf');
      await visit('#/watches', '#watches', 'configmaps', 'watches');
      await visit('#/nodes', '#nodes', 'sim-node-1', 'nodes');
      await visit('#/loadruns', '#no-runs', 'No load runs', 'loadruns');

      // Objects: the test's ConfigMaps; a new one appears without a reload.
      await createConfigMap('browser-cm-1');
      await visit(`#/objects?group=&version=v1&resource=configmaps&namespace=${NS}`, '#objects', 'browser-cm-1', 'objects');
      await js(`document.getElementById('live')?.textContent === 'live'`);
      const navigations = "performance.getEntriesByType('navigation').length";
      const loads = await page.evaluate(navigations);
      const t0 = Date.now();
      await createConfigMap('browser-cm-2');
      await js(`document.getElementById('objects')?.textContent?.includes('browser-cm-2') === true`, 2000);
      expect(Date.now() - t0).toBeLessThan(2000);
      expect(await page.evaluate(navigations)).toBe(loads);
      await shot('objects-live');

      // A burst (more objects than one batch names): the page reads its list again, once.
      const before = Number((await text('#objects-summary')).split(' ')[0]);
      await Promise.all(Array.from({ length: 150 }, (_, i) => createConfigMap(`browser-burst-${i}`)));
      await js(`document.getElementById('objects-summary')?.textContent?.startsWith('${before + 150} objects') === true`, 3000);
      await js(`document.getElementById('objects')?.textContent?.includes('browser-burst-99') === true`, 3000);

      // The YAML of one object.
      await page.click('#objects a');
      await js(`document.getElementById('yaml')?.textContent?.includes('apiVersion: v1') === true`);
      await shot('objects-yaml');

      // The cookie is not readable by scripts.
      expect(await page.evaluate('document.cookie')).toBe('');
    } finally {
      await browser.close();
    }
    expect(errors).toEqual([]);
  }, 60_000);
});

describe('shutdown', () => {
  test('an open change stream does not hold the server open', async () => {
    const other = await startServer();
    const r = await other.fetch('/ui/api/objects/watch?version=v1&resource=configmaps', {
      token: null,
      headers: { cookie: cookieOf(other.token) },
    });
    expect(r.status).toBe(200);
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    const t0 = Date.now();
    expect(await other.stop()).toBe(0);
    expect(Date.now() - t0).toBeLessThan(5000);
    // The stream ended with the server.
    const end = await Promise.race([reader.read().then((c) => c.done), Bun.sleep(2000).then(() => 'open')]);
    expect(end).not.toBe('open');
  });
});

describe('--enable-ui=false', () => {
  test('/ui is an unknown path like any other', async () => {
    const off = await startServer({ args: ['--enable-ui=false'] });
    try {
      expect((await off.fetch('/ui/', { redirect: 'manual' })).status).toBe(404);
      expect((await off.fetch('/ui/login', { redirect: 'manual' })).status).toBe(404);
      expect((await off.fetch('/ui/api/overview', { token: null, headers: { cookie: cookieOf(off.token) } })).status).toBe(401);
    } finally {
      await off.stop();
    }
  });
});
