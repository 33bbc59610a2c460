/**
 * ValidatingAdmissionPolicy admission (issue 13), end to end over HTTPS and kubectl: policies and
 * bindings written through the API take effect within a second and stop when deleted; denials
 * carry the reference's Status (message, reason, code, cause); Warn sends Warning headers; params
 * by name and selector; matchConditions under Fail and Ignore; variables; messageExpression; every
 * write verb including DELETE and dry run; selectors; the upstream group spelling.
 *
 * Each test works in its own namespace, labelled `vap-test: <n>`, and its policy selects that
 * label, so the policies of one test never act on another's requests.
 */
import { describe, expect, test } from 'bun:test';
import { STATIC_WORKLOADS, serverForFile } from './helpers/server';
import { until } from './helpers/until';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const srv = serverForFile({ args: [STATIC_WORKLOADS] });
const ADM = '/apis/admissionregistration.svc.io/v1';
let n = 0;

interface Setup {
  ns: string;
  id: string;
}

/** A namespace of its own, labelled for the test's policies. */
async function namespace(labels: Record<string, string> = {}): Promise<Setup> {
  const id = `${++n}`;
  const ns = `vap-${id}`;
  const r = await srv.json('POST', '/api/v1/namespaces', { metadata: { name: ns, labels: { 'vap-test': id, ...labels } } });
  expect(r.status).toBe(201);
  return { ns, id };
}

const rules = (resources: string[], operations = ['CREATE', 'UPDATE'], apiGroups = ['']) => [
  { apiGroups, apiVersions: ['*'], operations, resources },
];

/** A policy on the setup's namespace (unless spec.matchConstraints says otherwise) and a binding to it. */
async function policy(s: Setup, spec: Json, bindingSpec: Json = {}, name = `p-${s.id}`): Promise<void> {
  const matchConstraints = { namespaceSelector: { matchLabels: { 'vap-test': s.id } }, ...spec.matchConstraints };
  const p = await srv.json('POST', `${ADM}/validatingadmissionpolicies`, { metadata: { name }, spec: { ...spec, matchConstraints } });
  expect(p.status).toBe(201);
  const b = await srv.json('POST', `${ADM}/validatingadmissionpolicybindings`, {
    metadata: { name: `${name}-binding` },
    spec: { policyName: name, validationActions: ['Deny'], ...bindingSpec },
  });
  expect(b.status).toBe(201);
}

const eventually = <T>(f: () => Promise<T>, done: (r: T) => boolean, ms = 1500) => until(f, done, ms);

let cmN = 0;
const cm = (data: Record<string, string> = {}, labels?: Record<string, string>): Json => ({
  metadata: { name: `cm-${++cmN}`, ...(labels && { labels }) },
  data,
});
const createCm = (s: Setup, body: Json, query = '') => srv.json('POST', `/api/v1/namespaces/${s.ns}/configmaps${query}`, body);
/** Create until the policy is in force (the first creates may precede it); answers the last. */
const createDenied = (s: Setup, body: () => Json, query = '') =>
  eventually(
    () => createCm(s, body(), query),
    (r) => r.status >= 400,
  );

