import { describe, expect, test } from 'bun:test';
import protobuf from 'protobufjs';
import { upstreamGroup } from '../api/brand';
import { StatusError } from '../api/status';
import { builtinKinds } from '../kinds/builtin';
import { METRICS_DEFINITIONS } from '../kinds/specs/metrics';
import { ApiRegistry } from '../registry/api-registry';
import type { KindDef } from '../registry/kind';
import { loadDescriptions } from '../schema/descriptions';
import { SchemaSet } from '../schema/engine';
import generated from '../schema/generated/definitions.json';
import { overlays } from '../schema/overlays';
import type { Definitions, Schema } from '../schema/types';
import type { KV } from '../store/types';
import { buildV2, buildV3 } from './openapi/documents';
import { chooseEncoding, OpenApi } from './openapi/handler';
import { groupPart, kindPaths, PATCH_TYPES } from './openapi/paths';
import { swaggerToProto, V2_PROTO_TYPE } from './openapi/proto';
import { describe as describeDef, forKubectlV2, reachable, toOpenApi } from './openapi/schema';

// biome-ignore lint/suspicious/noExplicitAny: walking JSON documents
type Any = any;

const schemas = new SchemaSet({ ...(generated as unknown as Definitions), ...METRICS_DEFINITIONS }, overlays);
const kinds = builtinKinds((n) => {
  const s = schemas.get(n);
  return s?.type === 'object' && s.properties?.spec !== undefined;
});
/** The registry only needs a KV to serve requests; building documents never touches it. */
const api = new ApiRegistry({ kv: {} as KV, schemas, kinds });
const kind = (name: string): KindDef => kinds.find((k) => k.kind === name)!;

describe('toOpenApi', () => {
  const cases: { name: string; s: Schema; v2: Any; v3?: Any }[] = [
    { name: 'ref', s: { type: 'ref', ref: 'a.B' }, v2: { $ref: '#/definitions/a.B' }, v3: { $ref: '#/components/schemas/a.B' } },
    {
      name: 'ref with siblings',
      s: { type: 'ref', ref: 'a.B', patchStrategy: 'retainKeys', default: {} },
      v2: { $ref: '#/definitions/a.B', default: {}, 'x-svc-patch-strategy': 'retainKeys', 'x-kubernetes-patch-strategy': 'retainKeys' },
      v3: {
        allOf: [{ $ref: '#/components/schemas/a.B' }],
        default: {},
        'x-svc-patch-strategy': 'retainKeys',
        'x-kubernetes-patch-strategy': 'retainKeys',
      },
    },
    { name: 'string', s: { type: 'string' }, v2: { type: 'string' } },
    { name: 'format', s: { type: 'integer', format: 'int32' }, v2: { type: 'integer', format: 'int32' } },
    {
      name: 'enum and default',
      s: { type: 'string', enum: ['A', 'B'], default: 'A' },
      v2: { type: 'string', enum: ['A', 'B'], default: 'A' },
    },
    {
      name: 'nullable',
      s: { type: 'string', nullable: true },
      v2: { type: 'string', 'x-nullable': true },
      v3: { type: 'string', nullable: true },
    },
    {
      name: 'int-or-string',
      s: { type: 'int-or-string' },
      v2: { type: 'string', format: 'int-or-string', 'x-svc-int-or-string': true, 'x-kubernetes-int-or-string': true },
    },
    { name: 'quantity', s: { type: 'quantity' }, v2: { type: 'string' } },
    {
      name: 'any',
      s: { type: 'any' },
      v2: { type: 'object', 'x-svc-preserve-unknown-fields': true, 'x-kubernetes-preserve-unknown-fields': true },
    },
    {
      name: 'map',
      s: { type: 'object', additionalProperties: { type: 'string' } },
      v2: { type: 'object', additionalProperties: { type: 'string' } },
    },
    {
      name: 'struct',
      s: {
        type: 'object',
        properties: { a: { type: 'string', protoTag: 1 }, b: { type: 'ref', ref: 'x.Y' } },
        required: ['a'],
        mapType: 'atomic',
        gvk: [{ group: '', version: 'v1', kind: 'Pod' }],
      },
      v2: {
        type: 'object',
        properties: { a: { type: 'string' }, b: { $ref: '#/definitions/x.Y' } },
        required: ['a'],
        'x-svc-group-version-kind': [{ group: '', kind: 'Pod', version: 'v1' }],
        'x-kubernetes-group-version-kind': [{ group: '', kind: 'Pod', version: 'v1' }],
        'x-svc-map-type': 'atomic',
        'x-kubernetes-map-type': 'atomic',
      },
    },
    {
      name: 'embedded, preserving unknown fields',
      s: { type: 'object', embedded: true, preserveUnknown: true },
      v2: {
        type: 'object',
        'x-svc-preserve-unknown-fields': true,
        'x-kubernetes-preserve-unknown-fields': true,
        'x-svc-embedded-type': true,
        'x-kubernetes-embedded-resource': true,
      },
    },
    {
      name: 'list map',
      s: {
        type: 'array',
        items: { type: 'ref', ref: 'c.C' },
        listType: 'map',
        listMapKeys: ['name'],
        patchStrategy: 'merge',
        patchMergeKey: 'name',
      },
      v2: {
        type: 'array',
        items: { $ref: '#/definitions/c.C' },
        'x-svc-list-type': 'map',
        'x-kubernetes-list-type': 'map',
        'x-svc-list-map-keys': ['name'],
        'x-kubernetes-list-map-keys': ['name'],
        'x-svc-patch-merge-key': 'name',
        'x-kubernetes-patch-merge-key': 'name',
        'x-svc-patch-strategy': 'merge',
        'x-kubernetes-patch-strategy': 'merge',
      },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      expect(toOpenApi(c.s, 'v2')).toEqual(c.v2);
      const v3 = c.v3 ?? JSON.parse(JSON.stringify(c.v2).replaceAll('#/definitions/', '#/components/schemas/'));
      expect(toOpenApi(c.s, 'v3')).toEqual(v3);
    });
  }
});

