/**
 * /openapi/v2 and /openapi/v3 against the real server process, with the unmodified kubectl:
 * explain (OpenAPI v3, and v2 as protobuf), and server-side field validation detection (kubectl
 * looks for the `fieldValidation` parameter in the group/version's v3 document; without it, it
 * falls back to validating on the client).
 */
import { describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { serverForFile } from './helpers/server';

// biome-ignore lint/suspicious/noExplicitAny: walking JSON documents
type Any = any;

const srv = serverForFile();

interface Served {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

/** The served kinds, from discovery. */
async function served(): Promise<Served[]> {
  const gvs: [string, string][] = [['', 'v1']];
  // Upstream group names (`*.k8s.io`) are discovery aliases of svc groups: OpenAPI describes the svc ones.
  for (const g of (await srv.json('GET', '/apis')).body.groups)
    if (!g.name.endsWith('.k8s.io')) for (const v of g.versions) gvs.push([g.name, v.version]);
  const out: Served[] = [];
  for (const [group, version] of gvs) {
    const list = (await srv.json('GET', group ? `/apis/${group}/${version}` : `/api/${version}`)).body;
    for (const r of list.resources) {
      // Create-only kinds (access reviews) have no item paths: their one operation is checked below.
      if (!r.name.includes('/') && r.verbs.includes('get'))
        out.push({ group, version, kind: r.kind, plural: r.name, namespaced: r.namespaced });
    }
  }
  return out;
}

/** Every `$ref` in `doc`. */
function refs(doc: unknown): string[] {
  if (typeof doc !== 'object' || doc === null) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(doc)) {
    // A `$ref` key with a non-string value is a property named "$ref" (JSONSchemaProps has one).
    if (k === '$ref' && typeof v === 'string') out.push(v);
    else out.push(...refs(v));
  }
  return out;
}

/** Resolves a local JSON pointer (`#/components/schemas/io.svc...`) in `doc`. */
function resolve(doc: Any, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let cur: Any = doc;
  for (const token of ref.slice(2).split('/')) {
    const key = token.replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof cur !== 'object' || cur === null || !(key in cur)) return undefined;
    cur = cur[key];
  }
  return cur;
}

const hasGvk = (schema: Any, s: Served) =>
  (schema?.['x-kubernetes-group-version-kind'] ?? []).some((g: Any) => g.group === s.group && g.version === s.version && g.kind === s.kind);

function itemPath(s: Served): string {
  const gv = s.group ? `/apis/${s.group}/${s.version}` : `/api/${s.version}`;
  return `${gv}${s.namespaced ? '/namespaces/{namespace}' : ''}/${s.plural}/{name}`;
}

describe('kubectl explain', () => {
  test('a field of a core kind', () => {
    const r = srv.kubectl(['explain', 'pods.spec.containers.image']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/KIND:\s+Pod\n/);
    expect(r.stdout).toMatch(/VERSION:\s+v1\n/);
    expect(r.stdout).toContain('FIELD: image <string>');
  });

  test('a kind of a group, with --api-version', () => {
    const r = srv.kubectl(['explain', 'deployments', '--api-version=apps/v1']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/GROUP:\s+apps\n/);
    expect(r.stdout).toMatch(/KIND:\s+Deployment\n/);
    expect(r.stdout).toMatch(/spec\s+<DeploymentSpec>/);
    expect(r.stdout).toMatch(/status\s+<DeploymentStatus>/);
  });

  test('a svc.io group, under both names (kubectl maps plain names to the upstream one)', () => {
    for (const [args, group] of [
      [['explain', 'networkpolicies.spec.ingress'], 'networking\\.k8s\\.io'],
      [['explain', 'networkpolicies.spec.ingress', '--api-version=networking.svc.io/v1'], 'networking\\.svc\\.io'],
    ] as const) {
      const r = srv.kubectl([...args]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`GROUP:\\s+${group}\\n`));
      expect(r.stdout).toContain('FIELD: ingress <[]NetworkPolicyIngressRule>');
      expect(r.stdout).toMatch(/from\s+<\[\]NetworkPolicyPeer>/);
      expect(r.stdout).toMatch(/ports\s+<\[\]NetworkPolicyPort>/);
    }
  });

  test('required fields and enums', () => {
    const r = srv.kubectl(['explain', 'pods.spec.containers.ports']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/containerPort\s+<integer> -required-/);
    expect(r.stdout).toMatch(/protocol\s+<string>\n\s+enum: SCTP, TCP, UDP/);
  });

  test("the reference's descriptions, from OpenAPI v3 and v2 (protobuf)", () => {
    const text = 'A human readable message indicating details about why the pod is in this condition.';
    for (const extra of [[], ['--output=plaintext-openapiv2']]) {
      const r = srv.kubectl(['explain', 'pod.status.message', ...extra]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const out = r.stdout.replace(/\s+/g, ' ');
      expect(out).toContain('FIELD: message <string>');
      expect(out).toContain(`DESCRIPTION: ${text}`);
      expect(r.stdout).not.toContain('<empty>');
    }
    // A type's description (the field is a $ref: kubectl shows the type's) and its fields'.
    const st = srv.kubectl(['explain', 'pod.status']);
    expect(st.stdout.replace(/\s+/g, ' ')).toContain('DESCRIPTION: PodStatus represents information about the status of a pod.');
    expect(st.stdout.replace(/\s+/g, ' ')).toContain(`message <string> ${text}`);
  });

  test('from OpenAPI v2 (protobuf)', () => {
    const r = srv.kubectl(['explain', 'deployments.spec.strategy', '--output=plaintext-openapiv2', '-v=6']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/url="[^"]*\/openapi\/v2[^"]*" status="200 OK"/);
    expect(r.stdout).toMatch(/KIND:\s+Deployment\n/);
    expect(r.stdout).toMatch(/RESOURCE:\s+strategy <Object>/);
    expect(r.stdout).toMatch(/rollingUpdate\s+<Object>/);
  });
});

