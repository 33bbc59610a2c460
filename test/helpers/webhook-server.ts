/**
 * An HTTPS admission webhook server for tests, in the test process: its own CA (the server's
 * certificate generator, src/auth/certs.ts) with a certificate for 127.0.0.1, localhost and the
 * given DNS names; each path answered by a handler from the AdmissionReview it is sent. Every
 * review received is kept, per path, for the test to inspect.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { servingCerts } from '../../src/auth/certs';

// biome-ignore lint/suspicious/noExplicitAny: AdmissionReview bodies under test
type Json = any;

/** A handler's answer: the AdmissionReview response fields (uid and kind are filled in). */
export type Answer = { allowed: boolean; [k: string]: unknown } | { raw: Response };
export type Handler = (review: Json) => Answer | Promise<Answer>;

export interface WebhookServer {
  port: number;
  /** The CA bundle (base64 PEM) for clientConfig.caBundle. */
  caBundle: string;
  url(p: string): string;
  handle(p: string, h: Handler): void;
  /** The reviews received on a path, oldest first. */
  received(p: string): Json[];
  stop(): void;
}

/** A JSONPatch in the form a webhook answers it. */
export const jsonPatch = (ops: unknown[]) => ({ patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') });

/** A non-loopback IPv4 address of this machine (EndpointSlices may not name loopback addresses). */
export function hostAddress(): string {
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  throw new Error('this machine has no non-loopback IPv4 address for an EndpointSlice to name');
}

export async function startWebhookServer(dnsName = 'localhost'): Promise<WebhookServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-'));
  const certs = await servingCerts(dir, dnsName);
  fs.rmSync(dir, { recursive: true, force: true });
  const handlers = new Map<string, Handler>();
  const received = new Map<string, Json[]>();
  const server = Bun.serve({
    port: 0,
    hostname: '0.0.0.0',
    tls: { cert: certs.cert, key: certs.key },
    async fetch(req): Promise<Response> {
      const p = new URL(req.url).pathname;
      const review = (await req.json()) as Json;
      const list = received.get(p) ?? [];
      list.push(review);
      received.set(p, list);
      const h = handlers.get(p);
      if (!h) return new Response('no handler', { status: 404 });
      const a = await h(review);
      if ('raw' in a) return (a as { raw: Response }).raw;
      return Response.json({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, ...a } });
    },
  });
  return {
    port: server.port as number,
    caBundle: Buffer.from(certs.ca as string).toString('base64'),
    url: (p) => `https://127.0.0.1:${server.port}${p}`,
    handle: (p, h) => handlers.set(p, h),
    received: (p) => received.get(p) ?? [],
    stop: () => server.stop(true),
  };
}