describe('descriptions', () => {
  const doc = { description: 'A pod.', properties: { spec: 'The spec.', name: 'The name.', gone: 'Not in the schema.' } };
  test('the type and its properties get theirs, first; a $ref property is wrapped in allOf in v3 only', () => {
    const o = () => ({ type: 'object', properties: { spec: { $ref: '#/x/Spec' }, name: { type: 'string' }, other: { type: 'string' } } });
    const v2 = describeDef(o(), doc, 'v2');
    expect(JSON.stringify(v2)).toBe(
      JSON.stringify({
        description: 'A pod.',
        type: 'object',
        properties: {
          spec: { description: 'The spec.', $ref: '#/x/Spec' },
          name: { description: 'The name.', type: 'string' },
          other: { type: 'string' },
        },
      }),
    );
    expect((describeDef(o(), doc, 'v3') as Any).properties.spec).toEqual({ description: 'The spec.', allOf: [{ $ref: '#/x/Spec' }] });
    expect(describeDef(o(), undefined, 'v3')).toEqual(o());
  });

  test('the generated data describes the served kinds; v2 documents carry it', () => {
    const docs = loadDescriptions();
    expect(docs['io.svc.api.core.v1.PodStatus']?.properties?.message).toBe(
      'A human readable message indicating details about why the pod is in this condition.',
    );
    const v2: Any = buildV2(schemas, kinds, docs);
    for (const k of kinds) expect(typeof v2.definitions[k.schema].description, k.schema).toBe('string');
    expect((buildV2(schemas, kinds) as Any).definitions['io.svc.api.core.v1.Pod'].description).toBeUndefined();
  });
});

