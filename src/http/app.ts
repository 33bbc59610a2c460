/**
 * The front end: an Elysia app on Bun.serve. Elysia owns the listening socket and the routes of
 * the server's own endpoints; the API (resources, discovery, OpenAPI) enters through one
 * catch-all route into the request chain of server.ts, which stays written in one place:
 *
 *   /livez /readyz /healthz[/<check>]   health, unauthenticated (as the reference's
 *                                        system:public-info-viewer allows everyone)
 *   /version                            build facts          ┐ authenticated and authorized
 *   /metrics                            Prometheus text      │ through the chain's guard
 *   /debug/<name>                       debug endpoints      ┘
 *   /ui, /ui/*                          the dashboard (src/ui/), which guards its own routes
 *                                        with the chain's guard (cookie → bearer token)
 *   everything else                     chain(request)
 *
 * This folder (src/http/) is the only place that knows Elysia. Routes only destructure
 * `request`, so Elysia's compiler parses neither query nor body for them: the chain reads the
 * body itself, once.
 */
import { Elysia } from 'elysia';
import type { AcceptUpgrade, ClientSocket } from '../aggregation/upgrade';
import type { HealthEndpoints } from './health';
import { type Chain, withAuditId } from './server';

export interface FrontEndDeps {
  chain: Chain;
  health: HealthEndpoints;
  /** GET /version. */
  version: () => Response;
  /** GET /metrics. */
  metrics: () => Promise<Response>;
  /** GET /debug/<name>: named debug endpoints. */
  debug: Record<string, (req: Request) => Response | Promise<Response>>;
  /** Service account issuer discovery: /.well-known/openid-configuration and /openid/v1/jwks. */
  issuer?: { configuration: () => Response; jwks: () => Response };
  /** The dashboard (--enable-ui); absent: /ui is an unknown path like any other. */
  ui?: UiMount;
}

/**
 * A front of its own mounted under /ui (the dashboard, src/ui/). It is handed the chain's guard
 * to authenticate and authorize its requests as the API's own endpoints are.
 */
export interface UiMount {
  handle(req: Request, guarded: Chain['guarded']): Promise<Response>;
  /** End the dashboard's open streams (shutdown: they must not hold the server open). */
  close(): void;
}

export interface ListenOptions {
  hostname: string;
  port: number;
  tls: { cert: string; key: string };
}

/** The app with every route; `listen` starts it. */
export function frontEnd(d: FrontEndDeps) {
  const { chain } = d;
  const health = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    try {
      const res = await d.health.handle(url.pathname, url.searchParams);
      return res ? withAuditId(request, res) : chain(request);
    } catch {
      return chain(request);
    }
  };
  const app = new Elysia()
    .get('/livez', ({ request }) => health(request))
    .get('/livez/*', ({ request }) => health(request))
    .get('/readyz', ({ request }) => health(request))
    .get('/readyz/*', ({ request }) => health(request))
    .get('/healthz', ({ request }) => health(request))
    .get('/healthz/*', ({ request }) => health(request))
    .get('/version', ({ request }) => chain.guarded(request, d.version))
    .get('/metrics', ({ request }) => chain.guarded(request, d.metrics))
    .get('/.well-known/openid-configuration', ({ request }) => (d.issuer ? chain.guarded(request, d.issuer.configuration) : chain(request)))
    .get('/openid/v1/jwks', ({ request }) => (d.issuer ? chain.guarded(request, d.issuer.jwks) : chain(request)))
    .get('/debug/:name', ({ request, params }) => {
      const f = d.debug[params.name];
      return f ? chain.guarded(request, () => f(request)) : chain(request);
    })
    .get('/debug/api_priority_and_fairness/:name', ({ request, params }) => {
      const f = d.debug[`api_priority_and_fairness/${params.name}`];
      return f ? chain.guarded(request, () => f(request)) : chain(request);
    })
    .all('/ui', ({ request }) => (d.ui ? d.ui.handle(request, chain.guarded) : chain(request)))
    .all('/ui/*', ({ request }) => (d.ui ? d.ui.handle(request, chain.guarded) : chain(request)))
    .all('/', ({ request }) => chain(request))
    .all('/*', ({ request }) => chain(request));
  return app;
}

/**
 * The server's WebSocket upgrade for handlers outside Elysia's routes (the aggregator's upgrade
 * proxy): Elysia's Bun adapter dispatches each socket's events to the functions in its data.
 */
export function acceptUpgrade(server: ReturnType<typeof listen>): AcceptUpgrade {
  return (req, headers, h) =>
    server.upgrade(req, {
      headers,
      data: {
        open: (ws: ClientSocket) => h.open(ws),
        message: (ws: ClientSocket, m: string | Uint8Array) => h.message(ws, m),
        close: (ws: ClientSocket, code: number, reason: string) => h.close(ws, code, reason),
        drain: (ws: ClientSocket) => h.drain(ws),
      },
    });
}

/** Serve the app; returns the Bun server (its port, and stop for shutdown). */
export function listen(app: ReturnType<typeof frontEnd>, o: ListenOptions) {
  // Elysia's Bun adapter sets SO_REUSEPORT unless told otherwise: a second server started on the
  // same port then bound beside the first, and the kernel shared connections between the two.
  // A port in use fails the start, as the reference's bind does. It also runs Bun.serve in
  // development mode unless NODE_ENV is production: that mode answers an error escaping a handler
  // with a page of its stack; every failure here is a Status the server writes itself.
  app.listen({ hostname: o.hostname, port: o.port, tls: o.tls, idleTimeout: 0, reusePort: false, development: false });
  const server = app.server;
  if (!server) throw new Error('the front end did not start');
  return server;
}
