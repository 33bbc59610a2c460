/**
 * CRD conversion webhooks (issue 38 item 2), end to end: a CRD with two versions (v1 stored, v2
 * served) converted by an HTTPS webhook in the test process. Objects written through either
 * version are read, listed, watched, patched and applied (kubectl) through the other; the webhook
 * sees ConversionReview v1; a failing or unreachable converter gives the reference's 500 and
 * leaves the storage version readable.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { KUBECTL, STATIC_WORKLOADS, serverForFile } from './helpers/server';
import { until } from './helpers/until';
import { startWebhookServer, type WebhookServer } from './helpers/webhook-server';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
setDefaultTimeout(20_000);
const srv = serverForFile({ args: [STATIC_WORKLOADS] });
const G = 'stable.example.com';
let hooks: WebhookServer;
let failing: string | undefined;

/** v1 spec.host <-> v2 spec.hostname; labels say which version converted the object last. */
function convert(o: Json, desired: string): Json {
  const spec = { ...(o.spec ?? {}) };
  if (desired.endsWith('/v2') && 'host' in spec) {
    spec.hostname = spec.host;
    delete spec.host;
  } else if (desired.endsWith('/v1') && 'hostname' in spec) {
    spec.host = spec.hostname;
    delete spec.hostname;
  }
  return {
    ...o,
    apiVersion: desired,
    spec,
    metadata: { ...o.metadata, labels: { ...(o.metadata.labels ?? {}), 'converted-to': desired.split('/')[1] } },
  };
}

beforeAll(async () => {
  hooks = await startWebhookServer();
  hooks.handle('/convert', (review) => {
    const r = review.request;
    const result = failing ? { status: 'Failure', message: failing } : { status: 'Success' };
    return {
      raw: Response.json({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        response: { uid: r.uid, result, convertedObjects: failing ? [] : r.objects.map((o: Json) => convert(o, r.desiredAPIVersion)) },
      }),
    };
  });
});
afterAll(() => hooks?.stop());

const schema = (field: string) => ({
  openAPIV3Schema: {
    type: 'object',
    properties: { spec: { type: 'object', properties: { [field]: { type: 'string' }, replicas: { type: 'integer' } } } },
  },
});

async function kubectl(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn([KUBECTL, `--kubeconfig=${srv.kubeconfig}`, ...args], {
    stdin: input === undefined ? 'ignore' : new Blob([input]),
    stdout: 'pipe',
    stderr: 'pipe',
    env: { ...process.env, HOME: srv.dataDir },
  });
  const [code, stdout, stderr] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code, stdout, stderr };
}