describe('forKubectlV2 (a custom resource in Swagger 2.0, as the reference strips it for kubectl)', () => {
  const P = 'x-kubernetes-preserve-unknown-fields';
  const cases: { name: string; in: Any; out: Any }[] = [
    {
      name: 'a preserving root is a bare object',
      in: {
        type: 'object',
        [P]: true,
        'x-svc-preserve-unknown-fields': true,
        properties: { spec: { type: 'object' } },
        required: ['spec'],
      },
      out: { type: 'object' },
    },
    {
      name: 'a schema without preservation is kept',
      in: { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } }, required: ['spec'] },
      out: { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } }, required: ['spec'] },
    },
    {
      name: 'a nested preserving object loses its properties and type',
      in: { type: 'object', properties: { x: { type: 'object', [P]: true, properties: { a: { type: 'string' } } } } },
      out: { type: 'object', properties: { x: { [P]: true } } },
    },
    {
      name: 'a nested preserving array loses its items and type',
      in: { type: 'object', properties: { x: { type: 'array', [P]: true, items: { type: 'string' } } } },
      out: { type: 'object', properties: { x: { [P]: true } } },
    },
    {
      name: 'a nullable field is untyped and leaves required',
      in: {
        type: 'object',
        properties: { x: { type: 'object', 'x-nullable': true, properties: { a: { type: 'string' } } }, y: { type: 'string' } },
        required: ['x', 'y'],
      },
      out: { type: 'object', properties: { x: {}, y: { type: 'string' } }, required: ['y'] },
    },
    {
      name: 'nullable map values: no required at all',
      in: { type: 'object', additionalProperties: { type: 'string', 'x-nullable': true }, required: ['a'] },
      out: { type: 'object', additionalProperties: {} },
    },
  ];
  for (const c of cases) test(c.name, () => expect(forKubectlV2(structuredClone(c.in))).toEqual(c.out));
});

describe('reachable', () => {
  const set = new SchemaSet({
    'a.A': { type: 'object', properties: { b: { type: 'ref', ref: 'a.B' }, l: { type: 'array', items: { type: 'ref', ref: 'a.C' } } } },
    'a.B': { type: 'object', additionalProperties: { type: 'ref', ref: 'a.A' } },
    'a.C': { type: 'string' },
    'a.D': { type: 'string' },
  });
  test('follows properties, map values and items; tolerates cycles', () => {
    expect(reachable(set, ['a.A'])).toEqual(['a.A', 'a.B', 'a.C']);
    expect(reachable(set, ['a.C'])).toEqual(['a.C']);
  });
  test('an unknown definition is a bug', () => {
    expect(() => reachable(set, ['a.X'])).toThrow(/unknown definition a\.X/);
  });
});