describe('deny', () => {
  test('a false validation refuses with the reference Status: 422 Invalid, the default message naming the expression', async () => {
    const s = await namespace();
    await policy(s, {
      matchConstraints: { resourceRules: rules(['deployments'], ['CREATE', 'UPDATE'], ['apps']) },
      validations: [{ expression: 'object.spec.replicas <= 5' }],
    });
    const deploy = (name: string, replicas: number): Json => ({
      metadata: { name },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    });
    let i = 0;
    const r = await eventually(
      () => srv.json('POST', `/apis/apps/v1/namespaces/${s.ns}/deployments`, deploy(`web-${++i}`, 6)),
      (r) => r.status !== 201,
    );
    expect(r.status).toBe(422);
    const message = `ValidatingAdmissionPolicy 'p-${s.id}' with binding 'p-${s.id}-binding' denied request: failed expression: object.spec.replicas <= 5`;
    expect(r.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `deployments.apps "web-${i}" is forbidden: ${message}`,
      reason: 'Invalid',
      details: { name: `web-${i}`, group: 'apps', kind: 'deployments', causes: [{ message }] },
      code: 422,
    });
    expect((await srv.json('GET', `/apis/apps/v1/namespaces/${s.ns}/deployments/web-${i}`)).status).toBe(404);
    expect((await srv.json('POST', `/apis/apps/v1/namespaces/${s.ns}/deployments`, deploy('small', 3))).status).toBe(201);
    // kubectl shows the message as the reference's server makes it show it.
    const k = srv.kubectl(['create', 'deployment', 'big', '--image=nginx', '--replicas=6', '-n', s.ns]);
    expect(k.code).not.toBe(0);
    expect(k.stderr).toContain(message);
    // An update is checked too.
    const upd = await srv.json(
      'PATCH',
      `/apis/apps/v1/namespaces/${s.ns}/deployments/small`,
      { spec: { replicas: 9 } },
      {
        'content-type': 'application/merge-patch+json',
      },
    );
    expect(upd.status).toBe(422);
  });

  test('each reason answers with its code', async () => {
    for (const [reason, code] of [
      ['Forbidden', 403],
      ['Unauthorized', 401],
      ['RequestEntityTooLarge', 413],
      ['Invalid', 422],
    ] as const) {
      const s = await namespace();
      await policy(s, {
        matchConstraints: { resourceRules: rules(['configmaps']) },
        validations: [{ expression: "!has(object.data) || !('bad' in object.data)", reason, message: `no bad (${reason})` }],
      });
      const r = await createDenied(s, () => cm({ bad: 'x' }));
      expect(r.status).toBe(code);
      expect(r.body.reason).toBe(reason);
      expect(r.body.message).toContain(`denied request: no bad (${reason})`);
      expect((await createCm(s, cm({ good: 'x' }))).status).toBe(201);
    }
  });

  test('dry-run requests are denied like real ones', async () => {
    const s = await namespace();
    await policy(s, { matchConstraints: { resourceRules: rules(['configmaps']) }, validations: [{ expression: '!has(object.data)' }] });
    const r = await createDenied(s, () => cm({ a: 'b' }), '?dryRun=All');
    expect(r.status).toBe(422);
    expect((await createCm(s, { metadata: { name: 'no-data' } }, '?dryRun=All')).status).toBe(201);
    expect((await srv.json('GET', `/api/v1/namespaces/${s.ns}/configmaps/no-data`)).status).toBe(404);
  });

  test('a policy applies within a second of its creation and stops within a second of its deletion', async () => {
    const s = await namespace();
    const created = Date.now();
    await policy(s, { matchConstraints: { resourceRules: rules(['configmaps']) }, validations: [{ expression: 'false' }] });
    const denied = await createDenied(s, () => cm());
    expect(denied.status).toBe(422);
    expect(Date.now() - created).toBeLessThan(1500);
    expect((await srv.json('DELETE', `${ADM}/validatingadmissionpolicies/p-${s.id}`)).status).toBe(200);
    const deleted = Date.now();
    const ok = await eventually(
      () => createCm(s, cm()),
      (r) => r.status === 201,
    );
    expect(ok.status).toBe(201);
    expect(Date.now() - deleted).toBeLessThan(1500);
  });

  test('a binding removed stops its policy; a binding naming no policy does nothing', async () => {
    const s = await namespace();
    await policy(s, { matchConstraints: { resourceRules: rules(['configmaps']) }, validations: [{ expression: 'false' }] });
    expect((await createDenied(s, () => cm())).status).toBe(422);
    expect((await srv.json('DELETE', `${ADM}/validatingadmissionpolicybindings/p-${s.id}-binding`)).status).toBe(200);
    expect(
      (
        await eventually(
          () => createCm(s, cm()),
          (r) => r.status === 201,
        )
      ).status,
    ).toBe(201);
  });
});

