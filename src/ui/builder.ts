/**
 * The dashboard (--enable-ui) as the server mounts it under /ui (src/http/app.ts routes /ui and
 * /ui/* here, with the API chain's guard):
 *
 *   GET  /ui/login                the login form                   ┐ no credentials needed
 *   POST /ui/api/login, /logout   set or clear the cookie (access.ts) ┘
 *   GET  /ui/                     the page shell (hash routes: #/overview, #/requests, ...)
 *   GET  /ui/app.js, /ui/app.css  the client bundle (bundle.ts), built on first request
 *   GET  /ui/api/<source>         JSON read from the server's own counters (sources.ts, objects.ts)
 *   GET  /ui/api/objects/watch    batched changes as server-sent events (change-batches.ts)
 *
 * Every request but the first three goes through the chain's guard with the cookie's token, so
 * /ui/* is authorized by RBAC as a non-resource URL. The bootstrap policy grants no role /ui
 * (the reference has none): only cluster-admin (nonResourceURLs `*`) and system:masters may look,
 * until an administrator binds a role with `nonResourceURLs: ["/ui", "/ui/*"]`, verbs `get`.
 *
 * The dashboard does nothing between requests: no timer, no counter kept for it. A browser with
 * the page open polls every few seconds (the client's refetch intervals stop when the tab is
 * hidden) and holds one watch for the objects page.
 */
import type { Apf } from '../apf';
import type { Authorizer } from '../auth/authz';
import { requestUser } from '../auth/request-user';
import type { TokenAuthenticator } from '../auth/tokens';
import type { Metrics } from '../http/metrics';
import type { ApiRegistry } from '../registry/api-registry';
import { asBearer, CLEAR_COOKIE, checkLogin, cookieToken, sameOrigin, setCookie } from './access';
import { type Asset, ClientBundle } from './bundle';
import { cachedLoadRuns, type LoadRuns } from './load-runs';
import { getObject, listObjects, UiError, watchObjects } from './objects';
import { loginPage, SECURITY_HEADERS, SHELL } from './pages';
import { kinds, nodes, overview, priorityAndFairness, requests, type SourceDeps, type StoreView, watches } from './sources';

type Guarded = (req: Request, serve: () => Response | Promise<Response>) => Promise<Response>;

export interface UiDeps {
  api: ApiRegistry;
  metrics: Metrics;
  apf?: Apf;
  authn: TokenAuthenticator;
  authz: Authorizer;
  store: StoreView;
  version: Record<string, string>;
  /** The load harness's runs (default: those it published as ConfigMaps; see load-runs.ts). */
  loadRuns?: LoadRuns;
}

export interface Ui {
  handle(req: Request, guarded: Guarded): Promise<Response>;
  /** End the open change streams (the server is stopping). */
  close(): void;
  /** The client bundle (its build time, for the start-time measurement). */
  readonly bundle: ClientBundle;
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } });
const html = (body: string, status = 200, extra: Record<string, string> = {}) =>
  new Response(body, { status, headers: { 'content-type': 'text/html; charset=utf-8', ...SECURITY_HEADERS, ...extra } });
const redirect = (to: string, extra: Record<string, string> = {}) =>
  new Response(null, { status: 303, headers: { location: to, ...extra } });
const notAllowed = () => json({ message: 'the dashboard is read-only' }, 405);

function asset(a: Asset, req: Request): Response {
  if (req.headers.get('if-none-match') === a.etag) return new Response(null, { status: 304, headers: { etag: a.etag } });
  return new Response(a.body, { headers: { 'content-type': a.type, etag: a.etag, 'cache-control': 'no-cache' } });
}