describe('operations', () => {
  test('group part of operation ids', () => {
    expect(['', 'apps', 'networking.svc.io', 'flowcontrol.apiserver.svc.io', 'admissionregistration.svc.io'].map(groupPart)).toEqual([
      'Core',
      'Apps',
      'Networking',
      'FlowcontrolApiserver',
      'Admissionregistration',
    ]);
  });

  test('a namespaced kind with status', () => {
    const items = kindPaths(kind('Pod'));
    const ops = items.flatMap((it) => it.ops.map((o) => [it.path, o.method, o.action, o.operationId]));
    expect(ops).toEqual([
      ['/api/v1/namespaces/{namespace}/pods', 'get', 'list', 'listCoreV1NamespacedPod'],
      ['/api/v1/namespaces/{namespace}/pods', 'post', 'post', 'createCoreV1NamespacedPod'],
      ['/api/v1/namespaces/{namespace}/pods', 'delete', 'deletecollection', 'deleteCoreV1CollectionNamespacedPod'],
      ['/api/v1/namespaces/{namespace}/pods/{name}', 'get', 'get', 'readCoreV1NamespacedPod'],
      ['/api/v1/namespaces/{namespace}/pods/{name}', 'put', 'put', 'replaceCoreV1NamespacedPod'],
      ['/api/v1/namespaces/{namespace}/pods/{name}', 'patch', 'patch', 'patchCoreV1NamespacedPod'],
      ['/api/v1/namespaces/{namespace}/pods/{name}', 'delete', 'delete', 'deleteCoreV1NamespacedPod'],
      ['/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers', 'get', 'get', 'readCoreV1NamespacedPodEphemeralcontainers'],
      ['/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers', 'put', 'put', 'replaceCoreV1NamespacedPodEphemeralcontainers'],
      ['/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers', 'patch', 'patch', 'patchCoreV1NamespacedPodEphemeralcontainers'],
      ['/api/v1/namespaces/{namespace}/pods/{name}/resize', 'get', 'get', 'readCoreV1NamespacedPodResize'],
      ['/api/v1/namespaces/{namespace}/pods/{name}/resize', 'put', 'put', 'replaceCoreV1NamespacedPodResize'],
      ['/api/v1/namespaces/{namespace}/pods/{name}/resize', 'patch', 'patch', 'patchCoreV1NamespacedPodResize'],
      ['/api/v1/namespaces/{namespace}/pods/{name}/status', 'get', 'get', 'readCoreV1NamespacedPodStatus'],
      ['/api/v1/namespaces/{namespace}/pods/{name}/status', 'put', 'put', 'replaceCoreV1NamespacedPodStatus'],
      ['/api/v1/namespaces/{namespace}/pods/{name}/status', 'patch', 'patch', 'patchCoreV1NamespacedPodStatus'],
      ['/api/v1/pods', 'get', 'list', 'listCoreV1PodForAllNamespaces'],
    ]);
    expect(items.map((it) => it.params.map((p) => p.name))).toEqual([
      ['namespace', 'pretty'],
      ['name', 'namespace', 'pretty'],
      ['name', 'namespace', 'pretty'],
      ['name', 'namespace', 'pretty'],
      ['name', 'namespace', 'pretty'],
      ['pretty'],
    ]);
  });

  test('a cluster-scoped kind without status', () => {
    const items = kindPaths(kind('ValidatingAdmissionPolicyBinding'));
    expect(items.map((it) => it.path)).toEqual([
      '/apis/admissionregistration.svc.io/v1/validatingadmissionpolicybindings',
      '/apis/admissionregistration.svc.io/v1/validatingadmissionpolicybindings/{name}',
    ]);
    expect(items[0]!.ops[0]!.operationId).toBe('listAdmissionregistrationV1ValidatingAdmissionPolicyBinding');
  });

  test('deletes answer with the object where the kind returns it', () => {
    const del = (k: string) => kindPaths(kind(k))[1]!.ops.find((o) => o.method === 'delete')!.responses;
    expect(del('ResourceQuota')[0]).toEqual(['200', 'io.svc.api.core.v1.ResourceQuota']);
    expect(del('ConfigMap')[0]).toEqual(['200', 'io.svc.apimachinery.pkg.apis.meta.v1.Status']);
  });
});

/** Every `$ref` in `doc`, as [where, ref]. */
function refs(doc: unknown, where = '#'): [string, string][] {
  if (typeof doc !== 'object' || doc === null) return [];
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries(doc)) {
    // A `$ref` key with a non-string value is a property named "$ref" (JSONSchemaProps has one).
    if (k === '$ref' && typeof v === 'string') out.push([where, v]);
    else out.push(...refs(v, `${where}/${k}`));
  }
  return out;
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

function operations(doc: Any): [string, string, Any][] {
  return Object.entries<Any>(doc.paths).flatMap(([p, item]) =>
    METHODS.filter((m) => item[m]).map((m): [string, string, Any] => [p, m, item[m]]),
  );
}

