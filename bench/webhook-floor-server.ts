/**
 * The floor of a create that calls one validating webhook (bench/webhooks.ts --floor): a bare
 * TLS server that does only what the webhook adds to the API server's create, with the same
 * mechanism. Each POST's body is parsed; with the webhook on, an AdmissionReview v1 is made of
 * it and sent through the server's own webhook client (src/admission/webhook/client.ts: the
 * lean HTTP/1.1 client over kept-alive TLS sockets), its answer parsed and checked; then 201
 * with the object. No authentication, admission chain, validation or storage: what the API
 * server does besides is the same with the webhook and without, so the difference here is the
 * least a webhook call can add on this machine.
 *
 *   env C, K (serving cert and key), HOOK_URL, HOOK_CA; prints its port.
 *   POST /mode?webhook=on|off switches the call on or off.
 */
import { post, target } from '../src/admission/webhook/client';

const hook = target({ url: process.env.HOOK_URL ?? '' }, Buffer.from(process.env.HOOK_CA ?? '').toString('base64'), 10, () => {
  throw new Error('no services here');
});
let webhookOn = false;
let uid = 0;

const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  idleTimeout: 0,
  tls: { cert: process.env.C, key: process.env.K },
  async fetch(req) {
    const url = new URL(req.url);
    if (url.pathname === '/mode') {
      webhookOn = url.searchParams.get('webhook') === 'on';
      return new Response('ok');
    }
    const obj = (await req.json()) as { metadata?: { name?: string; namespace?: string } };
    if (webhookOn) {
      const review = {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: {
          uid: `floor-${++uid}`,
          kind: { group: '', version: 'v1', kind: 'ConfigMap' },
          resource: { group: '', version: 'v1', resource: 'configmaps' },
          requestKind: { group: '', version: 'v1', kind: 'ConfigMap' },
          requestResource: { group: '', version: 'v1', resource: 'configmaps' },
          name: obj.metadata?.name ?? '',
          namespace: 'bench',
          operation: 'CREATE',
          userInfo: { username: 'admin', groups: ['system:masters', 'system:authenticated'] },
          object: obj,
          oldObject: null,
          dryRun: true,
          options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
        },
      };
      const answer = (await post(hook, JSON.stringify(review), 10_000)) as { response?: { uid?: string; allowed?: boolean } };
      if (answer.response?.uid !== review.request.uid || answer.response.allowed !== true)
        return Response.json({ kind: 'Status', code: 403 }, { status: 403 });
    }
    return Response.json(obj, { status: 201 });
  },
});
console.log(server.port);
