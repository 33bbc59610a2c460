/**
 * matchPolicy Equivalent across versions (issue 38 item 1): a webhook whose rules list only v1 of
 * a CRD served in v1 and v2 sees a request made through v2 converted to v1, with `kind` and
 * `resource` of v1 and `requestKind`/`requestResource` of v2; a mutating webhook's patch is
 * applied to the v1 object and converted back. Two CRDs: one with conversion None (only the
 * apiVersion changes), one converted by a conversion webhook (v1 spec.host, v2 spec.hostname).
 * Under Exact the v1 webhook is not called for v2 requests. A built-in kind stored as another
 * version (autoscaling/v1 HPAs) is converted the same way. Real HTTPS webhook servers.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { STATIC_WORKLOADS, serverForFile } from './helpers/server';
import { until } from './helpers/until';
import { jsonPatch, startWebhookServer, type WebhookServer } from './helpers/webhook-server';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
setDefaultTimeout(20_000);
const srv = serverForFile({ args: [STATIC_WORKLOADS] });
const ADM = '/apis/admissionregistration.k8s.io/v1';
const NONE = 'eq.example.com';
const CONVERTED = 'eqw.example.com';
let hooks: WebhookServer;

/** v1 spec.host <-> v2 spec.hostname. */
function convert(o: Json, desired: string): Json {
  const spec = { ...(o.spec ?? {}) };
  if (desired.endsWith('/v2') && 'host' in spec) {
    spec.hostname = spec.host;
    delete spec.host;
  } else if (desired.endsWith('/v1') && 'hostname' in spec) {
    spec.host = spec.hostname;
    delete spec.hostname;
  }
  return { ...o, apiVersion: desired, spec };
}

const schema = (props: Record<string, Json>) => ({
  openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: props } } },
});

async function crd(group: string, plural: string, kind: string, v1: Json, v2: Json, conversion: Json): Promise<void> {
  const r = await srv.json('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        { name: 'v1', served: true, storage: true, schema: schema(v1) },
        { name: 'v2', served: true, storage: false, schema: schema(v2) },
      ],
      conversion,
    },
  });
  expect(r.status).toBe(201);
  await until(
    () => srv.json('GET', `/apis/${group}/v2/namespaces/default/${plural}`),
    (x) => x.status === 200,
    5000,
  );
}

/** A webhook on v1 of `group`'s `plural`, for objects labelled `t: <label>`. */
const webhook = (name: string, path: string, group: string, plural: string, label: string, extra: Json = {}): Json => ({
  name,
  clientConfig: { url: hooks.url(path), caBundle: hooks.caBundle },
  rules: [{ apiGroups: [group], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: [plural] }],
  objectSelector: { matchLabels: { t: label } },
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  ...extra,
});

async function configure(kind: 'validating' | 'mutating', name: string, webhooks: Json[]): Promise<void> {
  const r = await srv.json('POST', `${ADM}/${kind}webhookconfigurations`, { metadata: { name }, webhooks });
  expect(r.status).toBe(201);
}

let n = 0;
const create = (group: string, version: string, plural: string, kind: string, label: string, spec: Json) =>
  srv.json('POST', `/apis/${group}/${version}/namespaces/default/${plural}`, {
    apiVersion: `${group}/${version}`,
    kind,
    metadata: { name: `${label}-${++n}`, labels: { t: label } },
    spec,
  });

beforeAll(async () => {
  hooks = await startWebhookServer();
  hooks.handle('/convert', (review) => {
    const r = review.request;
    return {
      raw: Response.json({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        response: {
          uid: r.uid,
          result: { status: 'Success' },
          convertedObjects: r.objects.map((o: Json) => convert(o, r.desiredAPIVersion)),
        },
      }),
    };
  });
  hooks.handle('/deny', (rv) => ({ allowed: false, status: { message: `seen as ${rv.request.object.apiVersion}` } }));
  // Upper-cases spec.host: a field only v1 has.
  hooks.handle('/upper', (rv) => ({
    allowed: true,
    ...jsonPatch([{ op: 'replace', path: '/spec/host', value: String(rv.request.object.spec.host).toUpperCase() }]),
  }));
  await crd(NONE, 'widgets', 'Widget', { color: { type: 'string' } }, { color: { type: 'string' } }, { strategy: 'None' });
  await crd(
    CONVERTED,
    'hosts',
    'Host',
    { host: { type: 'string' } },
    { hostname: { type: 'string' } },
    {
      strategy: 'Webhook',
      webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: hooks.url('/convert'), caBundle: hooks.caBundle } },
    },
  );
  await configure('validating', 'eq-deny', [
    webhook('equivalent.eq.example.com', '/deny', NONE, 'widgets', 'equivalent'),
    webhook('exact.eq.example.com', '/deny', NONE, 'widgets', 'exact', { matchPolicy: 'Exact' }),
  ]);
  await configure('validating', 'eq-hpa', [
    webhook('hpa.eq.example.com', '/deny', 'autoscaling', 'horizontalpodautoscalers', 'hpa', {
      rules: [{ apiGroups: ['autoscaling'], apiVersions: ['v2'], operations: ['CREATE'], resources: ['horizontalpodautoscalers'] }],
    }),
  ]);
  await configure('mutating', 'eq-upper', [webhook('upper.eqw.example.com', '/upper', CONVERTED, 'hosts', 'upper')]);
});
afterAll(() => hooks?.stop());

