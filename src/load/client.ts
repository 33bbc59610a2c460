/**
 * The harness's API client: the target's URL and credentials (from a kubeconfig), client-go's
 * token-bucket rate limiter (--qps/--burst), and one latency record per request, keyed as
 * clusterloader2 keys API calls: (resource, subresource, verb, scope).
 */
import * as fs from 'node:fs';
import { parse as parseYaml } from 'yaml';

export interface Target {
  url: string;
  ca?: string;
  token?: string;
  cert?: string;
  key?: string;
  insecure?: boolean;
}

/** Read the current context's server, CA, token or client certificate from a kubeconfig file. */
export function readKubeconfig(file: string): Target {
  const doc = parseYaml(fs.readFileSync(file, 'utf8')) as any;
  const ctxName = doc?.['current-context'];
  const ctx = (doc?.contexts ?? []).find((c: any) => c.name === ctxName)?.context ?? doc?.contexts?.[0]?.context;
  if (!ctx) throw new Error(`${file}: no context`);
  const cluster = (doc.clusters ?? []).find((c: any) => c.name === ctx.cluster)?.cluster;
  const user = (doc.users ?? []).find((u: any) => u.name === ctx.user)?.user ?? {};
  if (!cluster?.server) throw new Error(`${file}: cluster ${ctx.cluster} has no server`);
  const dataOrFile = (data?: string, f?: string) =>
    data ? Buffer.from(data, 'base64').toString('utf8') : f ? fs.readFileSync(f, 'utf8') : undefined;
  return {
    url: String(cluster.server).replace(/\/$/, ''),
    ca: dataOrFile(cluster['certificate-authority-data'], cluster['certificate-authority']),
    insecure: cluster['insecure-skip-tls-verify'] === true,
    token: user.token ?? (user.tokenFile ? fs.readFileSync(user.tokenFile, 'utf8').trim() : undefined),
    cert: dataOrFile(user['client-certificate-data'], user['client-certificate']),
    key: dataOrFile(user['client-key-data'], user['client-key']),
  };
}

/** client-go's flowcontrol.NewTokenBucketRateLimiter: `burst` tokens, refilled at `qps` per second. */
export class TokenBucket {
  private tokens: number;
  private last = performance.now();
  constructor(
    readonly qps: number,
    readonly burst: number,
  ) {
    this.tokens = burst;
  }
  /** Wait for a token (reserve-then-sleep, so callers are served in order). */
  async take(): Promise<void> {
    if (this.qps <= 0) return;
    const now = performance.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / 1000);
    this.last = now;
    this.tokens -= 1;
    if (this.tokens < 0) await Bun.sleep((-this.tokens * 1000) / this.qps);
  }
}

export interface CallSample {
  /** ms since the run started */
  t: number;
  key: string;
  ms: number;
  status: number;
}

/** (resource, subresource, verb, scope) of a request, as the reference's apiserver_request_duration labels. */
export function callKey(
  method: string,
  path: string,
  watch: boolean,
): { resource: string; subresource: string; verb: string; scope: string } {
  const p = path.split('?')[0]!.split('/').filter(Boolean);
  // /api/v1/... or /apis/g/v/...
  let rest = p[0] === 'api' ? p.slice(2) : p.slice(3);
  let scope = 'cluster';
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    scope = 'namespace';
    rest = rest.slice(2);
  }
  const resource = rest[0] ?? '';
  const name = rest[1];
  const subresource = rest[2] ?? '';
  if (name !== undefined) scope = 'resource';
  const m = method.toUpperCase();
  let verb = m === 'GET' ? (name === undefined ? 'LIST' : 'GET') : m;
  if (watch) verb = 'WATCH';
  return { resource, subresource, verb, scope };
}

export class Client {
  readonly samples: CallSample[];
  readonly counts: Map<string, { total: number; throttled: number; errors: number }>;
  private readonly t0: number;
  constructor(
    readonly target: Target,
    readonly limiter: TokenBucket,
    t0 = performance.now(),
    shared?: Pick<Client, 'samples' | 'counts'>,
  ) {
    this.t0 = t0;
    this.samples = shared?.samples ?? [];
    this.counts = shared?.counts ?? new Map();
  }

  /**
   * The same target, clock and records (its calls are timed and counted with this client's), with
   * another rate limiter: for traffic that stands for other clients, such as many kubelets' leases.
   */
  withLimiter(limiter: TokenBucket): Client {
    return new Client(this.target, limiter, this.t0, this);
  }

  now(): number {
    return performance.now() - this.t0;
  }