describe('a CRD converted by a webhook', () => {
  test('set up: the CRD is established with both versions', async () => {
    const r = await srv.json('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      metadata: { name: `hosts.${G}` },
      spec: {
        group: G,
        scope: 'Namespaced',
        names: { plural: 'hosts', singular: 'host', kind: 'Host', listKind: 'HostList' },
        versions: [
          { name: 'v1', served: true, storage: true, schema: schema('host') },
          { name: 'v2', served: true, storage: false, schema: schema('hostname') },
        ],
        conversion: {
          strategy: 'Webhook',
          webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: hooks.url('/convert'), caBundle: hooks.caBundle } },
        },
      },
    });
    expect(r.body.message ?? '').toBe('');
    expect(r.status).toBe(201);
    await until(
      () => srv.json('GET', `/apis/${G}/v2/namespaces/default/hosts`),
      (x) => x.status === 200,
      5000,
    );
  });

  test('written through v1, read, listed and patched through v2', async () => {
    const c = await srv.json('POST', `/apis/${G}/v1/namespaces/default/hosts`, {
      apiVersion: `${G}/v1`,
      kind: 'Host',
      metadata: { name: 'a' },
      spec: { host: 'a.example.com' },
    });
    expect(c.status).toBe(201);
    const g = await srv.json('GET', `/apis/${G}/v2/namespaces/default/hosts/a`);
    expect(g.status).toBe(200);
    expect(g.body.apiVersion).toBe(`${G}/v2`);
    expect(g.body.spec).toEqual({ hostname: 'a.example.com' });
    expect(g.body.metadata.labels['converted-to']).toBe('v2');
    expect(g.body.metadata.uid).toBe(c.body.metadata.uid);
    const l = await srv.json('GET', `/apis/${G}/v2/namespaces/default/hosts`);
    expect(l.body.items.map((i: Json) => i.spec.hostname)).toContain('a.example.com');
    // What the webhook was sent: a ConversionReview v1 of the stored object.
    const review = hooks.received('/convert').at(-1);
    expect(review.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(review.request.desiredAPIVersion).toBe(`${G}/v2`);
    expect(review.request.objects[0].apiVersion).toBe(`${G}/v1`);
    // A merge patch through v2 is applied to the v2 form and stored as v1.
    const p = await srv.json(
      'PATCH',
      `/apis/${G}/v2/namespaces/default/hosts/a`,
      { spec: { hostname: 'b.example.com' } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(p.status).toBe(200);
    expect(p.body.spec.hostname).toBe('b.example.com');
    const v1 = await srv.json('GET', `/apis/${G}/v1/namespaces/default/hosts/a`);
    expect(v1.body.spec).toEqual({ host: 'b.example.com' });
    expect(v1.body.apiVersion).toBe(`${G}/v1`);
  });

  test('created and applied (kubectl) through v2, stored as v1; a v2 watch sees converted events', async () => {
    const ac = new AbortController();
    const events: Json[] = [];
    const watching = (async () => {
      const res = await srv.fetch(`/apis/${G}/v2/namespaces/default/hosts?watch=true`, { signal: ac.signal });
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      let buf = '';
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += new TextDecoder().decode(value);
          let nl = buf.indexOf('\n');
          while (nl >= 0) {
            events.push(JSON.parse(buf.slice(0, nl)));
            buf = buf.slice(nl + 1);
            nl = buf.indexOf('\n');
          }
        }
      } catch {}
    })();
    const manifest = `apiVersion: ${G}/v2\nkind: Host\nmetadata:\n  name: applied\n  namespace: default\nspec:\n  hostname: applied.example.com\n`;
    const k = await kubectl(['apply', '--server-side', '-f', '-'], manifest);
    expect(k.stderr).toBe('');
    expect(k.code).toBe(0);
    const v1 = await srv.json('GET', `/apis/${G}/v1/namespaces/default/hosts/applied`);
    expect(v1.body.spec).toEqual({ host: 'applied.example.com' });
    const k2 = await kubectl(['apply', '--server-side', '-f', '-'], manifest.replace('applied.example.com', 'changed.example.com'));
    expect(k2.code).toBe(0);
    const got = await kubectl(['get', `hosts.v2.${G}`, 'applied', '-o', 'jsonpath={.spec.hostname}']);
    expect(got.stdout).toBe('changed.example.com');
    await until(
      async () => events.filter((e) => e.object?.metadata?.name === 'applied').length,
      (n) => n >= 2,
      5000,
    );
    const mine = events.filter((e) => e.object?.metadata?.name === 'applied');
    expect(mine[0].type).toBe('ADDED');
    expect(mine[0].object.apiVersion).toBe(`${G}/v2`);
    expect(mine.at(-1).object.spec).toEqual({ hostname: 'changed.example.com' });
    ac.abort();
    await watching;
  });

  test('the storage version moves to v2: objects stored as v1 are converted when read and stored as v2 when written', async () => {
    const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/hosts.${G}`;
    const crd = await srv.json('GET', path);
    crd.body.spec.versions[0].storage = false;
    crd.body.spec.versions[1].storage = true;
    const u = await srv.json('PUT', path, crd.body);
    expect(u.status).toBe(200);
    const status = await until(
      () => srv.json('GET', path),
      (r) => (r.body.status?.storedVersions ?? []).includes('v2'),
      3000,
    );
    expect(status.body.status.storedVersions).toEqual(['v1', 'v2']);
    // "a" is still stored as v1: read through v1 as it is, through v2 converted.
    await until(
      () => srv.json('GET', `/apis/${G}/v2/namespaces/default/hosts/a`),
      (r) => r.status === 200 && r.body.spec?.hostname === 'b.example.com',
      3000,
    );
    const before = hooks.received('/convert').length;
    const p = await srv.json(
      'PATCH',
      `/apis/${G}/v1/namespaces/default/hosts/a`,
      { spec: { replicas: 2 } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(p.status).toBe(200);
    expect(p.body.apiVersion).toBe(`${G}/v1`);
    expect(p.body.spec).toEqual({ host: 'b.example.com', replicas: 2 });
    // Written through v1 and stored as v2: a review asked for v2.
    const asked = hooks
      .received('/convert')
      .slice(before)
      .map((r) => r.request.desiredAPIVersion);
    expect(asked).toContain(`${G}/v2`);
    const v2 = await srv.json('GET', `/apis/${G}/v2/namespaces/default/hosts/a`);
    expect(v2.body.spec).toEqual({ hostname: 'b.example.com', replicas: 2 });
  });

  test('a converter that fails: 500 with its message; an unreachable one: the call error; the storage version still readable', async () => {
    failing = 'cannot convert today';
    try {
      const g = await srv.json('GET', `/apis/${G}/v1/namespaces/default/hosts/a`);
      expect(g.status).toBe(500);
      expect(g.body.reason).toBe('InternalError');
      expect(g.body.message).toBe(`Internal error occurred: conversion webhook for ${G}/v2, Kind=Host failed: cannot convert today`);
      const c = await srv.json('POST', `/apis/${G}/v1/namespaces/default/hosts`, {
        apiVersion: `${G}/v1`,
        kind: 'Host',
        metadata: { name: 'x' },
        spec: { host: 'x' },
      });
      expect(c.status).toBe(500);
      expect(c.body.message).toBe(`Internal error occurred: conversion webhook for ${G}/v1, Kind=Host failed: cannot convert today`);
      // Nothing was stored; an absent object needs no conversion.
      expect((await srv.json('GET', `/apis/${G}/v1/namespaces/default/hosts/x`)).status).toBe(404);
      expect((await srv.json('GET', `/apis/${G}/v2/namespaces/default/hosts/x`)).status).toBe(404);
    } finally {
      failing = undefined;
    }
    const crd = await srv.json('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/hosts.${G}`);
    const closed = Bun.serve({ port: 0, fetch: () => new Response('') });
    const port = closed.port;
    closed.stop(true);
    crd.body.spec.conversion.webhook.clientConfig = { url: `https://127.0.0.1:${port}/convert` };
    expect((await srv.json('PUT', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/hosts.${G}`, crd.body)).status).toBe(200);
    const g = await until(
      () => srv.json('GET', `/apis/${G}/v1/namespaces/default/hosts/a`),
      (r) => r.status === 500,
      5000,
    );
    expect(g.body.message).toBe(
      `Internal error occurred: conversion webhook for ${G}/v2, Kind=Host failed: Post "https://127.0.0.1:${port}/convert?timeout=30s": dial tcp 127.0.0.1:${port}: connect: connection refused`,
    );
    const v2 = await srv.json('GET', `/apis/${G}/v2/namespaces/default/hosts/a`);
    expect(v2.status).toBe(200);
  });
});