describe('messages', () => {
  test('messageExpression wins; blank, multi-line or failing results fall back to message, then to the expression', async () => {
    const s = await namespace();
    await policy(s, {
      matchConstraints: { resourceRules: rules(['configmaps']) },
      validations: [
        {
          expression: "!has(object.data) || !('a' in object.data)",
          messageExpression: "'key a is not allowed in ' + object.metadata.name",
          message: 'unused',
        },
        { expression: "!has(object.data) || !('b' in object.data)", messageExpression: "'  '", message: 'b is refused' },
        { expression: "!has(object.data) || !('c' in object.data)", messageExpression: "'line1\\nline2'" },
        { expression: "!has(object.data) || !('d' in object.data)", messageExpression: 'object.nope', message: 'd is refused' },
      ],
    });
    const a = await createDenied(s, () => ({ ...cm({ a: '1' }), metadata: { name: 'named-a' } }));
    expect(a.body.message).toEndWith('denied request: key a is not allowed in named-a');
    expect((await createCm(s, cm({ b: '1' }))).body.message).toEndWith('denied request: b is refused');
    expect((await createCm(s, cm({ c: '1' }))).body.message).toEndWith(
      `denied request: failed expression: !has(object.data) || !('c' in object.data)`,
    );
    expect((await createCm(s, cm({ d: '1' }))).body.message).toEndWith('denied request: d is refused');
  });

  test('variables are available to validations and messages, each computed once, earlier ones to later ones', async () => {
    const s = await namespace();
    await policy(s, {
      matchConstraints: { resourceRules: rules(['configmaps']) },
      variables: [
        { name: 'keys', expression: 'has(object.data) ? object.data.map(k, k) : []' },
        { name: 'count', expression: 'size(variables.keys)' },
      ],
      validations: [{ expression: 'variables.count <= 2', messageExpression: "'too many keys: ' + string(variables.count)" }],
    });
    const r = await createDenied(s, () => cm({ a: '1', b: '2', c: '3' }));
    expect(r.status).toBe(422);
    expect(r.body.message).toEndWith('denied request: too many keys: 3');
    expect((await createCm(s, cm({ a: '1' }))).status).toBe(201);
  });
});

describe('actions', () => {
  test('Warn: a Warning header on an allowed request, the write goes through', async () => {
    const s = await namespace();
    await policy(
      s,
      {
        matchConstraints: { resourceRules: rules(['configmaps']) },
        validations: [{ expression: '!has(object.data)', message: 'data is discouraged' }],
      },
      { validationActions: ['Warn'] },
    );
    const r = await eventually(
      () => createCm(s, cm({ a: 'b' })),
      (r) => (r.headers.get('warning') ?? '').includes('data is discouraged'),
    );
    expect(r.status).toBe(201);
    expect(r.headers.get('warning')).toBe(
      `299 - "Validation failed for ValidatingAdmissionPolicy 'p-${s.id}' with binding 'p-${s.id}-binding': data is discouraged"`,
    );
    // kubectl prints it.
    const k = srv.kubectl(['create', 'configmap', 'warned', '--from-literal=a=b', '-n', s.ns]);
    expect(k.code).toBe(0);
    expect(k.stderr).toContain('Warning: Validation failed for ValidatingAdmissionPolicy');
  });

  test('Warn headers come with a denial of another binding too; Audit alone lets the write through', async () => {
    const s = await namespace();
    const spec = {
      matchConstraints: { resourceRules: rules(['configmaps']) },
      validations: [{ expression: '!has(object.data)', message: 'no data' }],
    };
    await policy(s, spec, { validationActions: ['Warn'] }, `a-${s.id}`);
    await policy(s, spec, { validationActions: ['Deny'] }, `b-${s.id}`);
    await policy(s, spec, { validationActions: ['Audit'] }, `c-${s.id}`);
    const r = await eventually(
      () => createCm(s, cm({ a: 'b' })),
      (r) => r.status === 422 && r.headers.has('warning'),
    );
    expect(r.status).toBe(422);
    expect(r.body.message).toContain(`ValidatingAdmissionPolicy 'b-${s.id}'`);
    expect(r.headers.get('warning')).toContain(`ValidatingAdmissionPolicy 'a-${s.id}' with binding 'a-${s.id}-binding': no data`);
    await srv.json('DELETE', `${ADM}/validatingadmissionpolicybindings/b-${s.id}-binding`);
    const ok = await eventually(
      () => createCm(s, cm({ a: 'b' })),
      (r) => r.status === 201,
    );
    expect(ok.status).toBe(201);
  });
});