export function createUi(d: UiDeps): Ui {
  const bundle = new ClientBundle();
  // Built at start, not awaited: no measurable change of the start time (see bundle.ts). A
  // failed build is retried on request.
  bundle.get().catch(() => {});
  const src: SourceDeps = { api: d.api, metrics: d.metrics, apf: d.apf, store: d.store, version: d.version };
  const runs = d.loadRuns ?? cachedLoadRuns(d.api);
  /** The objects pages' change streams now open (ended at shutdown). */
  const streams = new Set<{ end(reason: 'closed'): void }>();
  const sources: Record<string, () => unknown> = {
    overview: () => overview(src),
    requests: () => requests(src),
    apf: () => priorityAndFairness(src),
    watches: () => watches(src),
    kinds: () => kinds(src),
    nodes: () => nodes(src),
    loadruns: async () => {
      await runs.ready?.();
      return { running: runs.running() ?? null, past: runs.past() };
    },
  };

  async function login(req: Request): Promise<Response> {
    if (!sameOrigin(req)) return html(loginPage('The login form must be sent from this server’s own page.'), 403);
    const form = new URLSearchParams(await req.text());
    const r = await checkLogin((form.get('token') ?? '').trim(), d.authn, d.authz);
    if (!r.ok) return html(loginPage(r.message), r.status);
    return redirect('/ui/', { 'set-cookie': setCookie((form.get('token') ?? '').trim()) });
  }

  /** A request the guard let through: `authed` carries the user. */
  async function serve(path: string, url: URL, authed: Request, req: Request): Promise<Response> {
    if (path === '/ui/') return html(SHELL);
    if (path === '/ui/app.js') return asset((await bundle.get()).js, req);
    if (path === '/ui/app.css') return asset((await bundle.get()).css, req);
    if (!path.startsWith('/ui/api/')) return json({ message: 'not found' }, 404);
    const name = path.slice('/ui/api/'.length);
    const user = requestUser(authed);
    if (!user) throw new Error('bug: the guard let a request through without a user');
    try {
      const source = sources[name];
      if (source) return json(await source());
      if (name === 'objects') return json(await listObjects(d.api, d.authz, user, url.searchParams));
      if (name === 'object') return json(await getObject(d.api, d.authz, user, url.searchParams));
      if (name === 'objects/watch') {
        const body = await watchObjects(d.api, d.authz, user, url.searchParams, authed.signal, streams);
        return new Response(body, { headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' } });
      }
    } catch (e) {
      if (e instanceof UiError) return json({ message: e.message }, e.status);
      throw e;
    }
    return json({ message: 'not found' }, 404);
  }

  return {
    bundle,
    close() {
      for (const s of [...streams]) s.end('closed');
    },
    async handle(req, guarded) {
      const url = new URL(req.url);
      const path = url.pathname;
      const method = req.method.toUpperCase();
      const read = method === 'GET' || method === 'HEAD';
      if (path === '/ui') return redirect('/ui/');
      if (path === '/ui/login') return read ? html(loginPage()) : notAllowed();
      if (path === '/ui/api/login') return method === 'POST' ? login(req) : notAllowed();
      if (path === '/ui/api/logout') {
        if (method !== 'POST') return notAllowed();
        if (!sameOrigin(req)) return json({ message: 'cross-origin logout refused' }, 403);
        return redirect('/ui/login', { 'set-cookie': CLEAR_COOKIE });
      }
      if (!read) return notAllowed();
      const isApi = path.startsWith('/ui/api/');
      const token = cookieToken(req);
      if (!token) return isApi ? json({ message: 'Unauthorized: log in at /ui/login' }, 401) : redirect('/ui/login');
      const authed = asBearer(req, token);
      const res = await guarded(authed, () => serve(path, url, authed, req));
      if (isApi || res.status < 400) return res;
      // A page, refused: an expired or unknown token goes back to the form; a forbidden user is told.
      if (res.status === 401) return redirect('/ui/login', { 'set-cookie': CLEAR_COOKIE });
      if (res.status === 403) return html(loginPage('This user may not use the dashboard (RBAC: get on /ui/*).'), 403);
      return res;
    },
  };
}