describe('kubectl detects server-side field validation', () => {
  const deployment = (extra: string) =>
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: strict-d\nspec:\n' +
    extra +
    '  selector:\n    matchLabels: {app: d}\n  template:\n    metadata:\n      labels: {app: d}\n' +
    '    spec:\n      containers:\n      - name: c\n        image: nginx\n';
  const cases = [
    {
      name: 'unknown field in a spec',
      manifest: deployment('  foo: bar\n'),
      field: 'spec.foo',
      url: '/apis/apps/v1/namespaces/default/deployments',
    },
    {
      name: 'top-level unknown field',
      manifest: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: strict-a\nfoo: bar\ndata:\n  a: b\n',
      field: 'foo',
      url: '/api/v1/namespaces/default/configmaps',
    },
    {
      name: 'nested unknown field',
      manifest: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: strict-b\n  foo: bar\n',
      field: 'metadata.foo',
      url: '/api/v1/namespaces/default/configmaps',
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const file = path.join(srv.dataDir, `${c.field}.yaml`);
      fs.writeFileSync(file, c.manifest);
      const r = srv.kubectl(['create', '--validate=strict', '-f', file, '-v=8']);
      expect(r.code).not.toBe(0);
      // The request reached the server with fieldValidation=Strict ...
      expect(r.stderr).toContain(`verb="POST" url="${srv.url}${c.url}?`);
      expect(r.stderr).toMatch(/verb="POST" url="[^"]*\?[^"]*fieldValidation=Strict/);
      // ... and the error is the server's, not kubectl's client-side schema validation.
      expect(r.stderr).toContain(`strict decoding error: unknown field \\"${c.field}\\"`);
      expect(r.stderr).not.toContain('falling back to legacy');
      expect(r.stderr).not.toContain('ValidationError(');
      expect(r.stderr).not.toMatch(/url="[^"]*\/openapi\/v2/);
    });
  }

  test('a valid object is created', () => {
    const file = path.join(srv.dataDir, 'valid.yaml');
    fs.writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: strict-ok\ndata:\n  a: b\n');
    const r = srv.kubectl(['create', '--validate=strict', '-f', file]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('configmap/strict-ok created');
  });
});