describe('match conditions and failure policy', () => {
  test('a false condition skips the policy, all true apply it', async () => {
    const s = await namespace();
    await policy(s, {
      matchConstraints: { resourceRules: rules(['configmaps']) },
      matchConditions: [
        { name: 'labelled', expression: "has(object.metadata.labels) && 'check' in object.metadata.labels" },
        { name: 'not-exempt', expression: "!('exempt' in object.metadata.labels)" },
      ],
      validations: [{ expression: 'false', message: 'checked' }],
    });
    expect((await createDenied(s, () => cm({}, { check: 'yes' }))).body.message).toEndWith('checked');
    expect((await createCm(s, cm())).status).toBe(201);
    expect((await createCm(s, cm({}, { check: 'yes', exempt: 'yes' }))).status).toBe(201);
  });

  test('a condition error denies under Fail and skips under Ignore; runtime errors of validations likewise', async () => {
    for (const failurePolicy of ['Fail', 'Ignore']) {
      const s = await namespace();
      await policy(s, {
        failurePolicy,
        matchConstraints: { resourceRules: rules(['configmaps']) },
        // CEL's || and && absorb errors (`error || true` is true): this one has nothing to absorb it.
        matchConditions: [{ name: 'errs', expression: "object.data.missing == 'x'" }],
        validations: [{ expression: 'false' }],
      });
      const t = await namespace();
      await policy(t, {
        failurePolicy,
        matchConstraints: { resourceRules: rules(['configmaps']) },
        validations: [{ expression: "object.data.missing == 'x'" }],
      });
      // Give both a moment to be in force: a create with data that makes everything fail in a known way.
      const probe = await namespace();
      await policy(probe, { matchConstraints: { resourceRules: rules(['configmaps']) }, validations: [{ expression: 'false' }] });
      await createDenied(probe, () => cm());
      const r1 = await createCm(s, cm({ a: 'b' }));
      const r2 = await createCm(t, cm({ a: 'b' }));
      if (failurePolicy === 'Fail') {
        expect(r1.status).toBe(422);
        expect(r1.body.message).toContain(`denied request: expression 'object.data.missing == 'x'' resulted in error: `);
        expect(r2.status).toBe(422);
        expect(r2.body.message).toContain(`denied request: expression 'object.data.missing == 'x'' resulted in error: `);
      } else {
        expect(r1.status).toBe(201);
        expect(r2.status).toBe(201);
      }
    }
  });

  test('an expression that does not compile is refused on write (422 naming the field); an update keeping it is not', async () => {
    const s = await namespace();
    const name = `bad-${s.id}`;
    const spec = (over: Json): Json => ({
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: rules(['configmaps']) },
      validations: [{ expression: 'true' }],
      ...over,
    });
    const cases: [Json, string][] = [
      [{ validations: [{ expression: 'object.spec.replicas <=' }] }, 'spec.validations[0].expression'],
      [{ validations: [{ expression: 'true', messageExpression: "'a' +" }] }, 'spec.validations[0].messageExpression'],
      [{ matchConditions: [{ name: 'm', expression: 'nosuchvariable.x' }] }, 'spec.matchConditions[0].expression'],
      [{ variables: [{ name: 'v', expression: 'object.(' }] }, 'spec.variables[0].expression'],
      [{ validations: [{ expression: 'params.x' }] }, 'spec.validations[0].expression'],
      [{ auditAnnotations: [{ key: 'k', valueExpression: 'authorizer.group("")' }] }, 'spec.auditAnnotations[0].valueExpression'],
    ];
    for (const [over, field] of cases) {
      const r = await srv.json('POST', `${ADM}/validatingadmissionpolicies`, { metadata: { name }, spec: spec(over) });
      expect(r.status).toBe(422);
      expect(r.body.reason).toBe('Invalid');
      const cause = r.body.details.causes.find((c: Json) => c.field === field);
      expect(cause?.reason).toBe('FieldValueInvalid');
      expect(cause?.message).toContain('compilation failed: ');
    }
    expect((await srv.json('GET', `${ADM}/validatingadmissionpolicies/${name}`)).status).toBe(404);
    // A good policy is accepted; an update that keeps its expressions and changes a message is too.
    const ok = await srv.json('POST', `${ADM}/validatingadmissionpolicies`, {
      metadata: { name },
      spec: spec({ validations: [{ expression: 'object.metadata.name != "x"', message: 'one' }] }),
    });
    expect(ok.status).toBe(201);
    const patched = await srv.json(
      'PATCH',
      `${ADM}/validatingadmissionpolicies/${name}`,
      { spec: { validations: [{ expression: 'object.metadata.name != "x"', message: 'two' }] } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(patched.status).toBe(200);
    expect(patched.body.spec.validations[0].message).toBe('two');
  });
});

describe('params', () => {
  test('by name: the ConfigMap named; a missing one denies with Deny and allows with Allow', async () => {
    for (const action of ['Deny', 'Allow']) {
      const s = await namespace();
      await policy(
        s,
        {
          paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
          matchConstraints: { resourceRules: rules(['secrets']) },
          validations: [{ expression: '!has(object.data) || size(object.data) <= int(params.data.maxKeys)', message: 'too many keys' }],
        },
        { paramRef: { name: 'limits', namespace: s.ns, parameterNotFoundAction: action } },
      );
      const secret = (keys: number) => ({
        metadata: { generateName: 's-' },
        data: Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, 'eA=='])),
      });
      const path = `/api/v1/namespaces/${s.ns}/secrets`;
      const missing = await eventually(
        () => srv.json('POST', path, secret(3)),
        (r) => action === 'Allow' || r.status !== 201,
      );
      if (action === 'Deny') {
        expect(missing.status).toBe(422);
        expect(missing.body.message).toEndWith(
          'denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction',
        );
      } else expect(missing.status).toBe(201);
      expect(
        (await srv.json('POST', `/api/v1/namespaces/${s.ns}/configmaps`, { metadata: { name: 'limits' }, data: { maxKeys: '2' } })).status,
      ).toBe(201);
      const denied = await eventually(
        () => srv.json('POST', path, secret(3)),
        (r) => r.status === 422 && String(r.body.message).endsWith('too many keys'),
      );
      expect(denied.body.message).toEndWith('too many keys');
      expect((await srv.json('POST', path, secret(2))).status).toBe(201);
    }
  });

  test('by selector: every selected param is evaluated and all must pass; none selected with Allow passes', async () => {
    const s = await namespace();
    await policy(
      s,
      {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        matchConstraints: { resourceRules: rules(['secrets']) },
        validations: [
          {
            expression: '!has(object.metadata.labels) || !(params.data.forbidden in object.metadata.labels)',
            messageExpression: "'label ' + params.data.forbidden + ' is forbidden'",
          },
        ],
      },
      { paramRef: { selector: { matchLabels: { role: 'vap-param' } }, parameterNotFoundAction: 'Allow' } },
    );
    const path = `/api/v1/namespaces/${s.ns}/secrets`;
    expect((await srv.json('POST', path, { metadata: { name: 'before', labels: { x: '1' } } })).status).toBe(201);
    for (const [name, forbidden] of [
      ['p1', 'x'],
      ['p2', 'y'],
    ])
      await srv.json('POST', `/api/v1/namespaces/${s.ns}/configmaps`, {
        metadata: { name, labels: { role: 'vap-param' } },
        data: { forbidden },
      });
    const rx = await eventually(
      () => srv.json('POST', path, { metadata: { generateName: 's-', labels: { x: '1' } } }),
      (r) => r.status === 422,
    );
    expect(rx.body.message).toEndWith('label x is forbidden');
    const ry = await srv.json('POST', path, { metadata: { generateName: 's-', labels: { y: '1' } } });
    expect(ry.body.message).toEndWith('label y is forbidden');
    expect((await srv.json('POST', path, { metadata: { generateName: 's-', labels: { z: '1' } } })).status).toBe(201);
  });

  test('a paramKind the server does not serve is a configuration error under Fail', async () => {
    const s = await namespace();
    await policy(
      s,
      {
        paramKind: { apiVersion: 'example.com/v1', kind: 'Nope' },
        matchConstraints: { resourceRules: rules(['configmaps']) },
        validations: [{ expression: 'true' }],
      },
      { paramRef: { name: 'x', parameterNotFoundAction: 'Allow' } },
    );
    const r = await createDenied(s, () => cm());
    expect(r.body.message).toEndWith(
      `ValidatingAdmissionPolicy 'p-${s.id}' denied request: failed to configure policy: failed to find resource referenced by paramKind: 'example.com/v1, Kind=Nope'`,
    );
  });
});

