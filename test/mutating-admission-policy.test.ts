/**
 * MutatingAdmissionPolicy (issue 38 item 3), end to end over HTTPS and kubectl, with the cases of
 * the reference's documentation: a label and a sidecar added by ApplyConfiguration (and the
 * documentation's own sidecar, which the reference refuses for its atomic `args`), JSONPatch add
 * and replace with jsonpatch.escapeKey, params from a ConfigMap, matchConditions, reinvocation,
 * failurePolicy Fail and Ignore, compile errors on write, both group spellings and v1alpha1, and
 * the kinds not served with the MutatingAdmissionPolicy gate off.
 *
 * Each test works in its own namespace, labelled `map-test: <n>`, and its policies select that
 * label, so the policies of one test never act on another's requests.
 */
import { describe, expect, test } from 'bun:test';
import { STATIC_WORKLOADS, serverForFile, startServer } from './helpers/server';
import { until } from './helpers/until';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const srv = serverForFile({ args: [STATIC_WORKLOADS, '--feature-gates=MutatingAdmissionPolicy=true'] });
const ADM = '/apis/admissionregistration.svc.io/v1beta1';
let n = 0;

interface Setup {
  ns: string;
  id: string;
}

async function namespace(): Promise<Setup> {
  const id = `${++n}`;
  const ns = `map-${id}`;
  const r = await srv.json('POST', '/api/v1/namespaces', { metadata: { name: ns, labels: { 'map-test': id } } });
  expect(r.status).toBe(201);
  return { ns, id };
}

const rules = (resources: string[], operations = ['CREATE', 'UPDATE']) => [{ apiGroups: [''], apiVersions: ['v1'], operations, resources }];

/** A policy on the setup's namespace and a binding to it (through the API, svc spelling). */
async function policy(s: Setup, name: string, spec: Json, bindingSpec: Json = {}): Promise<void> {
  const body = {
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      reinvocationPolicy: 'Never',
      ...spec,
      matchConstraints: { namespaceSelector: { matchLabels: { 'map-test': s.id } }, ...spec.matchConstraints },
    },
  };
  const p = await srv.json('POST', `${ADM}/mutatingadmissionpolicies`, body);
  expect(p.status).toBe(201);
  const b = await srv.json('POST', `${ADM}/mutatingadmissionpolicybindings`, {
    metadata: { name: `${name}-binding` },
    spec: { policyName: name, ...bindingSpec },
  });
  expect(b.status).toBe(201);
}

const apply = (expression: string) => ({ patchType: 'ApplyConfiguration', applyConfiguration: { expression } });
const jsonPatch = (expression: string) => ({ patchType: 'JSONPatch', jsonPatch: { expression } });

const createCm = (s: Setup, body: Json = {}) =>
  srv.json('POST', `/api/v1/namespaces/${s.ns}/configmaps`, { metadata: { generateName: 'cm-', ...body.metadata }, data: body.data });
/** Creates until `done` holds (the first creates may precede the policy); answers the last. */
const createUntil = (s: Setup, body: Json, done: (r: { status: number; body: Json }) => boolean) =>
  until(
    () => createCm(s, body),
    (r) => done(r),
    3000,
  );

const pod = (name: string, extra: Json = {}) => ({
  metadata: { name },
  spec: { containers: [{ name: 'app', image: 'nginx' }], ...extra },
});