describe('matchPolicy Equivalent across served versions', () => {
  test('conversion None: a v2 create reaches a v1 webhook as v1, requestKind and requestResource v2', async () => {
    const r = await until(
      () => create(NONE, 'v2', 'widgets', 'Widget', 'equivalent', { color: 'red' }),
      (x) => x.status === 403,
      3000,
    );
    expect(r.body.message).toContain('admission webhook "equivalent.eq.example.com" denied the request: seen as eq.example.com/v1');
    const rv = hooks.received('/deny').at(-1);
    expect(rv.request.kind).toEqual({ group: NONE, version: 'v1', kind: 'Widget' });
    expect(rv.request.resource).toEqual({ group: NONE, version: 'v1', resource: 'widgets' });
    expect(rv.request.requestKind).toEqual({ group: NONE, version: 'v2', kind: 'Widget' });
    expect(rv.request.requestResource).toEqual({ group: NONE, version: 'v2', resource: 'widgets' });
    expect(rv.request.object.apiVersion).toBe(`${NONE}/v1`);
    expect(rv.request.object.spec).toEqual({ color: 'red' });
    // Through v1 itself: the request's own version in both.
    const own = await create(NONE, 'v1', 'widgets', 'Widget', 'equivalent', { color: 'blue' });
    expect(own.status).toBe(403);
    const rv1 = hooks.received('/deny').at(-1);
    expect(rv1.request.requestKind).toEqual({ group: NONE, version: 'v1', kind: 'Widget' });
    expect(rv1.request.kind).toEqual(rv1.request.requestKind);
  });

  test('matchPolicy Exact: the v1 webhook is not called for a v2 request, and is for a v1 one', async () => {
    await until(
      () => create(NONE, 'v1', 'widgets', 'Widget', 'exact', {}),
      (x) => x.status === 403,
      3000,
    );
    const before = hooks.received('/deny').length;
    const v2 = await create(NONE, 'v2', 'widgets', 'Widget', 'exact', { color: 'green' });
    expect(v2.status).toBe(201);
    expect(hooks.received('/deny').length).toBe(before);
  });

  test('conversion webhook: a mutating v1 webhook patches the converted object, the result is converted back', async () => {
    const c = await until(
      () => create(CONVERTED, 'v2', 'hosts', 'Host', 'upper', { hostname: 'a.example.com' }),
      (x) => x.status === 201 && x.body.spec.hostname === 'A.EXAMPLE.COM',
      3000,
    );
    expect(c.body.apiVersion).toBe(`${CONVERTED}/v2`);
    expect(c.body.spec).toEqual({ hostname: 'A.EXAMPLE.COM' });
    const rv = hooks.received('/upper').at(-1);
    expect(rv.request.object.apiVersion).toBe(`${CONVERTED}/v1`);
    expect(rv.request.object.spec).toEqual({ host: 'a.example.com' });
    expect(rv.request.requestKind.version).toBe('v2');
    expect(rv.request.kind.version).toBe('v1');
    // Stored (v1) with the patch; an update through v2 sends the old object converted too.
    const g = await srv.json('GET', `/apis/${CONVERTED}/v1/namespaces/default/hosts/${c.body.metadata.name}`);
    expect(g.body.spec).toEqual({ host: 'A.EXAMPLE.COM' });
    const u = await srv.json('PUT', `/apis/${CONVERTED}/v2/namespaces/default/hosts/${c.body.metadata.name}`, {
      ...c.body,
      spec: { hostname: 'b.example.com' },
    });
    expect(u.status).toBe(200);
    expect(u.body.spec).toEqual({ hostname: 'B.EXAMPLE.COM' });
    const up = hooks.received('/upper').at(-1);
    expect(up.request.operation).toBe('UPDATE');
    expect(up.request.oldObject.spec).toEqual({ host: 'A.EXAMPLE.COM' });
    expect(up.request.object.spec).toEqual({ host: 'b.example.com' });
  });

  test('a kind stored as another version: an autoscaling/v1 HPA reaches a v2 webhook converted to v2', async () => {
    const r = await until(
      () =>
        srv.json('POST', '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers', {
          metadata: { name: `hpa-${++n}`, labels: { t: 'hpa' } },
          spec: {
            scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
            maxReplicas: 5,
            targetCPUUtilizationPercentage: 70,
          },
        }),
      (x) => x.status === 403,
      3000,
    );
    expect(r.body.message).toContain('seen as autoscaling/v2');
    const rv = hooks.received('/deny').at(-1);
    expect(rv.request.kind).toEqual({ group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' });
    expect(rv.request.requestKind).toEqual({ group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' });
    expect(rv.request.object.spec.metrics).toEqual([
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
    ]);
  });
});