describe('the v2 document', () => {
  const doc: Any = buildV2(schemas, kinds);

  test('every $ref resolves', () => {
    const bad = refs(doc).filter(([, r]) => !r.startsWith('#/definitions/') || !(r.slice('#/definitions/'.length) in doc.definitions));
    expect(bad).toEqual([]);
  });

  test('every served kind and list has its group-version-kind, core with group ""', () => {
    for (const k of kinds) {
      const gvk = { group: k.group, kind: k.kind, version: k.version };
      expect(doc.definitions[k.schema]['x-kubernetes-group-version-kind']).toContainEqual(gvk);
      expect(doc.definitions[k.schema]['x-svc-group-version-kind']).toContainEqual(gvk);
      if (k.virtual) continue; // access reviews have no list
      const list = k.schema.replace(/[^.]+$/, k.listKind);
      expect(doc.definitions[list]['x-kubernetes-group-version-kind']).toContainEqual({ ...gvk, kind: k.listKind });
    }
    expect(doc.definitions['io.svc.api.core.v1.Pod']['x-kubernetes-group-version-kind']).toEqual([
      { group: '', kind: 'Pod', version: 'v1' },
    ]);
  });

  test('definitions are only what the served kinds reach', () => {
    // With batch/v1 turned off (--runtime-config), its kinds' definitions go.
    const withoutBatch: Any = buildV2(
      schemas,
      kinds.filter((k) => k.group !== 'batch'),
    );
    expect(withoutBatch.definitions['io.svc.api.batch.v1.Job']).toBeUndefined();
    expect(doc.definitions['io.svc.api.batch.v1.Job']).toBeDefined();
    expect(doc.definitions['io.svc.api.core.v1.PodSpec']).toBeDefined();
    expect(doc.definitions['io.svc.apimachinery.pkg.apis.meta.v1.Patch']).toEqual({ type: 'object' });
  });

  test('operations', () => {
    const ops = operations(doc);
    const ids = ops.map(([, , o]) => o.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [p, m, o] of ops) {
      const where = `${m} ${p}`;
      expect(o.responses['200'], where).toBeDefined();
      expect(o.responses['401'], where).toBeDefined();
      if (p.endsWith('/')) continue; // the group/version's resource list (no action, as the reference)
      expect(o['x-kubernetes-action'], where).toBeString();
      expect(o['x-kubernetes-group-version-kind'], where).toContainAllKeys(['group', 'kind', 'version']);
      const query = o.parameters?.filter((x: Any) => x.in === 'query').map((x: Any) => x.name) ?? [];
      if (m === 'post' || m === 'put' || m === 'patch') expect(query, where).toContain('fieldValidation');
      if (m === 'patch') expect(o.consumes).toEqual(PATCH_TYPES);
      if (o['x-kubernetes-action'] === 'list') expect(query).toContain('watch');
    }
    const create = doc.paths['/apis/apps/v1/namespaces/{namespace}/deployments'].post;
    expect(create['x-kubernetes-group-version-kind']).toEqual({ group: 'apps', kind: 'Deployment', version: 'v1' });
    expect(create.parameters[0]).toEqual({
      name: 'body',
      in: 'body',
      required: true,
      schema: { $ref: '#/definitions/io.svc.api.apps.v1.Deployment' },
    });
    expect(Object.keys(create.responses)).toEqual(['200', '201', '202', '401']);
  });
});