describe('operations and variables', () => {
  test('UPDATE sees oldObject; DELETE sees oldObject with object null', async () => {
    const s = await namespace();
    await policy(s, {
      matchConstraints: { resourceRules: rules(['configmaps'], ['UPDATE', 'DELETE']) },
      validations: [
        {
          expression: "request.operation != 'UPDATE' || object.data.owner == oldObject.data.owner",
          message: 'owner is immutable',
        },
        {
          expression: "request.operation != 'DELETE' || (object == null && oldObject.data.owner != 'root')",
          message: 'root-owned maps stay',
        },
      ],
    });
    expect((await createCm(s, { metadata: { name: 'mine' }, data: { owner: 'me' } })).status).toBe(201);
    expect((await createCm(s, { metadata: { name: 'roots' }, data: { owner: 'root' } })).status).toBe(201);
    const put = await eventually(
      () => srv.json('PUT', `/api/v1/namespaces/${s.ns}/configmaps/mine`, { metadata: { name: 'mine' }, data: { owner: 'you' } }),
      (r) => r.status === 422,
    );
    expect(put.body.message).toEndWith('owner is immutable');
    const del = await srv.json('DELETE', `/api/v1/namespaces/${s.ns}/configmaps/roots`);
    expect(del.status).toBe(422);
    expect(del.body.message).toBe(
      `configmaps "roots" is forbidden: ValidatingAdmissionPolicy 'p-${s.id}' with binding 'p-${s.id}-binding' denied request: root-owned maps stay`,
    );
    expect((await srv.json('DELETE', `/api/v1/namespaces/${s.ns}/configmaps/mine`)).status).toBe(200);
    // deletecollection goes object by object.
    const dc = await srv.json('DELETE', `/api/v1/namespaces/${s.ns}/configmaps`);
    expect(dc.status).toBe(422);
    expect((await srv.json('GET', `/api/v1/namespaces/${s.ns}/configmaps/roots`)).status).toBe(200);
  });

  test('request carries user, kind, resource, namespace, options; namespaceObject the namespace', async () => {
    const s = await namespace({ tier: 'gold' });
    await policy(s, {
      matchConstraints: { resourceRules: rules(['configmaps']) },
      validations: [
        {
          expression: 'false',
          messageExpression:
            "request.userInfo.username + '|' + request.kind.kind + '|' + request.resource.resource + '|' + request.namespace + '|' + request.options.kind + '|' + string(request.dryRun) + '|' + namespaceObject.metadata.labels.tier",
        },
      ],
    });
    const r = await createDenied(s, () => cm());
    expect(r.body.message).toEndWith(`denied request: admin|ConfigMap|configmaps|${s.ns}|CreateOptions|false|gold`);
  });

  test('the authorizer library asks the server authorizer about the requesting user and service accounts', async () => {
    const s = await namespace();
    await policy(s, {
      matchConstraints: { resourceRules: rules(['configmaps']) },
      validations: [
        { expression: "authorizer.requestResource.check('create').allowed()", message: 'requester may not create' },
        {
          expression: "authorizer.group('apps').resource('deployments').namespace('x').check('delete').allowed()",
          message: 'admin denied',
        },
        { expression: "authorizer.path('/healthz').check('get').allowed()", message: 'path denied' },
        {
          expression:
            "!has(object.data) || !('sa' in object.data) || authorizer.serviceAccount(request.namespace, object.data.sa).group('').resource('secrets').check('get').allowed()",
          messageExpression: "'service account ' + object.data.sa + ' may not read secrets'",
        },
      ],
    });
    const r = await createDenied(s, () => cm({ sa: 'builder' }));
    expect(r.status).toBe(422);
    // The admin (system:masters) passes the first three; a service account has no rights here.
    expect(r.body.message).toEndWith('denied request: service account builder may not read secrets');
    expect((await createCm(s, cm({ other: 'x' }))).status).toBe(201);
  });

  test('objectSelector on new or old object; binding matchResources narrows the policy', async () => {
    const s = await namespace();
    await policy(
      s,
      {
        matchConstraints: { resourceRules: rules(['configmaps']), objectSelector: { matchLabels: { guarded: 'true' } } },
        validations: [{ expression: 'false', message: 'guarded' }],
      },
      { matchResources: { resourceRules: rules(['configmaps'], ['CREATE']) } },
    );
    expect((await createDenied(s, () => cm({}, { guarded: 'true' }))).body.message).toEndWith('guarded');
    expect((await createCm(s, cm({}, { guarded: 'false' }))).status).toBe(201);
  });

  test('a policy on a named group and kind: NetworkPolicy, matched by the upstream group name too', async () => {
    const s = await namespace();
    await policy(s, {
      matchConstraints: { resourceRules: rules(['networkpolicies'], ['CREATE'], ['networking.k8s.io']) },
      validations: [
        {
          expression: "object.spec.policyTypes.all(t, t == 'Ingress')",
          message: 'only ingress policies',
        },
      ],
    });
    const np = (types: string[]) => ({ metadata: { generateName: 'np-' }, spec: { podSelector: {}, policyTypes: types } });
    for (const group of ['networking.svc.io', 'networking.k8s.io']) {
      const r = await eventually(
        () => srv.json('POST', `/apis/${group}/v1/namespaces/${s.ns}/networkpolicies`, np(['Egress'])),
        (r) => r.status === 422,
      );
      expect(r.body.message).toEndWith('only ingress policies');
      expect((await srv.json('POST', `/apis/${group}/v1/namespaces/${s.ns}/networkpolicies`, np(['Ingress']))).status).toBe(201);
    }
  });

  test('quantity, regex, list, string and URL libraries in real policies', async () => {
    const s = await namespace();
    await policy(s, {
      matchConstraints: { resourceRules: rules(['configmaps']) },
      validations: [
        { expression: "!has(object.data.mem) || quantity(object.data.mem).isLessThan(quantity('1Gi'))", message: 'mem too large' },
        { expression: "!has(object.data.name) || object.data.name.matches('^[a-z]+$')", message: 'bad name' },
        { expression: "!has(object.data.csv) || object.data.csv.split(',').isSorted()", message: 'unsorted' },
        { expression: '!has(object.data.tag) || object.data.tag.lowerAscii() == object.data.tag', message: 'lower case tags' },
        {
          expression: "!has(object.data.endpoint) || (isURL(object.data.endpoint) && url(object.data.endpoint).getScheme() == 'https')",
          messageExpression: "'endpoint must be an https URL, not ' + object.data.endpoint",
        },
      ],
    });
    expect((await createDenied(s, () => cm({ mem: '2Gi' }))).body.message).toEndWith('mem too large');
    expect((await createCm(s, cm({ mem: '512Mi' }))).status).toBe(201);
    expect((await createCm(s, cm({ name: 'Bad1' }))).body.message).toEndWith('bad name');
    expect((await createCm(s, cm({ csv: 'b,a' }))).body.message).toEndWith('unsorted');
    expect((await createCm(s, cm({ csv: 'a,b' }))).status).toBe(201);
    expect((await createCm(s, cm({ tag: 'Up' }))).body.message).toEndWith('lower case tags');
    expect((await createCm(s, cm({ endpoint: 'http://example.com/x' }))).body.message).toEndWith(
      'endpoint must be an https URL, not http://example.com/x',
    );
    expect((await createCm(s, cm({ endpoint: 'https://a:b:c/' }))).status).toBe(422);
    expect((await createCm(s, cm({ endpoint: 'https://example.com:8443/x?y=1' }))).status).toBe(201);
  });

  test('policies never apply to policies or bindings', async () => {
    const s = await namespace();
    await policy(s, {
      matchConstraints: { resourceRules: rules(['*'], ['*'], ['*']), namespaceSelector: {} },
      matchConditions: [{ name: 'only-marked', expression: "has(object.metadata.labels) && 'vap-deny-all' in object.metadata.labels" }],
      validations: [{ expression: 'false' }],
    });
    const probe = await eventually(
      () => createCm(s, cm({}, { 'vap-deny-all': 'x' })),
      (r) => r.status === 422,
    );
    expect(probe.status).toBe(422);
    const p = await srv.json('POST', `${ADM}/validatingadmissionpolicies`, {
      metadata: { name: `marked-${s.id}`, labels: { 'vap-deny-all': 'x' } },
      spec: { matchConstraints: { resourceRules: rules(['pods']) }, validations: [{ expression: 'true' }] },
    });
    expect(p.status).toBe(201);
    await srv.json('DELETE', `${ADM}/validatingadmissionpolicies/p-${s.id}`);
  });
});