  private init(method: string, body?: unknown, headers: Record<string, string> = {}): RequestInit {
    const h: Record<string, string> = { accept: 'application/json', ...headers };
    if (this.target.token) h.authorization = `Bearer ${this.target.token}`;
    if (body !== undefined && !h['content-type']) h['content-type'] = 'application/json';
    const tls: Record<string, unknown> = {};
    if (this.target.ca) tls.ca = this.target.ca;
    if (this.target.cert) tls.cert = this.target.cert;
    if (this.target.key) tls.key = this.target.key;
    if (this.target.insecure) tls.rejectUnauthorized = false;
    return { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body), tls } as RequestInit;
  }

  private count(key: string, status: number): void {
    const c = this.counts.get(key) ?? { total: 0, throttled: 0, errors: 0 };
    this.counts.set(key, c);
    c.total++;
    if (status === 429) c.throttled++;
    else if (status >= 500 || status === 0) c.errors++;
  }

  /** One rate-limited request; a 429 is retried after Retry-After (as client-go does), each attempt recorded. */
  async call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }> {
    const k = callKey(method, path, false);
    const key = `${k.resource}|${k.subresource}|${k.verb}|${k.scope}`;
    for (let attempt = 0; ; attempt++) {
      await this.limiter.take();
      const start = performance.now();
      let status = 0;
      let parsed: any;
      let retryAfter = 1;
      try {
        const r = await fetch(`${this.target.url}${path}`, this.init(method, body, headers));
        status = r.status;
        retryAfter = Number(r.headers.get('retry-after') ?? 1) || 1;
        const text = await r.text();
        parsed = text ? JSON.parse(text) : undefined;
      } catch (e) {
        parsed = { message: (e as Error).message };
      }
      const ms = performance.now() - start;
      this.samples.push({ t: start - this.t0, key, ms, status });
      this.count(key, status);
      if (status === 429 && attempt < 10) {
        await Bun.sleep(retryAfter * 1000);
        continue;
      }
      return { status, body: parsed };
    }
  }

  /** A streaming watch: calls onEvent per event until the signal aborts or the server ends it. */
  async watch(path: string, onEvent: (type: string, obj: any) => void, signal: AbortSignal): Promise<void> {
    const k = callKey('GET', path, true);
    this.count(`${k.resource}|${k.subresource}|WATCH|${k.scope}`, 200);
    const init = this.init('GET');
    const r = await fetch(`${this.target.url}${path}`, { ...init, signal } as RequestInit);
    if (!r.ok || !r.body) throw new Error(`watch ${path}: ${r.status}`);
    const dec = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of r.body as ReadableStream<Uint8Array>) {
        buf += dec.decode(chunk, { stream: true });
        let nl = buf.indexOf('\n');
        while (nl >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.trim()) {
            const ev = JSON.parse(line);
            onEvent(ev.type, ev.object);
          }
          nl = buf.indexOf('\n');
        }
      }
    } catch (e) {
      if (!signal.aborted) throw e;
    }
  }
}

/**
 * An informer's list-then-watch: list `path` (a collection, with `query` selectors), hand each
 * item to onEvent as ADDED, then watch from the list's resourceVersion; when the server ends the
 * watch (its timeout) watch again from the last resourceVersion seen, and relist after a 410 Gone,
 * as client-go's reflector does. Runs until the signal aborts.
 */
export async function informer(
  client: Client,
  path: string,
  query: string,
  onEvent: (type: string, obj: any) => void,
  signal: AbortSignal,
): Promise<void> {
  const sep = query ? `&${query}` : '';
  let rv = '';
  const relist = async () => {
    const l = await client.call('GET', `${path}?${query}`);
    if (l.status !== 200) throw new Error(`list ${path}: ${l.status} ${l.body?.message ?? ''}`);
    for (const it of l.body?.items ?? []) onEvent('ADDED', it);
    rv = l.body?.metadata?.resourceVersion ?? '';
  };
  await relist();
  // The first watch starts in the background: the caller goes on once the list is done.
  void (async () => {
    while (!signal.aborted) {
      let gone = false;
      try {
        await client.watch(
          `${path}?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}${sep}`,
          (type, obj) => {
            if (type === 'ERROR') {
              if (obj?.code === 410) gone = true;
              return;
            }
            if (obj?.metadata?.resourceVersion) rv = obj.metadata.resourceVersion;
            onEvent(type, obj);
          },
          signal,
        );
      } catch (e) {
        if (signal.aborted) return;
        gone = /: 410$/.test((e as Error).message);
        await Bun.sleep(500);
      }
      if (gone && !signal.aborted) await relist().catch(() => Bun.sleep(1000));
    }
  })();
}