describe('MutatingAdmissionPolicy', () => {
  test('kubectl applies a policy and binding in the upstream spelling; ApplyConfiguration adds a label', async () => {
    const s = await namespace();
    const docs = [
      {
        apiVersion: 'admissionregistration.k8s.io/v1beta1',
        kind: 'MutatingAdmissionPolicy',
        metadata: { name: `add-label-${s.id}` },
        spec: {
          matchConstraints: { resourceRules: rules(['configmaps']), namespaceSelector: { matchLabels: { 'map-test': s.id } } },
          failurePolicy: 'Fail',
          reinvocationPolicy: 'Never',
          mutations: [apply('Object{metadata: Object.metadata{labels: {"mutated-by": "policy"}}}')],
        },
      },
      {
        apiVersion: 'admissionregistration.k8s.io/v1beta1',
        kind: 'MutatingAdmissionPolicyBinding',
        metadata: { name: `add-label-${s.id}` },
        spec: { policyName: `add-label-${s.id}` },
      },
    ];
    const r = srv.kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: docs }));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`mutatingadmissionpolicy.admissionregistration.k8s.io/add-label-${s.id} created`);
    const c = await createUntil(s, { metadata: { labels: { own: 'x' } } }, (x) => x.body.metadata?.labels?.['mutated-by'] === 'policy');
    expect(c.status).toBe(201);
    expect(c.body.metadata.labels).toEqual({ own: 'x', 'mutated-by': 'policy' });
    // Defaults filled and stored: the object read back has the label.
    const got = await srv.json('GET', `/api/v1/namespaces/${s.ns}/configmaps/${c.body.metadata.name}`);
    expect(got.body.metadata.labels['mutated-by']).toBe('policy');
    // kubectl reads the policy back, in both spellings and in v1alpha1.
    const get = srv.kubectl(['get', 'mutatingadmissionpolicies.v1beta1.admissionregistration.k8s.io', `add-label-${s.id}`, '-o', 'json']);
    expect(get.code).toBe(0);
    expect(JSON.parse(get.stdout).spec.failurePolicy).toBe('Fail');
    const alpha = await srv.json('GET', `/apis/admissionregistration.k8s.io/v1alpha1/mutatingadmissionpolicies/add-label-${s.id}`);
    expect(alpha.status).toBe(200);
    expect(alpha.body.apiVersion).toBe('admissionregistration.k8s.io/v1alpha1');
    // kubectl's tables: the reference's columns.
    const table = srv.kubectl(['get', 'mutatingadmissionpolicies', `add-label-${s.id}`]);
    expect(table.stdout).toMatch(new RegExp(`^NAME\\s+MUTATIONS\\s+PARAMKIND\\s+AGE\\nadd-label-${s.id}\\s+1\\s+<unset>\\s+\\d+s\\n$`));
    const bindings = srv.kubectl(['get', 'mutatingadmissionpolicybindings', `add-label-${s.id}`]);
    expect(bindings.stdout).toMatch(
      new RegExp(`^NAME\\s+POLICYNAME\\s+PARAMREF\\s+AGE\\nadd-label-${s.id}\\s+add-label-${s.id}\\s+<unset>\\s+\\d+s\\n$`),
    );
    // Deleting the binding stops the mutation.
    expect(srv.kubectl(['delete', 'mutatingadmissionpolicybinding', `add-label-${s.id}`]).code).toBe(0);
    const after = await createUntil(s, {}, (x) => x.body.metadata?.labels?.['mutated-by'] === undefined);
    expect(after.status).toBe(201);
    expect(after.body.metadata.labels?.['mutated-by']).toBeUndefined();
  });

  test('ApplyConfiguration adds a sidecar init container, merged by name and defaulted', async () => {
    const s = await namespace();
    await policy(s, `sidecar-${s.id}`, {
      matchConstraints: { resourceRules: rules(['pods'], ['CREATE']) },
      matchConditions: [
        {
          name: 'no-sidecar-yet',
          expression: '!has(object.spec.initContainers) || !object.spec.initContainers.exists(ic, ic.name == "mesh-proxy")',
        },
      ],
      mutations: [
        apply(`Object{
          spec: Object.spec{
            initContainers: [
              Object.spec.initContainers{
                name: "mesh-proxy",
                image: "mesh/proxy:v1.0.0",
                restartPolicy: "Always"
              }
            ]
          }
        }`),
      ],
    });
    let i = 0;
    const r = await until(
      () =>
        srv.json(
          'POST',
          `/api/v1/namespaces/${s.ns}/pods`,
          pod(`p${++i}`, { initContainers: [{ name: 'myapp-initializer', image: 'example/initializer:v1.0.0' }] }),
        ),
      (x) => (x.body.spec?.initContainers ?? []).length === 2,
      3000,
    );
    expect(r.status).toBe(201);
    const ics = r.body.spec.initContainers;
    expect(ics.map((c: Json) => c.name)).toEqual(['myapp-initializer', 'mesh-proxy']);
    expect(ics[1]).toMatchObject({ image: 'mesh/proxy:v1.0.0', restartPolicy: 'Always', imagePullPolicy: 'IfNotPresent' });
    expect(ics[1].terminationMessagePath).toBe('/dev/termination-log');
  });

  test("the documentation's sidecar with args is refused as the reference refuses it (atomic list)", async () => {
    const s = await namespace();
    const name = `doc-sidecar-${s.id}`;
    await policy(s, name, {
      matchConstraints: { resourceRules: rules(['pods'], ['CREATE']) },
      mutations: [
        apply(
          'Object{spec: Object.spec{initContainers: [Object.spec.initContainers{name: "mesh-proxy", image: "mesh/proxy:v1.0.0", args: ["proxy", "sidecar"], restartPolicy: "Always"}]}}',
        ),
      ],
    });
    let i = 0;
    const r = await until(
      () => srv.json('POST', `/api/v1/namespaces/${s.ns}/pods`, pod(`d${++i}`)),
      (x) => x.status !== 201,
      3000,
    );
    const message = `policy '${name}' with binding '${name}-binding' denied request: error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.initContainers[0].args`;
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({
      kind: 'Status',
      reason: 'Invalid',
      code: 403,
      message,
      details: { kind: 'pods', causes: [{ message }] },
    });
    const k = srv.kubectl(['run', 'kp', '-n', s.ns, '--image=nginx']);
    expect(k.code).not.toBe(0);
    expect(k.stderr).toContain('may not mutate atomic arrays, maps or structs: .spec.initContainers[0].args');
  });

  test('JSONPatch adds an escaped label key and replaces a value', async () => {
    const s = await namespace();
    await policy(s, `jp-${s.id}`, {
      matchConstraints: { resourceRules: rules(['configmaps']) },
      mutations: [
        jsonPatch(`[
          JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("example.com/environment"), value: "test"},
          JSONPatch{op: "test", path: "/data/color", value: "Red"},
          JSONPatch{op: "replace", path: "/data/color", value: "Green"}
        ]`),
      ],
    });
    const r = await createUntil(
      s,
      { metadata: { labels: { a: 'b' } }, data: { color: 'Red', other: 'x' } },
      (x) => x.body.data?.color === 'Green',
    );
    expect(r.status).toBe(201);
    expect(r.body.data).toEqual({ color: 'Green', other: 'x' });
    expect(r.body.metadata.labels).toEqual({ a: 'b', 'example.com/environment': 'test' });
    // A failing test op: the patch is not applied, and that is no error (as the reference).
    const skipped = await createCm(s, { metadata: { labels: { a: 'b' } }, data: { color: 'Blue' } });
    expect(skipped.status).toBe(201);
    expect(skipped.body.data).toEqual({ color: 'Blue' });
    expect(skipped.body.metadata.labels).toEqual({ a: 'b' });
    // A path that does not exist is the mutation's error under failurePolicy Fail.
    const bad = await createCm(s, { data: { color: 'Red' } });
    expect(bad.status).toBe(403);
    expect(bad.body.message).toStartWith(`policy 'jp-${s.id}' with binding 'jp-${s.id}-binding' denied request: JSONPath: `);
  });

  test("the documentation's JSONPatch sidecar: appended to the init containers once, with reinvocation", async () => {
    const s = await namespace();
    await policy(s, `jp-sidecar-${s.id}`, {
      reinvocationPolicy: 'IfNeeded',
      matchConstraints: { resourceRules: rules(['pods'], ['CREATE']) },
      matchConditions: [
        { name: 'does-not-already-have-sidecar', expression: '!object.spec.initContainers.exists(ic, ic.name == "mesh-proxy")' },
      ],
      mutations: [
        jsonPatch(`[
          JSONPatch{
            op: "add", path: "/spec/initContainers/-",
            value: Object.spec.initContainers{
              name: "mesh-proxy",
              image: "mesh-proxy/v1.0.0",
              restartPolicy: "Always"
            }
          }
        ]`),
      ],
    });
    let i = 0;
    const r = await until(
      () => srv.json('POST', `/api/v1/namespaces/${s.ns}/pods`, pod(`j${++i}`, { initContainers: [{ name: 'init', image: 'busybox' }] })),
      (x) => (x.body.spec?.initContainers ?? []).length === 2,
      3000,
    );
    expect(r.status).toBe(201);
    expect(r.body.spec.initContainers.map((c: Json) => c.name)).toEqual(['init', 'mesh-proxy']);
    expect(r.body.spec.initContainers[1]).toMatchObject({ image: 'mesh-proxy/v1.0.0', restartPolicy: 'Always', imagePullPolicy: 'Always' });
    // Without initContainers the matchCondition itself fails (no such key): refused under Fail.
    const none = await srv.json('POST', `/api/v1/namespaces/${s.ns}/pods`, pod('bare'));
    expect(none.status).toBe(403);
    expect(none.body.message).toContain('such key: initContainers');
  });

  test('params from a ConfigMap: the binding names it, the label comes from it', async () => {
    const s = await namespace();
    const params = await srv.json('POST', `/api/v1/namespaces/${s.ns}/configmaps`, {
      metadata: { name: 'owner-params' },
      data: { owner: 'company.example.com' },
    });
    expect(params.status).toBe(201);
    await policy(
      s,
      `params-${s.id}`,
      {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        matchConstraints: { resourceRules: rules(['pods'], ['CREATE']) },
        mutations: [apply('Object{metadata: Object.metadata{labels: {"owner": params.data.owner}}}')],
      },
      { paramRef: { name: 'owner-params', parameterNotFoundAction: 'Deny' } },
    );
    let i = 0;
    const r = await until(
      () => srv.json('POST', `/api/v1/namespaces/${s.ns}/pods`, pod(`o${++i}`)),
      (x) => x.body.metadata?.labels?.owner !== undefined,
      3000,
    );
    expect(r.status).toBe(201);
    expect(r.body.metadata.labels.owner).toBe('company.example.com');
    // The param gone: parameterNotFoundAction Deny refuses.
    expect((await srv.json('DELETE', `/api/v1/namespaces/${s.ns}/configmaps/owner-params`)).status).toBe(200);
    const denied = await until(
      () => srv.json('POST', `/api/v1/namespaces/${s.ns}/pods`, pod(`o${++i}`)),
      (x) => x.status === 403,
      3000,
    );
    expect(denied.status).toBe(403);
    expect(denied.body.message).toBe(
      `policy 'params-${s.id}' with binding 'params-${s.id}-binding' denied request: no params found for policy binding with \`Deny\` parameterNotFoundAction`,
    );
  });

  test("custom resources: a Sidecar param kind (the documentation's), and merges by the CRD's list types", async () => {
    const s = await namespace();
    const crd = (group: string, kind: string, spec: Json) => ({
      metadata: { name: `${kind.toLowerCase()}s.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { kind, plural: `${kind.toLowerCase()}s`, singular: kind.toLowerCase(), listKind: `${kind}List` },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
      },
    });
    for (const body of [
      crd('mutations.example.com', 'Sidecar', { type: 'object', properties: { image: { type: 'string' } } }),
      crd('widgets.example.com', 'Widget', {
        type: 'object',
        properties: {
          ports: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
            items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
          },
          tags: { type: 'array', items: { type: 'string' } },
        },
      }),
    ]) {
      expect((await srv.json('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body)).status).toBe(201);
    }
    const served = (path: string) =>
      until(
        () => srv.json('GET', path),
        (x) => x.status === 200,
        5000,
      );
    await served(`/apis/mutations.example.com/v1/namespaces/${s.ns}/sidecars`);
    await served(`/apis/widgets.example.com/v1/namespaces/${s.ns}/widgets`);
    const param = await srv.json('POST', `/apis/mutations.example.com/v1/namespaces/${s.ns}/sidecars`, {
      apiVersion: 'mutations.example.com/v1',
      kind: 'Sidecar',
      metadata: { name: 'mesh' },
      spec: { image: 'mesh/proxy:v2' },
    });
    expect(param.status).toBe(201);
    await policy(
      s,
      `crd-param-${s.id}`,
      {
        paramKind: { apiVersion: 'mutations.example.com/v1', kind: 'Sidecar' },
        matchConstraints: { resourceRules: rules(['pods'], ['CREATE']) },
        mutations: [
          apply(
            'Object{spec: Object.spec{initContainers: [Object.spec.initContainers{name: "mesh-proxy", image: params.spec.image, restartPolicy: "Always"}]}}',
          ),
        ],
      },
      { paramRef: { name: 'mesh', parameterNotFoundAction: 'Deny' } },
    );
    let i = 0;
    const p = await until(
      () => srv.json('POST', `/api/v1/namespaces/${s.ns}/pods`, pod(`c${++i}`)),
      (x) => x.status === 201 && x.body.spec?.initContainers !== undefined,
      3000,
    );
    expect(p.body.spec.initContainers[0]).toMatchObject({ name: 'mesh-proxy', image: 'mesh/proxy:v2' });
    await policy(s, `crd-merge-${s.id}`, {
      matchConstraints: {
        resourceRules: [{ apiGroups: ['widgets.example.com'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['widgets'] }],
      },
      matchConditions: [{ name: 'tagged', expression: 'has(object.spec.tags)' }],
      mutations: [apply('Object{spec: Object.spec{ports: [Object.spec.ports{name: "metrics", port: 9090}]}}')],
    });
    const widget = (name: string, spec: Json) =>
      srv.json('POST', `/apis/widgets.example.com/v1/namespaces/${s.ns}/widgets`, {
        apiVersion: 'widgets.example.com/v1',
        kind: 'Widget',
        metadata: { name },
        spec,
      });
    let w = 0;
    const merged = await until(
      () => widget(`w${++w}`, { tags: ['a'], ports: [{ name: 'http', port: 80 }] }),
      (x) => (x.body.spec?.ports ?? []).length === 2,
      3000,
    );
    expect(merged.status).toBe(201);
    expect(merged.body.spec.ports).toEqual([
      { name: 'http', port: 80 },
      { name: 'metrics', port: 9090 },
    ]);
    // The same policy setting the atomic `tags` list instead is refused, naming it.
    await policy(s, `crd-atomic-${s.id}`, {
      matchConstraints: {
        resourceRules: [{ apiGroups: ['widgets.example.com'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['widgets'] }],
      },
      mutations: [apply('Object{spec: Object.spec{tags: ["x"]}}')],
    });
    const atomic = await until(
      () => widget(`w${++w}`, { tags: ['a'] }),
      (x) => x.status === 403,
      3000,
    );
    expect(atomic.body.message).toEndWith(
      'error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: .spec.tags',
    );
  });

  test('matchConditions: only matching objects are mutated', async () => {
    const s = await namespace();
    await policy(s, `mc-${s.id}`, {
      matchConstraints: { resourceRules: rules(['configmaps']) },
      matchConditions: [{ name: 'wants-it', expression: 'has(object.metadata.labels) && "inject" in object.metadata.labels' }],
      mutations: [apply('Object{metadata: Object.metadata{annotations: {"injected": "yes"}}}')],
    });
    const yes = await createUntil(s, { metadata: { labels: { inject: '1' } } }, (x) => x.body.metadata?.annotations?.injected === 'yes');
    expect(yes.body.metadata.annotations).toEqual({ injected: 'yes' });
    const no = await createCm(s, { metadata: { labels: { other: '1' } } });
    expect(no.status).toBe(201);
    expect(no.body.metadata.annotations).toBeUndefined();
  });

  test('variables, namespaceObject and request in expressions; updates and server-side apply are mutated too', async () => {
    const s = await namespace();
    expect(
      (
        await srv.json(
          'PATCH',
          `/api/v1/namespaces/${s.ns}`,
          { metadata: { labels: { team: 'blue' } } },
          { 'content-type': 'application/merge-patch+json' },
        )
      ).status,
    ).toBe(200);
    await policy(s, `vars-${s.id}`, {
      matchConstraints: { resourceRules: rules(['configmaps']) },
      variables: [{ name: 'team', expression: 'namespaceObject.metadata.labels.team' }],
      mutations: [apply('Object{metadata: Object.metadata{labels: {"team": variables.team, "op": request.operation.lowerAscii()}}}')],
    });
    const c = await createUntil(
      s,
      { metadata: { name: 'v1' }, data: { a: '1' } },
      (x) => x.status === 201 && x.body.metadata?.labels?.team === 'blue',
    );
    expect(c.body.metadata.labels).toEqual({ team: 'blue', op: 'create' });
    const u = await srv.json('PUT', `/api/v1/namespaces/${s.ns}/configmaps/v1`, { ...c.body, data: { a: '2' } });
    expect(u.status).toBe(200);
    expect(u.body.metadata.labels).toEqual({ team: 'blue', op: 'update' });
    const ssa = srv.kubectl(
      ['apply', '--server-side', '-n', s.ns, '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa' }, data: { b: '1' } }),
    );
    expect(ssa.code).toBe(0);
    const got = await srv.json('GET', `/api/v1/namespaces/${s.ns}/configmaps/ssa`);
    expect(got.body.metadata.labels).toEqual({ team: 'blue', op: 'create' });
  });

  test('reinvocationPolicy IfNeeded runs a policy again after a later one changed the object; Never does not', async () => {
    for (const reinvocationPolicy of ['IfNeeded', 'Never']) {
      const s = await namespace();
      // "a-…" runs first (policies by name) and sees "b" only when run again after "b-…".
      await policy(s, `a-${s.id}`, {
        reinvocationPolicy,
        matchConstraints: { resourceRules: rules(['configmaps']) },
        mutations: [
          apply(
            'Object{metadata: Object.metadata{labels: {"seen-b": string(has(object.metadata.labels) && "b" in object.metadata.labels)}}}',
          ),
        ],
      });
      await policy(s, `b-${s.id}`, {
        matchConstraints: { resourceRules: rules(['configmaps']) },
        mutations: [apply('Object{metadata: Object.metadata{labels: {"b": "set"}}}')],
      });
      const r = await createUntil(s, {}, (x) => x.body.metadata?.labels?.b === 'set' && x.body.metadata?.labels?.['seen-b'] !== undefined);
      expect(r.status).toBe(201);
      expect(r.body.metadata.labels).toEqual({ b: 'set', 'seen-b': reinvocationPolicy === 'IfNeeded' ? 'true' : 'false' });
    }
  });

  test('failurePolicy: an evaluation error refuses under Fail and is skipped under Ignore', async () => {
    for (const failurePolicy of ['Fail', 'Ignore']) {
      const s = await namespace();
      const name = `fp-${failurePolicy.toLowerCase()}-${s.id}`;
      await policy(s, name, {
        failurePolicy,
        matchConstraints: { resourceRules: rules(['configmaps']) },
        mutations: [
          apply('Object{metadata: Object.metadata{labels: {"x": object.data.missing}}}'),
          apply('Object{metadata: Object.metadata{labels: {"second": "ran"}}}'),
        ],
      });
      const r = await createUntil(s, { data: { present: '1' } }, (x) => x.status === 403 || x.body.metadata?.labels?.second === 'ran');
      if (failurePolicy === 'Fail') {
        expect(r.status).toBe(403);
        expect(r.body.reason).toBe('Invalid');
        expect(r.body.message).toStartWith(`policy '${name}' with binding '${name}-binding' denied request: expression '`);
        expect(r.body.message).toContain('missing');
      } else {
        expect(r.status).toBe(201);
        // The failing mutation is skipped, the next one still runs.
        expect(r.body.metadata.labels).toEqual({ second: 'ran' });
      }
      // Each mutation is counted (the reference's apiserver_mutating_admission_policy_check_*).
      const metrics = await (await srv.fetch('/metrics')).text();
      const labels = (errorType: string) => `{error_type="${errorType}",policy="${name}",policy_binding="${name}-binding"}`;
      expect(metrics).toMatch(new RegExp(`apiserver_mutating_admission_policy_check_total${labels('invalid_error')} [1-9]`));
      expect(metrics).toContain(`apiserver_mutating_admission_policy_check_duration_seconds_count${labels('invalid_error')}`);
      if (failurePolicy === 'Ignore')
        expect(metrics).toMatch(new RegExp(`apiserver_mutating_admission_policy_check_total${labels('no_error')} [1-9]`));
    }
  });

  test('a mutation that does not compile is refused on write, naming the field', async () => {
    const base = {
      metadata: { name: 'bad-expr' },
      spec: {
        matchConstraints: { resourceRules: rules(['configmaps']) },
        failurePolicy: 'Fail',
        reinvocationPolicy: 'Never',
        mutations: [apply('Object{metadata: Object.metadata{labels: {"x": nosuchvar}}}')],
      },
    };
    const r = await srv.json('POST', `${ADM}/mutatingadmissionpolicies`, base);
    expect(r.status).toBe(422);
    expect(r.body.details.causes[0].field).toBe('spec.mutations[0].applyConfiguration.expression');
    expect(r.body.details.causes[0].message).toContain('compilation failed');
    const wrongType = await srv.json('POST', `${ADM}/mutatingadmissionpolicies`, {
      ...base,
      spec: { ...base.spec, mutations: [jsonPatch('[JSONPatch{op: "add", pat: "/x", value: 1}]')] },
    });
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.details.causes[0].field).toBe('spec.mutations[0].jsonPatch.expression');
    const noReinvocation = await srv.json('POST', `${ADM}/mutatingadmissionpolicies`, {
      ...base,
      spec: { ...base.spec, reinvocationPolicy: undefined, mutations: [apply('Object{}')] },
    });
    expect(noReinvocation.status).toBe(422);
    expect(noReinvocation.body.details.causes).toContainEqual({
      reason: 'FieldValueRequired',
      message: 'Required value',
      field: 'spec.reinvocationPolicy',
    });
  });

  test('v1alpha1 serves the same objects: written through it, read through v1beta1', async () => {
    const body = {
      apiVersion: 'admissionregistration.k8s.io/v1alpha1',
      kind: 'MutatingAdmissionPolicy',
      metadata: { name: 'alpha-written' },
      spec: {
        matchConstraints: { resourceRules: rules(['secrets']) },
        failurePolicy: 'Ignore',
        reinvocationPolicy: 'IfNeeded',
        mutations: [jsonPatch('[JSONPatch{op: "add", path: "/metadata/labels", value: {"a": "b"}}]')],
      },
    };
    const w = await srv.json('POST', '/apis/admissionregistration.k8s.io/v1alpha1/mutatingadmissionpolicies', body);
    expect(w.status).toBe(201);
    expect(w.body.apiVersion).toBe('admissionregistration.k8s.io/v1alpha1');
    const r = await srv.json('GET', `${ADM}/mutatingadmissionpolicies/alpha-written`);
    expect(r.status).toBe(200);
    expect(r.body.apiVersion).toBe('admissionregistration.svc.io/v1beta1');
    expect(r.body.spec).toMatchObject({ failurePolicy: 'Ignore', reinvocationPolicy: 'IfNeeded' });
    expect(r.body.spec.matchConstraints).toMatchObject({ matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {} });
    // Protobuf, as client-go's typed clients speak it: read, then written back as an update.
    const PB = 'application/vnd.kubernetes.protobuf';
    const url = '/apis/admissionregistration.k8s.io/v1beta1/mutatingadmissionpolicies/alpha-written';
    const pb = await srv.fetch(url, { headers: { accept: PB } });
    expect(pb.status).toBe(200);
    expect(pb.headers.get('content-type')).toBe(PB);
    const put = await srv.fetch(url, {
      method: 'PUT',
      headers: { accept: 'application/json', 'content-type': PB },
      body: await pb.arrayBuffer(),
    });
    expect(put.status).toBe(200);
    expect(((await put.json()) as Json).spec.mutations[0].jsonPatch.expression).toContain('JSONPatch{');
    const explain = srv.kubectl(['explain', 'mutatingadmissionpolicy.spec.reinvocationPolicy']);
    expect(explain.code).toBe(0);
    expect(explain.stdout).toContain('IfNeeded');
  });
});

test('with the MutatingAdmissionPolicy gate off the kinds are not served', async () => {
  const off = await startServer({ args: [STATIC_WORKLOADS] });
  try {
    expect((await off.json('GET', `${ADM}/mutatingadmissionpolicies`)).status).toBe(404);
    expect((await off.json('GET', '/apis/admissionregistration.k8s.io/v1alpha1/mutatingadmissionpolicybindings')).status).toBe(404);
    const groups = await off.json('GET', '/apis/admissionregistration.svc.io');
    expect(groups.body.versions.map((v: Json) => v.version)).toEqual(['v1']);
    expect((await srv.json('GET', '/apis/admissionregistration.svc.io')).body.versions.map((v: Json) => v.version)).toEqual([
      'v1',
      'v1beta1',
      'v1alpha1',
    ]);
  } finally {
    await off.stop();
  }
});