describe('status', () => {
  test('type checking against the matched kinds writes expressionWarnings and observedGeneration', async () => {
    const name = 'typed-policy';
    const r = await srv.json('POST', `${ADM}/validatingadmissionpolicies`, {
      metadata: { name },
      spec: {
        paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
        matchConstraints: {
          resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments', 'replicasets'] }],
        },
        validations: [
          { expression: 'object.spec.replicas <= 5' },
          { expression: 'object.spec.replicass <= 5', messageExpression: "'bad: ' + object.spec.template.spec.containers[0].imagee" },
          { expression: "params.data.max == 'x' && params.dataa == null" },
        ],
      },
    });
    expect(r.status).toBe(201);
    const st = await eventually(
      () => srv.json('GET', `${ADM}/validatingadmissionpolicies/${name}`),
      (g) => g.body.status?.observedGeneration === 1,
    );
    expect(st.body.status.observedGeneration).toBe(1);
    const warnings = st.body.status.typeChecking.expressionWarnings as { fieldRef: string; warning: string }[];
    expect(warnings.map((w) => w.fieldRef)).toEqual([
      'spec.validations[1].expression',
      'spec.validations[1].messageExpression',
      'spec.validations[2].expression',
    ]);
    // One issue per matched kind, in group/version/kind order, naming the kind as the reference does.
    expect(warnings[0]?.warning).toStartWith(
      "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass <= 5\n | ...........^\n",
    );
    expect(warnings[0]?.warning).toContain('\napps/v1, Kind=ReplicaSet: ');
    expect(warnings[1]?.warning).toContain('imagee');
    expect(warnings[2]?.warning).toContain('dataa');
    // The status controller owns what it wrote.
    expect(st.body.metadata.managedFields.some((m: Json) => m.manager === 'validatingadmissionpolicy-status-controller')).toBe(true);
    // A fixed policy: a new generation, checked again, no warnings.
    const fixed = await srv.json(
      'PATCH',
      `${ADM}/validatingadmissionpolicies/${name}`,
      [{ op: 'replace', path: '/spec/validations', value: [{ expression: 'object.spec.replicas <= 5' }] }],
      { 'content-type': 'application/json-patch+json' },
    );
    expect(fixed.status).toBe(200);
    const st2 = await eventually(
      () => srv.json('GET', `${ADM}/validatingadmissionpolicies/${name}`),
      (g) => g.body.status?.observedGeneration === 2,
    );
    expect(st2.body.status.typeChecking).toEqual({});
  });
});

test('metrics count policy checks', async () => {
  const s = await namespace();
  await policy(s, { matchConstraints: { resourceRules: rules(['configmaps']) }, validations: [{ expression: 'false' }] });
  await createDenied(s, () => cm());
  const text = await (await srv.fetch('/metrics')).text();
  expect(text).toMatch(
    new RegExp(
      `apiserver_validating_admission_policy_check_total\\{enforcement_action="deny",error_type="no_error",policy="p-${s.id}",policy_binding="p-${s.id}-binding"\\} [1-9]`,
    ),
  );
  expect(text).toContain('apiserver_validating_admission_policy_check_duration_seconds_bucket{');
});
