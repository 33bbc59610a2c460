/**
 * CustomResourceDefinitions (issue 14), end to end with kubectl, client-node and HTTP: a CRD
 * written for the reference (`apiextensions.k8s.io`, `x-kubernetes-*` keys) is served within a
 * second through the same registry as built-in kinds: discovery, every verb and watch, status
 * subresource, validation with the reference's causes, pruning, defaults, preserved fields,
 * printer columns, explain, merge/JSON patch and apply (strategic merge patch 415), cluster
 * scope, names conflicts, CRD deletion removing objects and the API, and restarts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runClient } from './helpers/client-node';
import { type Server, startServer } from './helpers/server';
import { until } from './helpers/until';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
let srv: Server;
// Our own data dir (the helper removes the ones it makes when the server stops): the last test restarts on it.
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-crd-'));
beforeAll(async () => {
  srv = await startServer({ dataDir });
});
afterAll(async () => {
  await srv?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

const WIDGETS = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
    shortNames: [wd]
    categories: [all]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
        labelSelectorPath: .status.selector
    additionalPrinterColumns:
    - name: Size
      type: integer
      jsonPath: .spec.size
    - name: Color
      type: string
      jsonPath: .spec.color
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size:
                type: integer
                minimum: 1
                maximum: 10
              replicas:
                type: integer
              color:
                type: string
                enum: [red, blue]
                default: red
              tags:
                type: array
                maxItems: 3
                items:
                  type: string
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
              amount:
                x-kubernetes-int-or-string: true
          status:
            type: object
            properties:
              ready: {type: boolean}
              replicas: {type: integer}
              selector: {type: string}
`;

const W = '/apis/example.com/v1/namespaces/default/widgets';
const widget = (name: string, spec: Json): Json => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, spec });

beforeAll(async () => {
  const k = srv.kubectl(['apply', '-f', '-'], WIDGETS);
  expect(k.code).toBe(0);
  const started = Date.now();
  const r = await until(
    () => srv.json('GET', W),
    (r) => r.status === 200,
  );
  expect(r.status).toBe(200);
  expect(Date.now() - started).toBeLessThan(1000);
});

describe('the CRD', () => {
  test('is stored with the reference names, accepted and established; answers carry x-kubernetes keys', async () => {
    const r = await until(
      () => srv.json('GET', `${CRDS}/widgets.example.com`),
      (r) => (r.body.status?.conditions ?? []).length === 2,
    );
    expect(r.body.status.acceptedNames).toEqual({
      plural: 'widgets',
      singular: 'widget',
      kind: 'Widget',
      listKind: 'WidgetList',
      shortNames: ['wd'],
      categories: ['all'],
    });
    expect(r.body.status.storedVersions).toEqual(['v1']);
    expect(r.body.status.conditions.map((c: Json) => [c.type, c.status, c.reason])).toEqual([
      ['NamesAccepted', 'True', 'NoConflicts'],
      ['Established', 'True', 'InitialNamesAccepted'],
    ]);
    const schema = r.body.spec.versions[0].schema.openAPIV3Schema;
    expect(schema.properties.spec.properties.extra['x-kubernetes-preserve-unknown-fields']).toBe(true);
    const svc = await srv.json('GET', `/apis/apiextensions.svc.io/v1/customresourcedefinitions/widgets.example.com`);
    expect(svc.body.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.extra['x-svc-preserve-unknown-fields']).toBe(true);
    // kubectl waits for Established as users do.
    const w = srv.kubectl(['wait', '--for=condition=Established', 'crd/widgets.example.com', '--timeout=5s']);
    expect(w.code).toBe(0);
  });

  test('bad CRDs are refused with the reference causes', async () => {
    const base = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' };
    const r = await srv.json('POST', CRDS, {
      ...base,
      metadata: { name: 'gadgets.example.com' },
      spec: {
        group: 'example',
        scope: 'Everywhere',
        names: { plural: 'Gadgets', kind: 'Gadget' },
        versions: [
          { name: 'v1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object' } } },
          { name: 'v2', served: true, storage: false },
        ],
        conversion: { strategy: 'Webhook' },
      },
    });
    expect(r.status).toBe(422);
    const causes = r.body.details.causes.map((c: Json) => `${c.field}: ${c.message}`);
    expect(causes).toContain('metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group');
    expect(causes).toContain('spec.group: Invalid value: "example": should be a domain with at least one dot');
    expect(
      causes.some((c: string) => c.startsWith('spec.names.plural: Invalid value: "Gadgets": a DNS-1035 label must consist of lower case')),
    ).toBe(true);
    expect(causes).toContain('spec.scope: Unsupported value: "Everywhere": supported values: "Cluster", "Namespaced"');
    expect(causes).toContain('spec.versions[1].schema.openAPIV3Schema: Required value: schemas are required');
    expect(causes).toContain('spec.versions: Invalid value: ["v1","v2"]: must have exactly one version marked as storage version');
    expect(causes).toContain('spec.conversion.webhook: Required value: required when strategy is set to Webhook');
  });

  test('a schema that is not structural is refused with the reference causes', async () => {
    const r = await srv.json('POST', CRDS, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'loose.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'loose', singular: 'loose', kind: 'Loose' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  metadata: { type: 'object', properties: { labels: { type: 'object' } } },
                  spec: {
                    properties: { items: { type: 'array' }, port: { anyOf: [{ type: 'integer' }, { type: 'boolean' }] } },
                  },
                },
              },
            },
          },
        ],
      },
    });
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    const S = 'spec.validation.openAPIV3Schema';
    expect(r.body.details.causes).toEqual([
      {
        reason: 'FieldValueForbidden',
        message: 'Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified',
        field: `${S}.properties[metadata]`,
      },
      {
        reason: 'FieldValueRequired',
        message: 'Required value: must be specified',
        field: `${S}.properties[spec].properties[items].items`,
      },
      {
        reason: 'FieldValueForbidden',
        message: 'Forbidden: must be empty to be structural',
        field: `${S}.properties[spec].properties[port].anyOf[0].type`,
      },
      {
        reason: 'FieldValueForbidden',
        message: 'Forbidden: must be empty to be structural',
        field: `${S}.properties[spec].properties[port].anyOf[1].type`,
      },
      {
        reason: 'FieldValueRequired',
        message: 'Required value: must not be empty for specified object fields',
        field: `${S}.properties[spec].properties[port].type`,
      },
      {
        reason: 'FieldValueRequired',
        message: 'Required value: must not be empty for specified object fields',
        field: `${S}.properties[spec].type`,
      },
    ]);
    expect((await srv.json('GET', `${CRDS}/loose.example.com`)).status).toBe(404);
  });

  test('a default its own schema refuses is refused', async () => {
    const crd = (spec: Json) => ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'defaulted.defaults.example.com' },
      spec: {
        group: 'defaults.example.com',
        scope: 'Namespaced',
        names: { plural: 'defaulted', singular: 'defaulted', kind: 'Defaulted' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
      },
    });
    const r = await srv.json(
      'POST',
      CRDS,
      crd({
        type: 'object',
        properties: {
          replicas: { type: 'integer', default: 'two' },
          mode: { type: 'string', enum: ['fast', 'safe'], default: 'slow' },
          limits: { type: 'object', properties: { cpu: { type: 'string' } }, default: { cpu: '1', memory: '1Gi' } },
        },
      }),
    );
    expect(r.status).toBe(422);
    const S = 'spec.validation.openAPIV3Schema.properties[spec].properties';
    expect(r.body.message).toBe(
      'CustomResourceDefinition.apiextensions.k8s.io "defaulted.defaults.example.com" is invalid: [' +
        `${S}[replicas].default: Invalid value: "string":  in body must be of type integer: "string", ` +
        `${S}[mode].default: Unsupported value: "slow": supported values: "fast", "safe", ` +
        `${S}[limits].default: Invalid value: map[string]interface {}{"cpu":"1", "memory":"1Gi"}: must not have unknown fields]`,
    );
    // The same CRD with defaults its schema accepts is created, and its objects are defaulted.
    const ok = await srv.json(
      'POST',
      CRDS,
      crd({
        type: 'object',
        properties: { replicas: { type: 'integer', default: 2 }, mode: { type: 'string', enum: ['fast', 'safe'], default: 'safe' } },
      }),
    );
    expect(ok.status).toBe(201);
    const path = '/apis/defaults.example.com/v1/namespaces/default/defaulted';
    await until(
      () => srv.json('GET', path),
      (r) => r.status === 200,
    );
    const o = await srv.json('POST', path, { apiVersion: 'defaults.example.com/v1', kind: 'Defaulted', metadata: { name: 'd' }, spec: {} });
    expect(o.body.spec).toEqual({ replicas: 2, mode: 'safe' });
  });

  test('discovery, api-resources and explain know the kind', async () => {
    const d = await srv.json('GET', '/apis/example.com/v1');
    expect(d.body.resources.map((r: Json) => r.name).sort()).toEqual(['widgets', 'widgets/scale', 'widgets/status']);
    const main = d.body.resources.find((r: Json) => r.name === 'widgets');
    expect(main).toMatchObject({ kind: 'Widget', namespaced: true, singularName: 'widget', shortNames: ['wd'], categories: ['all'] });
    const groups = await srv.json('GET', '/apis');
    expect(groups.body.groups.some((g: Json) => g.name === 'example.com')).toBe(true);
    const ar = srv.kubectl(['api-resources', '--api-group=example.com', '--no-headers']);
    expect(ar.stdout).toMatch(/^widgets\s+wd\s+example\.com\/v1\s+true\s+Widget/m);
    const ex = srv.kubectl(['explain', 'widgets.spec']);
    expect(ex.code).toBe(0);
    expect(ex.stdout).toContain('size\t<integer>');
    expect(ex.stdout).toContain('color\t<string>');
  });
});

describe('custom resources', () => {
  test('create: defaults, pruning with a warning, preserved fields, int-or-string', async () => {
    const r = await srv.json('POST', W, widget('w1', { size: 3, unknown: 1, extra: { any: { deep: [1, 2] } }, amount: '10%' }));
    expect(r.status).toBe(201);
    expect(r.body.spec).toEqual({ size: 3, color: 'red', extra: { any: { deep: [1, 2] } }, amount: '10%' });
    expect(r.headers.get('warning')).toBe('299 - "unknown field \\"spec.unknown\\""');
    const strict = await srv.json('POST', `${W}?fieldValidation=Strict`, widget('w-strict', { size: 3, unknown: 1 }));
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe(
      'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.unknown"',
    );
  });

  test("a body of another kind: 422 kind must be Widget (the reference's customResourceValidator)", async () => {
    const r = await srv.json('POST', W, { ...widget('w-kind', { size: 1 }), kind: 'Gadget' });
    expect(r.status).toBe(422);
    expect(r.body.message).toBe('Widget.example.com "w-kind" is invalid: kind: Invalid value: "Gadget": must be Widget');
    expect((await srv.json('GET', `${W}/w-kind`)).status).toBe(404);
  });

  test('validation against the schema: 422 with one cause per problem', async () => {
    const r = await srv.json('POST', W, widget('bad', { size: 'three', color: 'green', tags: ['a', 'b', 'c', 'd'], amount: 1.5 }));
    expect(r.status).toBe(422);
    expect(r.body.message).toStartWith('Widget.example.com "bad" is invalid: [');
    expect(r.body.details.causes).toEqual([
      {
        reason: 'FieldValueTypeInvalid',
        // kube-openapi names the JSON type found as the bad value, not the value itself.
        message: 'Invalid value: "string": spec.size in body must be of type integer: "string"',
        field: 'spec.size',
      },
      { reason: 'FieldValueNotSupported', message: 'Unsupported value: "green": supported values: "red", "blue"', field: 'spec.color' },
      { reason: 'FieldValueTooMany', message: 'Too many: 4: must have at most 3 items', field: 'spec.tags' },
      {
        reason: 'FieldValueTypeInvalid',
        message: 'Invalid value: "number": spec.amount in body must be of type integer,string: "number"',
        field: 'spec.amount',
      },
    ]);
    const missing = await srv.json('POST', W, widget('bad2', { color: 'blue' }));
    expect(missing.body.details.causes).toEqual([{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.size' }]);
    const big = await srv.json('POST', W, widget('bad3', { size: 11 }));
    expect(big.body.message).toBe(
      'Widget.example.com "bad3" is invalid: spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10',
    );
    const dup = await srv.json('POST', W, widget('bad4', { size: 1, ports: [{ name: 'a' }, { name: 'a', port: 2 }] }));
    expect(dup.body.details.causes).toEqual([
      { reason: 'FieldValueDuplicate', message: 'Duplicate value: {"name":"a"}', field: 'spec.ports[1]' },
    ]);
  });

  test('status subresource: the main resource ignores status, /status ignores spec', async () => {
    await srv.json('POST', W, widget('s1', { size: 2 }));
    const put = await srv.json('PUT', `${W}/s1`, { ...widget('s1', { size: 4 }), status: { ready: true } });
    expect(put.status).toBe(200);
    expect(put.body.spec.size).toBe(4);
    expect(put.body.status).toBeUndefined();
    const st = await srv.json('PUT', `${W}/s1/status`, { ...widget('s1', { size: 9 }), status: { ready: true } });
    expect(st.status).toBe(200);
    expect(st.body.spec.size).toBe(4);
    expect(st.body.status).toEqual({ ready: true });
    expect(st.body.metadata.generation).toBe(2);
  });

  test('scale subresource through the CRD paths: kubectl scale', async () => {
    await srv.json('POST', W, widget('sc', { size: 1, replicas: 1 }));
    await srv.json('PUT', `${W}/sc/status`, { ...widget('sc', { size: 1, replicas: 1 }), status: { replicas: 1, selector: 'app=sc' } });
    const s = await srv.json('GET', `${W}/sc/scale`);
    expect(s.body).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      spec: { replicas: 1 },
      status: { replicas: 1, selector: 'app=sc' },
    });
    const k = srv.kubectl(['scale', 'widget', 'sc', '--replicas=4']);
    expect(k.code).toBe(0);
    expect(k.stdout).toBe('widget.example.com/sc scaled\n');
    expect((await srv.json('GET', `${W}/sc`)).body.spec.replicas).toBe(4);
  });

  test('patches: merge and JSON patch; strategic merge patch is 415; server-side apply with list-map keys and two managers', async () => {
    await srv.json('POST', W, widget('p1', { size: 1, ports: [{ name: 'http', port: 80 }] }));
    const merge = await srv.json('PATCH', `${W}/p1`, { spec: { size: 5 } }, { 'content-type': 'application/merge-patch+json' });
    expect(merge.body.spec.size).toBe(5);
    const jp = await srv.json('PATCH', `${W}/p1`, [{ op: 'add', path: '/spec/tags', value: ['x'] }], {
      'content-type': 'application/json-patch+json',
    });
    expect(jp.body.spec.tags).toEqual(['x']);
    const smp = await srv.json('PATCH', `${W}/p1`, { spec: { size: 6 } }, { 'content-type': 'application/strategic-merge-patch+json' });
    expect(smp.status).toBe(415);
    expect(smp.body.reason).toBe('UnsupportedMediaType');
    const apply = (manager: string, ports: Json[]) =>
      srv.json(
        'PATCH',
        `${W}/applied?fieldManager=${manager}`,
        { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'applied' }, spec: { size: 1, ports } },
        { 'content-type': 'application/apply-patch+yaml' },
      );
    expect((await apply('one', [{ name: 'http', port: 80 }])).status).toBe(201);
    // A second manager owns another entry of the map list: both stay.
    const two = await srv.json(
      'PATCH',
      `${W}/applied?fieldManager=two`,
      { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'applied' }, spec: { ports: [{ name: 'https', port: 443 }] } },
      { 'content-type': 'application/apply-patch+yaml' },
    );
    expect(two.status).toBe(200);
    expect(two.body.spec.ports).toEqual([
      { name: 'http', port: 80 },
      { name: 'https', port: 443 },
    ]);
    // The first manager changing the port the second does not own: no conflict.
    const again = await apply('one', [{ name: 'http', port: 8080 }]);
    expect(again.status).toBe(200);
    expect(again.body.spec.ports).toEqual([
      { name: 'http', port: 8080 },
      { name: 'https', port: 443 },
    ]);
    // Taking the other manager's field conflicts.
    const conflict = await apply('one', [
      { name: 'http', port: 8080 },
      { name: 'https', port: 8443 },
    ]);
    expect(conflict.status).toBe(409);
  });

  test('kubectl: get with printer columns, short name and category, describe, scale-free edit via patch, delete', async () => {
    await srv.json('POST', W, widget('k1', { size: 7, color: 'blue' }));
    const get = srv.kubectl(['get', 'widgets', 'k1']);
    expect(get.code).toBe(0);
    expect(get.stdout).toMatch(/^NAME\s+SIZE\s+COLOR\s+AGE\nk1\s+7\s+blue\s+\d+s\n$/);
    expect(srv.kubectl(['get', 'wd', 'k1', '-o', 'jsonpath={.spec.size}']).stdout).toBe('7');
    expect(srv.kubectl(['get', 'all', '-n', 'default']).stdout).toContain('widget.example.com/k1');
    const d = srv.kubectl(['describe', 'widget', 'k1']);
    expect(d.code).toBe(0);
    expect(d.stdout).toMatch(/Kind:\s+Widget/);
    const p = srv.kubectl(['patch', 'widget', 'k1', '--type=merge', '-p', '{"spec":{"size":8}}']);
    expect(p.code).toBe(0);
    expect(srv.kubectl(['delete', 'widget', 'k1']).code).toBe(0);
    expect((await srv.json('GET', `${W}/k1`)).status).toBe(404);
  });

  test('watch sees custom resources; field and label selectors; Table for custom resources', async () => {
    const ctl = new AbortController();
    const res = await srv.fetch(`${W}?watch=true&labelSelector=app%3Dwatched`, { signal: ctl.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await srv.json('POST', W, { ...widget('watched', { size: 1 }), metadata: { name: 'watched', labels: { app: 'watched' } } });
    let text = '';
    while (!text.includes('\n')) text += new TextDecoder().decode((await reader.read()).value);
    ctl.abort();
    const ev = JSON.parse(text.split('\n')[0] as string);
    expect(ev.type).toBe('ADDED');
    expect(ev.object.metadata.name).toBe('watched');
    const table = await srv.json('GET', `${W}?fieldSelector=metadata.name%3Dwatched`, undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    expect(table.body.columnDefinitions.map((c: Json) => c.name)).toEqual(['Name', 'Size', 'Color', 'Age']);
    expect(table.body.rows.map((r: Json) => r.cells.slice(0, 3))).toEqual([['watched', 1, 'red']]);
  });

  test('garbage collection follows owner references to custom resources', async () => {
    const owner = await srv.json('POST', W, widget('owner', { size: 1 }));
    const ref = { apiVersion: 'example.com/v1', kind: 'Widget', name: 'owner', uid: owner.body.metadata.uid };
    const cm = await srv.json('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'owned', ownerReferences: [ref] } });
    expect(cm.status).toBe(201);
    expect((await srv.json('DELETE', `${W}/owner`)).status).toBe(200);
    const gone = await until(
      () => srv.json('GET', '/api/v1/namespaces/default/configmaps/owned'),
      (r) => r.status === 404,
      5000,
    );
    expect(gone.status).toBe(404);
  });

  test('a client-node informer follows a custom resource', async () => {
    const r = await runClient(
      srv,
      `
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const seen = [];
    const informer = k8s.makeInformer(kc, '/apis/example.com/v1/namespaces/default/widgets',
      () => custom.listNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets' }));
    informer.on('add', (o) => seen.push('add ' + o.metadata.name));
    informer.on('update', (o) => seen.push('update ' + o.metadata.name + ' ' + o.spec.size));
    await informer.start();
    await custom.createNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets',
      body: { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'informed' }, spec: { size: 2 } } });
    await custom.patchNamespacedCustomObject({ group: 'example.com', version: 'v1', namespace: 'default', plural: 'widgets', name: 'informed',
      body: { spec: { size: 3 } } }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch));
    for (let i = 0; i < 100 && !seen.includes('update informed 3'); i++) await new Promise((r) => setTimeout(r, 50));
    await informer.stop();
    return seen.filter((s) => s.includes('informed'));
  `,
    );
    expect(r).toEqual(['add informed', 'update informed 3']);
  }, 30_000);
});

describe('validation rules (x-kubernetes-validations)', () => {
  const RULES = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'ranges.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'ranges', singular: 'range', kind: 'Range' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              'x-kubernetes-validations': [{ rule: "self.metadata.name.startsWith('r-')", message: 'names start with r-' }],
              properties: {
                spec: {
                  type: 'object',
                  'x-kubernetes-validations': [
                    { rule: 'self.min <= self.max', messageExpression: "'min ' + string(self.min) + ' is above max ' + string(self.max)" },
                    { rule: 'self.max - self.min <= 100', reason: 'FieldValueForbidden', fieldPath: '.max', message: 'too wide' },
                  ],
                  properties: {
                    min: { type: 'integer' },
                    max: { type: 'integer' },
                    mode: {
                      type: 'string',
                      'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'mode is immutable' }],
                    },
                    labels: {
                      type: 'array',
                      items: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.size() <= 5' }] },
                    },
                    owner: {
                      type: 'string',
                      'x-kubernetes-validations': [
                        {
                          rule: "!oldSelf.hasValue() || oldSelf.value() == '' || self == oldSelf.value()",
                          optionalOldSelf: true,
                          message: 'owner is set once',
                        },
                      ],
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
  const R = '/apis/example.com/v1/namespaces/default/ranges';
  const range = (name: string, spec: Json): Json => ({ apiVersion: 'example.com/v1', kind: 'Range', metadata: { name }, spec });

  beforeAll(async () => {
    expect((await srv.json('POST', CRDS, RULES)).status).toBe(201);
    await until(
      () => srv.json('GET', R),
      (r) => r.status === 200,
    );
  });

  test('rules decide with their messages, reasons and field paths', async () => {
    expect((await srv.json('POST', R, range('r-ok', { min: 1, max: 5, mode: 'a' }))).status).toBe(201);
    const bad = await srv.json('POST', R, range('r-bad', { min: 7, max: 5, labels: ['ok', 'toolong'] }));
    expect(bad.status).toBe(422);
    expect(bad.body.details.causes).toEqual([
      { reason: 'FieldValueInvalid', message: 'Invalid value: "object": min 7 is above max 5', field: 'spec' },
      { reason: 'FieldValueInvalid', message: 'Invalid value: "string": failed rule: self.size() <= 5', field: 'spec.labels[1]' },
    ]);
    const wide = await srv.json('POST', R, range('r-wide', { min: 1, max: 500 }));
    expect(wide.body.details.causes).toEqual([{ reason: 'FieldValueForbidden', message: 'Forbidden: too wide', field: 'spec.max' }]);
    const root = await srv.json('POST', R, range('bad-name', { min: 1, max: 2 }));
    expect(root.body.details.causes).toEqual([
      { reason: 'FieldValueInvalid', message: 'Invalid value: "object": names start with r-', field: '' },
    ]);
  });

  test('transition rules compare with the stored object; optionalOldSelf rules run on create too', async () => {
    expect((await srv.json('POST', R, range('r-t', { min: 1, max: 2, mode: 'a', owner: 'me' }))).status).toBe(201);
    const change = await srv.json('PATCH', `${R}/r-t`, { spec: { mode: 'b' } }, { 'content-type': 'application/merge-patch+json' });
    expect(change.status).toBe(422);
    expect(change.body.message).toBe('Range.example.com "r-t" is invalid: spec.mode: Invalid value: "string": mode is immutable');
    const owner = await srv.json('PATCH', `${R}/r-t`, { spec: { owner: 'you' } }, { 'content-type': 'application/merge-patch+json' });
    expect(owner.body.message).toBe('Range.example.com "r-t" is invalid: spec.owner: Invalid value: "string": owner is set once');
    const ok = await srv.json('PATCH', `${R}/r-t`, { spec: { max: 3 } }, { 'content-type': 'application/merge-patch+json' });
    expect(ok.status).toBe(200);
  });

  test('a rule that does not compile refuses the CRD', async () => {
    const bad: Json = structuredClone(RULES);
    bad.metadata.name = 'broken.example.com';
    bad.spec.names = { plural: 'broken', singular: 'broken', kind: 'Broken' };
    bad.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = [
      { rule: 'self.min <=', messageExpression: '' } as Json,
    ];
    const r = await srv.json('POST', CRDS, bad);
    expect(r.status).toBe(422);
    expect(r.body.details.causes[0].field).toBe('spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule');
    expect(r.body.details.causes[0].message).toStartWith(
      'Invalid value: apiextensions.ValidationRule{Rule:"self.min <=", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ',
    );
  });
});

describe('validation rules on set and map lists (x-kubernetes-list-type)', () => {
  const BAGS = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'bags.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'bags', singular: 'bag', kind: 'Bag' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  'x-kubernetes-validations': [{ rule: "self.tags == ['b', 'a']", message: 'tags are a and b' }],
                  properties: {
                    tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
                    labels: {
                      type: 'array',
                      'x-kubernetes-list-type': 'set',
                      items: { type: 'string' },
                      'x-kubernetes-validations': [{ rule: 'oldSelf + self == self', message: 'labels may only be added' }],
                    },
                    ports: {
                      type: 'array',
                      'x-kubernetes-list-type': 'map',
                      'x-kubernetes-list-map-keys': ['name'],
                      items: {
                        type: 'object',
                        required: ['name'],
                        properties: { name: { type: 'string' }, port: { type: 'integer' } },
                      },
                      'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'ports are immutable' }],
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
  const B = '/apis/example.com/v1/namespaces/default/bags';
  const bag = (name: string, spec: Json): Json => ({ apiVersion: 'example.com/v1', kind: 'Bag', metadata: { name }, spec });
  const merge = { 'content-type': 'application/merge-patch+json' };

  beforeAll(async () => {
    expect((await srv.json('POST', CRDS, BAGS)).status).toBe(201);
    await until(
      () => srv.json('GET', B),
      (r) => r.status === 200,
    );
  });

  test('a set compares regardless of order; a map list by key; + is a union', async () => {
    const ports = [
      { name: 'http', port: 80 },
      { name: 'https', port: 443 },
    ];
    expect((await srv.json('POST', B, bag('b1', { tags: ['a', 'b'], labels: ['x'], ports }))).status).toBe(201);
    const bad = await srv.json('POST', B, bag('b2', { tags: ['a', 'c'] }));
    expect(bad.status).toBe(422);
    expect(bad.body.message).toBe('Bag.example.com "b2" is invalid: spec: Invalid value: "object": tags are a and b');
    // the same ports in another order, one label added (before the old one)
    const reordered = await srv.json('PATCH', `${B}/b1`, { spec: { ports: ports.toReversed(), labels: ['y', 'x'] } }, merge);
    expect(reordered.status).toBe(200);
    const changed = await srv.json('PATCH', `${B}/b1`, { spec: { ports: [{ name: 'http', port: 8080 }, ports[1]] } }, merge);
    expect(changed.status).toBe(422);
    expect(changed.body.message).toBe('Bag.example.com "b1" is invalid: spec.ports: Invalid value: "array": ports are immutable');
    const removed = await srv.json('PATCH', `${B}/b1`, { spec: { labels: ['y'] } }, merge);
    expect(removed.status).toBe(422);
    expect(removed.body.message).toBe('Bag.example.com "b1" is invalid: spec.labels: Invalid value: "array": labels may only be added');
  });
});

describe('a schema preserving unknown fields at its root (OpenAPI as kubectl validates with it)', () => {
  const BLOBS = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: blobs.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: blobs, singular: blob, kind: Blob}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
        properties:
          spec:
            type: object
            description: What a blob should be.
            properties:
              size: {type: integer, description: Size of the blob in bytes.}
              labels:
                type: object
                nullable: true
                additionalProperties: {type: string}
              any:
                type: object
                x-kubernetes-preserve-unknown-fields: true
                properties:
                  known: {type: string}
`;
  // Fields the schema does not name, at the root (where they are preserved).
  const LIST = `apiVersion: v1
kind: List
items:
- apiVersion: example.com/v1
  kind: Blob
  metadata: {name: blob-a}
  spec: {size: 1}
  extra: {anything: [1, 2]}
- apiVersion: example.com/v1
  kind: Blob
  metadata: {name: blob-b}
  data: hello
`;

  beforeAll(async () => {
    const k = srv.kubectl(['apply', '-f', '-'], BLOBS);
    expect(k.stderr).toBe('');
    await until(
      () => srv.json('GET', '/apis/example.com/v1/blobs'),
      (r) => r.status === 200,
    );
  });

  test('v2 publishes the kind as a bare object (kubectl validates nothing of it); v3 keeps the whole schema', async () => {
    const v2: Json = await (await srv.fetch('/openapi/v2', { headers: { accept: 'application/json' } })).json();
    const gvk = [{ group: 'example.com', kind: 'Blob', version: 'v1' }];
    expect(v2.definitions['com.example.v1.Blob']).toEqual({
      type: 'object',
      'x-svc-group-version-kind': gvk,
      'x-kubernetes-group-version-kind': gvk,
    });
    const v3: Json = await (await srv.fetch('/openapi/v3/apis/example.com/v1')).json();
    const blob = v3.components.schemas['com.example.v1.Blob'];
    expect(blob['x-kubernetes-preserve-unknown-fields']).toBe(true);
    expect(Object.keys(blob.properties).sort()).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
    expect(blob.properties.spec.properties.any.properties.known).toEqual({ type: 'string' });
    expect(blob.properties.spec.properties.labels.nullable).toBe(true);
    // The schema's own descriptions are published (kubectl explain reads v3).
    expect(blob.properties.spec.description).toBe('What a blob should be.');
    expect(blob.properties.spec.properties.size).toEqual({ description: 'Size of the blob in bytes.', type: 'integer' });
    const ex = srv.kubectl(['explain', 'blobs.spec.size']);
    expect(ex.stderr).toBe('');
    expect(ex.stdout.replace(/\s+/g, ' ')).toContain('FIELD: size <integer> DESCRIPTION: Size of the blob in bytes.');
  });

  test('kubectl apply -f of a List with fields the schema does not name creates both objects; --validate=strict too', async () => {
    const file = path.join(dataDir, 'blobs.yaml');
    fs.writeFileSync(file, LIST);
    const r = srv.kubectl(['apply', '-f', file]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('blob.example.com/blob-a created\nblob.example.com/blob-b created\n');
    const strict = srv.kubectl(['apply', '--validate=strict', '-f', file]);
    expect(strict.stderr).toBe('');
    expect(strict.stdout).toBe('blob.example.com/blob-a unchanged\nblob.example.com/blob-b unchanged\n');
    const a = await srv.json('GET', '/apis/example.com/v1/namespaces/default/blobs/blob-a');
    expect(a.body).toMatchObject({ spec: { size: 1 }, extra: { anything: [1, 2] } });
    const b = await srv.json('GET', '/apis/example.com/v1/namespaces/default/blobs/blob-b');
    expect(b.body.data).toBe('hello');
  });
});

describe('scope, names, deletion, restart', () => {
  test('a cluster-scoped custom resource', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'regions.geo.example.com' },
      spec: {
        group: 'geo.example.com',
        scope: 'Cluster',
        names: { plural: 'regions', singular: 'region', kind: 'Region' },
        versions: [
          {
            name: 'v1alpha1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { zone: { type: 'string' } } } } },
            },
          },
        ],
      },
    };
    expect((await srv.json('POST', CRDS, crd)).status).toBe(201);
    const path = '/apis/geo.example.com/v1alpha1/regions';
    await until(
      () => srv.json('GET', path),
      (r) => r.status === 200,
    );
    const r = await srv.json('POST', path, {
      apiVersion: 'geo.example.com/v1alpha1',
      kind: 'Region',
      metadata: { name: 'eu' },
      spec: { zone: 'a' },
    });
    expect(r.status).toBe(201);
    expect(r.body.metadata.namespace).toBeUndefined();
    expect(srv.kubectl(['get', 'regions', '--no-headers']).stdout).toMatch(/^eu\s+\d+s$/m);
  });

  test('two versions with None conversion: one set of objects, each answer in the version asked for', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'things.multi.example.com' },
      spec: {
        group: 'multi.example.com',
        scope: 'Namespaced',
        names: { plural: 'things', singular: 'thing', kind: 'Thing' },
        versions: [
          {
            name: 'v1beta1',
            served: true,
            storage: false,
            deprecated: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    };
    expect((await srv.json('POST', CRDS, crd)).status).toBe(201);
    const B = '/apis/multi.example.com/v1beta1/namespaces/default/things';
    const V = '/apis/multi.example.com/v1/namespaces/default/things';
    await until(
      () => srv.json('GET', B),
      (r) => r.status === 200,
    );
    const c = await srv.json('POST', B, { apiVersion: 'multi.example.com/v1beta1', kind: 'Thing', metadata: { name: 't' }, x: 1 });
    expect(c.status).toBe(201);
    expect(c.body.apiVersion).toBe('multi.example.com/v1beta1');
    expect((await srv.json('GET', `${V}/t`)).body.apiVersion).toBe('multi.example.com/v1');
    expect((await srv.json('GET', V)).body.items.map((i: Json) => i.apiVersion)).toEqual(['multi.example.com/v1']);
    const p = await srv.json('PATCH', `${B}/t`, { x: 2 }, { 'content-type': 'application/merge-patch+json' });
    expect(p.status).toBe(200);
    expect(p.body.apiVersion).toBe('multi.example.com/v1beta1');
    expect((await srv.json('GET', `${V}/t`)).body.x).toBe(2);
    // The deprecated version warns on every answer (the reference's default text), errors too; v1 does not.
    expect(c.headers.get('warning')).toBe('299 - "multi.example.com/v1beta1 Thing is deprecated"');
    expect((await srv.json('GET', `${B}/missing`)).headers.get('warning')).toBe('299 - "multi.example.com/v1beta1 Thing is deprecated"');
    expect((await srv.json('GET', `${V}/t`)).headers.get('warning')).toBeNull();
    const k = srv.kubectl(['get', 'things.v1beta1.multi.example.com', 't']);
    expect(k.stderr).toContain('Warning: multi.example.com/v1beta1 Thing is deprecated');
    const metrics = await (await srv.fetch('/metrics')).text();
    expect(metrics).toContain(
      'apiserver_requested_deprecated_apis{group="multi.example.com",removed_release="",resource="things",subresource="",version="v1beta1"} 1',
    );
    const d = await srv.json('GET', '/apis/multi.example.com');
    // Versions in Kubernetes priority order: v1 preferred.
    expect(d.body.versions.map((v: Json) => v.version)).toEqual(['v1', 'v1beta1']);
    expect(d.body.preferredVersion.version).toBe('v1');
  });

  test('a CRD whose kind another CRD of the group serves is not accepted', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'gizmos.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'gizmos', singular: 'gizmo', kind: 'Widget' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
      },
    };
    expect((await srv.json('POST', CRDS, crd)).status).toBe(201);
    const r = await until(
      () => srv.json('GET', `${CRDS}/gizmos.example.com`),
      (r) => (r.body.status?.conditions ?? []).length === 2,
    );
    expect(r.body.status.conditions.map((c: Json) => [c.type, c.status, c.reason, c.message])).toEqual([
      ['NamesAccepted', 'False', 'NameConflict', '"Widget" is already in use'],
      ['Established', 'False', 'NotAccepted', 'not all names are accepted'],
    ]);
    expect((await srv.json('GET', '/apis/example.com/v1/namespaces/default/gizmos')).status).toBe(404);
  });

  test('deleting a CRD deletes its custom resources, then the API', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'temps.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'temps', singular: 'temp', kind: 'Temp' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    };
    expect((await srv.json('POST', CRDS, crd)).status).toBe(201);
    const p = '/apis/example.com/v1/namespaces/default/temps';
    await until(
      () => srv.json('GET', p),
      (r) => r.status === 200,
    );
    for (let i = 0; i < 5; i++)
      await srv.json('POST', p, { apiVersion: 'example.com/v1', kind: 'Temp', metadata: { name: `t${i}` }, data: i });
    expect((await srv.json('GET', p)).body.items.length).toBe(5);
    const del = await srv.json('DELETE', `${CRDS}/temps.example.com`);
    expect(del.status).toBe(200);
    expect(del.body.metadata.finalizers).toEqual(['customresourcecleanup.apiextensions.k8s.io']);
    expect(del.body.status.conditions.find((c: Json) => c.type === 'Terminating')).toMatchObject({
      status: 'True',
      reason: 'InstanceDeletionPending',
    });
    const gone = await until(
      () => srv.json('GET', `${CRDS}/temps.example.com`),
      (r) => r.status === 404,
    );
    expect(gone.status).toBe(404);
    expect((await srv.json('GET', p)).status).toBe(404);
    const d = await srv.json('GET', '/apis/example.com/v1');
    expect(d.body.resources.map((r: Json) => r.name)).not.toContain('temps');
    // Nothing of them is left in the store: a new CRD of the same name starts empty.
    expect((await srv.json('POST', CRDS, crd)).status).toBe(201);
    const again = await until(
      () => srv.json('GET', p),
      (r) => r.status === 200,
    );
    expect(again.body.items).toEqual([]);
  });

  test('custom resources survive a restart and are served before /readyz passes', async () => {
    expect(await srv.stop()).toBe(0);
    srv = await startServer({ dataDir });
    const ready = await srv.fetch('/readyz');
    if (ready.status === 200) {
      const r = await srv.json('GET', `${W}/w1`);
      expect(r.status).toBe(200);
      expect(r.body.spec.size).toBe(3);
    }
    const r = await until(
      () => srv.json('GET', `${W}/w1`),
      (r) => r.status === 200,
    );
    expect(r.body.spec).toEqual({ size: 3, color: 'red', extra: { any: { deep: [1, 2] } }, amount: '10%' });
    expect(fs.existsSync(path.join(dataDir, 'admin.kubeconfig'))).toBe(true);
  });
});