describe('the v3 documents', () => {
  for (const g of api.groups()) {
    for (const v of g.versions) {
      test(`${g.group || 'core'}/${v}`, () => {
        const gvKinds = kinds.filter((k) => k.group === g.group && k.version === v);
        const doc: Any = buildV3(schemas, g.group, v, gvKinds);
        const names = doc.components.schemas;
        const bad = refs(doc).filter(
          ([, r]) => !r.startsWith('#/components/schemas/') || !(r.slice('#/components/schemas/'.length) in names),
        );
        expect(bad).toEqual([]);
        for (const name of Object.keys(names)) {
          const pkg = name.match(/^io\.svc\.api\.([^.]+)\./)?.[1];
          // Only this group/version's own kinds, what they use (core types in templates), and meta types.
          if (pkg && pkg !== 'core')
            expect(
              gvKinds.some((k) => k.schema.startsWith(`io.svc.api.${pkg}.`)),
              name,
            ).toBeTrue();
        }
        for (const [p, m, o] of operations(doc)) {
          if (p.endsWith('/')) continue;
          expect(o['x-kubernetes-group-version-kind'].group).toBe(g.group);
          const params = (o.parameters ?? []).filter((x: Any) => x.in === 'query');
          for (const x of params) expect(x.schema.type, x.name).toBeString();
          if (m === 'patch') {
            expect(params.map((x: Any) => x.name)).toContain('fieldValidation');
            expect(Object.keys(o.requestBody.content)).toEqual(PATCH_TYPES);
          }
          expect(Object.keys(o.responses['200'].content)).toContain('application/json');
        }
      });
    }
  }
});

describe('serving', () => {
  const oa = new OpenApi(api, schemas);
  const get = (path: string, headers: Record<string, string> = {}) =>
    oa.handle(path.split('?')[0]!, new URL(`https://x${path}`).searchParams, new Request(`https://x${path}`, { headers }));

  test('v2 with ETag and If-None-Match', async () => {
    const r = get('/openapi/v2');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    const etag = r.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9A-F]{128}"$/);
    expect(((await r.json()) as Any).swagger).toBe('2.0');
    const again = get('/openapi/v2', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.body).toBeNull();
  });

  test('gzip when large and accepted', async () => {
    const r = get('/openapi/v2', { 'accept-encoding': 'gzip' });
    expect(r.headers.get('content-encoding')).toBe('gzip');
    const json = JSON.parse(new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await r.arrayBuffer()))));
    expect(json.swagger).toBe('2.0');
  });

  test('v3 index and documents; hash makes the response immutable; an old hash redirects', async () => {
    const index: Any = await get('/openapi/v3').json();
    // A branded group is published under both its names (its upstream `*.k8s.io` one right after).
    const names = (g: string) => (upstreamGroup(g) === g ? [g] : [g, upstreamGroup(g)]);
    const keys = api.groups().flatMap((g) => names(g.group).flatMap((n) => g.versions.map((v) => (n ? `apis/${n}/${v}` : `api/${v}`))));
    expect(Object.keys(index.paths)).toEqual(keys);
    for (const [key, { serverRelativeURL: url }] of Object.entries<Any>(index.paths)) {
      const r = get(url);
      const bytes = new Uint8Array(await r.arrayBuffer());
      const hash = new Bun.CryptoHasher('sha512').update(bytes).digest('hex').toUpperCase();
      expect(url).toBe(`/openapi/v3/${key}?hash=${hash}`);
      expect(r.headers.get('cache-control')).toBe('public, immutable');
      expect(get(`/openapi/v3/${key}`).headers.get('cache-control')).toBe('no-cache, private');
      const old = get(`/openapi/v3/${key}?hash=ABC`);
      expect(old.status).toBe(301);
      expect(old.headers.get('location')).toBe(url);
    }
  });

  test('unknown paths are 404 Status errors', () => {
    for (const p of ['/openapi/v3/apis/batch/v2', '/openapi/v3/api/v2', '/openapi/v1', '/openapi/v2/x']) {
      expect(() => get(p)).toThrow(StatusError);
      try {
        get(p);
      } catch (e) {
        expect((e as StatusError).code).toBe(404);
      }
    }
  });

  test('content negotiation', () => {
    expect(chooseEncoding(null, true)).toBe('json');
    expect(chooseEncoding('application/json, */*', false)).toBe('json');
    expect(chooseEncoding('application/com.github.proto-openapi.spec.v2@v1.0+protobuf', true)).toBe('proto');
    expect(chooseEncoding('application/com.github.proto-openapi.spec.v2.v1.0+protobuf;q=0.9, application/json;q=0.5', true)).toBe('proto');
    expect(() => chooseEncoding('application/com.github.proto-openapi.spec.v2@v1.0+protobuf', false)).toThrow(/only the following/);
    expect(() => chooseEncoding('text/html', true)).toThrow(StatusError);
    const r = get('/openapi/v2', { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' });
    expect(r.headers.get('content-type')).toBe(V2_PROTO_TYPE);
  });
});