describe('/openapi/v2', () => {
  test('JSON with definitions and paths for every served kind', async () => {
    const r = await srv.fetch('/openapi/v2', { headers: { accept: 'application/json' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    const doc: Any = await r.json();
    expect(doc.swagger).toBe('2.0');
    const kinds = await served();
    expect(kinds.length).toBeGreaterThan(10);
    for (const s of kinds) {
      const defs = Object.values<Any>(doc.definitions).filter((d) => hasGvk(d, s));
      expect(defs.length, `${s.group}/${s.version} ${s.kind}`).toBe(1);
      const item = doc.paths[itemPath(s)];
      expect(item, itemPath(s)).toBeDefined();
      for (const m of ['get', 'put', 'patch', 'delete']) {
        expect(item[m]['x-kubernetes-group-version-kind']).toEqual({ group: s.group, kind: s.kind, version: s.version });
      }
      const query = item.patch.parameters.filter((p: Any) => p.in === 'query').map((p: Any) => p.name);
      expect(query).toContain('fieldValidation');
    }
    for (const ref of refs(doc)) expect(resolve(doc, ref), ref).toBeDefined();
    // An access review: create only.
    const review = doc.paths['/apis/authorization.svc.io/v1/selfsubjectaccessreviews'];
    expect(Object.keys(review).filter((k) => k !== 'parameters')).toEqual(['post']);
    expect(doc.paths['/apis/authorization.svc.io/v1/selfsubjectaccessreviews/{name}']).toBeUndefined();
  });

  test("definitions and properties carry the reference's descriptions, links as the reference writes them", async () => {
    const doc: Any = await (await srv.fetch('/openapi/v2', { headers: { accept: 'application/json' } })).json();
    const d = doc.definitions;
    expect(d['io.svc.api.core.v1.PodStatus'].description).toStartWith('PodStatus represents information about the status of a pod.');
    expect(d['io.svc.api.core.v1.PodStatus'].properties.message.description).toBe(
      'A human readable message indicating details about why the pod is in this condition.',
    );
    expect(d['io.svc.api.apps.v1.DeploymentSpec'].properties.replicas.description).toStartWith('Number of desired pods.');
    expect(d['io.svc.apimachinery.pkg.apis.meta.v1.ObjectMeta'].properties.name.description).toContain(
      'https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
    );
    expect(d['io.svc.api.core.v1.Pod'].properties.kind.description).toContain('https://git.k8s.io/community/contributors/');
    const described = Object.values<Any>(d).filter((x) => typeof x.description === 'string').length;
    expect(described / Object.keys(d).length).toBeGreaterThan(0.9);
  });

  test('ETag and If-None-Match', async () => {
    const r = await srv.fetch('/openapi/v2');
    const etag = r.headers.get('etag');
    expect(etag).toMatch(/^"[0-9A-F]{128}"$/);
    await r.arrayBuffer();
    const again = await srv.fetch('/openapi/v2', { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
  });

  test('protobuf for clients that ask for it; 406 for what it cannot give', async () => {
    const pb = await srv.fetch('/openapi/v2', { headers: { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
    expect(pb.status).toBe(200);
    expect(pb.headers.get('content-type')).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    expect(new Uint8Array(await pb.arrayBuffer())[0]).toBe(0x0a); // field 1 (swagger), length-delimited
    const no = await srv.json('GET', '/openapi/v2', undefined, { accept: 'text/html' });
    expect(no.status).toBe(406);
    expect(no.body).toMatchObject({ kind: 'Status', code: 406, reason: 'NotAcceptable' });
  });
});

describe('/openapi/v3', () => {
  test('the index lists every group/version; every document resolves its $refs locally', async () => {
    const kinds = await served();
    // Every group discovery lists, under both its names (a svc.io group's upstream name too).
    const groups = (await srv.json('GET', '/apis')).body.groups as Any[];
    const gvs = new Set(['api/v1', ...groups.flatMap((g) => g.versions.map((v: Any) => `apis/${v.groupVersion}`))]);
    const index = (await srv.json('GET', '/openapi/v3')).body;
    expect(new Set(Object.keys(index.paths))).toEqual(gvs);
    for (const [key, entry] of Object.entries<Any>(index.paths)) {
      expect(entry.serverRelativeURL).toMatch(new RegExp(`^/openapi/v3/${key.replaceAll('.', '\\.')}\\?hash=[0-9A-F]{128}$`));
      const r = await srv.fetch(entry.serverRelativeURL);
      expect(r.status).toBe(200);
      expect(r.headers.get('cache-control')).toBe('public, immutable');
      const doc: Any = await r.json();
      expect(doc.openapi).toBe('3.0.0');
      const all = refs(doc);
      expect(all.length).toBeGreaterThan(0);
      for (const ref of all) {
        expect(ref.startsWith('#/components/schemas/'), ref).toBeTrue();
        expect(resolve(doc, ref), `${key}: ${ref}`).toBeDefined();
      }
      for (const s of kinds.filter((k) => key === (k.group ? `apis/${k.group}/${k.version}` : `api/${k.version}`))) {
        expect(Object.values<Any>(doc.components.schemas).filter((d) => hasGvk(d, s)).length, s.kind).toBe(1);
        const item = doc.paths[itemPath(s)];
        for (const m of ['put', 'patch']) {
          expect(
            item[m].parameters.some((p: Any) => p.in === 'query' && p.name === 'fieldValidation'),
            `${m} ${s.kind}`,
          ).toBeTrue();
        }
      }
      // Without the hash: the same document, not cacheable forever.
      const plain = await srv.fetch(`/openapi/v3/${key}`);
      expect(plain.headers.get('cache-control')).toBe('no-cache, private');
      expect(await plain.json()).toEqual(doc);
    }
  });

  test("definitions and properties carry the reference's descriptions", async () => {
    const core: Any = await (await srv.fetch('/openapi/v3/api/v1')).json();
    const s = core.components.schemas;
    expect(s['io.svc.api.core.v1.PodStatus'].description).toStartWith('PodStatus represents information about the status of a pod.');
    expect(s['io.svc.api.core.v1.PodStatus'].properties.message.description).toBe(
      'A human readable message indicating details about why the pod is in this condition.',
    );
    expect(s['io.svc.api.core.v1.ConfigMap'].properties.data.description).toStartWith('Data contains the configuration data.');
    const apps: Any = await (await srv.fetch('/openapi/v3/apis/apps/v1')).json();
    expect(apps.components.schemas['io.svc.api.apps.v1.Deployment'].description).toBe(
      'Deployment enables declarative updates for Pods and ReplicaSets.',
    );
  });

  test('unknown group/versions are 404 Status', async () => {
    for (const p of ['/openapi/v3/apis/nope.svc.io/v1', '/openapi/v3/api/v2', '/openapi/v4']) {
      const r = await srv.json('GET', p);
      expect(r.status, p).toBe(404);
      expect(r.body).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
    }
  });
});