/** The part of gnostic's OpenAPIv2.proto the encoder writes (field numbers as upstream). */
const GNOSTIC_SUBSET = `
syntax = "proto3";
package openapi.v2;
message Any { string yaml = 2; }
message NamedAny { string name = 1; Any value = 2; }
message Info { string title = 1; string version = 2; }
message Document { string swagger = 1; Info info = 2; Paths paths = 8; Definitions definitions = 9;
  repeated SecurityRequirement security = 12; SecurityDefinitions security_definitions = 13; }
message SecurityRequirement { repeated NamedStringArray additional_properties = 1; }
message NamedStringArray { string name = 1; StringArray value = 2; }
message StringArray { repeated string value = 1; }
message SecurityDefinitions { repeated NamedSecurityDefinitionsItem additional_properties = 1; }
message NamedSecurityDefinitionsItem { string name = 1; SecurityDefinitionsItem value = 2; }
message SecurityDefinitionsItem { oneof oneof { ApiKeySecurity api_key_security = 2; } }
message ApiKeySecurity { string type = 1; string name = 2; string in = 3; string description = 4; }
message Paths { repeated NamedPathItem path = 2; }
message NamedPathItem { string name = 1; PathItem value = 2; }
message PathItem { Operation get = 2; Operation put = 3; Operation post = 4; Operation delete = 5; Operation patch = 8;
  repeated ParametersItem parameters = 9; }
message Operation { repeated string tags = 1; string operation_id = 5; repeated string produces = 6; repeated string consumes = 7;
  repeated ParametersItem parameters = 8; Responses responses = 9; repeated string schemes = 10; repeated NamedAny vendor_extension = 13; }
message ParametersItem { oneof oneof { Parameter parameter = 1; } }
message Parameter { oneof oneof { BodyParameter body_parameter = 1; NonBodyParameter non_body_parameter = 2; } }
message BodyParameter { string name = 2; string in = 3; bool required = 4; Schema schema = 5; }
message NonBodyParameter { oneof oneof { QueryParameterSubSchema query_parameter_sub_schema = 3; PathParameterSubSchema path_parameter_sub_schema = 4; } }
message QueryParameterSubSchema { bool required = 1; string in = 2; string name = 4; string type = 6; bool unique_items = 20; }
message PathParameterSubSchema { bool required = 1; string in = 2; string name = 4; string type = 5; bool unique_items = 19; }
message Responses { repeated NamedResponseValue response_code = 1; }
message NamedResponseValue { string name = 1; ResponseValue value = 2; }
message ResponseValue { oneof oneof { Response response = 1; } }
message Response { string description = 1; SchemaItem schema = 2; }
message SchemaItem { oneof oneof { Schema schema = 1; } }
message Definitions { repeated NamedSchema additional_properties = 1; }
message NamedSchema { string name = 1; Schema value = 2; }
message Properties { repeated NamedSchema additional_properties = 1; }
message TypeItem { repeated string value = 1; }
message ItemsItem { repeated Schema schema = 1; }
message AdditionalPropertiesItem { oneof oneof { Schema schema = 1; bool boolean = 2; } }
message Schema { string _ref = 1; string format = 2; string description = 4; Any default = 5; repeated string required = 19; repeated Any enum = 20;
  AdditionalPropertiesItem additional_properties = 21; TypeItem type = 22; ItemsItem items = 23; repeated Schema all_of = 24;
  Properties properties = 25; repeated NamedAny vendor_extension = 31; }
`;

/** Back from the decoded protobuf to Swagger JSON, for the fields the encoder writes. */
function fromProto(d: Any): Any {
  const any = (a: Any) => JSON.parse(a.yaml);
  const exts = (list: Any[] | undefined, o: Any) => {
    for (const e of list ?? []) o[e.name] = any(e.value);
    return o;
  };
  const schema = (s: Any): Any => {
    const o: Any = {};
    if (s._ref) o.$ref = s._ref;
    if (s.description) o.description = s.description;
    if (s.type) o.type = s.type.value[0];
    if (s.format) o.format = s.format;
    if (s.properties)
      o.properties = Object.fromEntries((s.properties.additional_properties ?? []).map((p: Any) => [p.name, schema(p.value)]));
    if (s.additional_properties) o.additionalProperties = schema(s.additional_properties.schema);
    if (s.items) o.items = schema(s.items.schema[0]);
    if (s.required?.length) o.required = s.required;
    if (s.enum?.length) o.enum = s.enum.map(any);
    if (s.default) o.default = any(s.default);
    return exts(s.vendor_extension, o);
  };
  const param = (p: Any): Any => {
    const b = p.parameter.body_parameter;
    if (b) return { name: b.name, in: b.in, required: b.required ?? false, schema: schema(b.schema) };
    const q = p.parameter.non_body_parameter.query_parameter_sub_schema ?? p.parameter.non_body_parameter.path_parameter_sub_schema;
    const o: Any = { name: q.name, in: q.in, type: q.type, uniqueItems: q.unique_items };
    if (q.required) o.required = true;
    return o;
  };
  const op = (o: Any): Any => {
    const out: Any = { operationId: o.operation_id, tags: o.tags, consumes: o.consumes, produces: o.produces, schemes: o.schemes };
    out.responses = Object.fromEntries(
      o.responses.response_code.map((r: Any) => {
        const resp: Any = { description: r.value.response.description };
        if (r.value.response.schema) resp.schema = schema(r.value.response.schema.schema);
        return [r.name, resp];
      }),
    );
    if (o.parameters?.length) out.parameters = o.parameters.map(param);
    return exts(o.vendor_extension, out);
  };
  const paths: Any = {};
  for (const p of d.paths.path) {
    const item: Any = {};
    for (const m of METHODS) if (p.value[m]) item[m] = op(p.value[m]);
    if (p.value.parameters?.length) item.parameters = p.value.parameters.map(param);
    paths[p.name] = item;
  }
  return {
    swagger: d.swagger,
    info: d.info,
    paths,
    definitions: Object.fromEntries(d.definitions.additional_properties.map((n: Any) => [n.name, schema(n.value)])),
    securityDefinitions: Object.fromEntries(
      d.security_definitions.additional_properties.map((n: Any) => [n.name, n.value.api_key_security]),
    ),
    security: d.security.map((r: Any) => Object.fromEntries(r.additional_properties.map((n: Any) => [n.name, n.value.value ?? []]))),
  };
}

test('the v2 protobuf decodes back to the JSON document (descriptions included)', () => {
  const json: Any = buildV2(schemas, kinds, loadDescriptions());
  const Document = protobuf.parse(GNOSTIC_SUBSET, { keepCase: true }).root.lookupType('openapi.v2.Document');
  const decoded = Document.toObject(Document.decode(swaggerToProto(json)), { oneofs: false, defaults: false, arrays: false });
  // Key order differs between the two; compare as JSON values.
  expect(fromProto(decoded)).toEqual(JSON.parse(JSON.stringify(json)));
});

test('building all documents is fast', () => {
  const t0 = performance.now();
  buildV2(schemas, kinds);
  for (const g of api.groups())
    for (const v of g.versions)
      buildV3(
        schemas,
        g.group,
        v,
        api.resources(g.group, v).map((s) => s.def),
      );
  swaggerToProto(buildV2(schemas, kinds));
  // Generous for a shared machine; typically ~40 ms.
  expect(performance.now() - t0).toBeLessThan(1000);
});
