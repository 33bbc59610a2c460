/**
 * CEL runtime cost (issue 12 item 3) end to end: custom resource rules stop at the reference's
 * per-call limit (1,000,000) and per-object budget (10,000,000) with its messages; a
 * ValidatingAdmissionPolicy expression past the per-call limit is an expression error under the
 * policy's failurePolicy. The server never spends more than the limits on a request.
 */
import { describe, expect, test } from 'bun:test';
import { serverForFile } from './helpers/server';
import { until } from './helpers/until';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const srv = serverForFile();

const NESTED = 'self.items.all(x, self.items.all(y, x <= y || x > y))';

/** A CRD whose spec has a list of integers and the given rules at the spec. */
function crdBody(plural: string, rules: string[], maxItems?: number): Json {
  const kind = plural[0]?.toUpperCase() + plural.slice(1, -1);
  return {
    metadata: { name: `${plural}.cost.example.com` },
    spec: {
      group: 'cost.example.com',
      scope: 'Namespaced',
      names: { plural, singular: plural.slice(0, -1), kind, listKind: `${kind}List` },
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
                  properties: { items: { type: 'array', ...(maxItems !== undefined && { maxItems }), items: { type: 'integer' } } },
                  'x-kubernetes-validations': rules.map((rule) => ({ rule })),
                },
              },
            },
          },
        },
      ],
    },
  };
}

async function crd(plural: string, rules: string[], maxItems: number): Promise<void> {
  const r = await srv.json('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crdBody(plural, rules, maxItems));
  expect(r.status).toBe(201);
  await until(
    () => srv.json('GET', `/apis/cost.example.com/v1/namespaces/default/${plural}`),
    (x) => x.status === 200,
    5000,
  );
}

const create = (plural: string, name: string, n: number) =>
  srv.json('POST', `/apis/cost.example.com/v1/namespaces/default/${plural}`, {
    apiVersion: 'cost.example.com/v1',
    kind: plural[0]?.toUpperCase() + plural.slice(1, -1),
    metadata: { name },
    spec: { items: Array.from({ length: n }, (_, i) => i) },
  });

describe('custom resource rules', () => {
  test('a rule past the per-call limit is refused with the reference message, a cheap object passes', async () => {
    // Estimated at ~9,000,000 with 1,000 items at most (under the 10,000,000 a rule may be
    // estimated at), and past the runtime limit of 1,000,000 with 1,000 items.
    await crd('pairs', [NESTED], 1000);
    expect((await create('pairs', 'small', 20)).status).toBe(201);
    const started = performance.now();
    const r = await create('pairs', 'large', 1000);
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    expect(r.body.details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec',
        message: `Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${NESTED}`,
      },
    ]);
  });

  test('rules within the per-call limit share the per-object budget of 10,000,000', async () => {
    // 920,329 each at 350 items (x <= y || x > y over every pair): 13 of them pass the
    // per-call limit one by one and run out of the object's budget together.
    const rules = Array.from({ length: 13 }, (_, i) => `${NESTED} && ${i} >= 0`);
    await crd('budgets', rules, 400);
    expect((await create('budgets', 'small', 30)).status).toBe(201);
    const r = await create('budgets', 'large', 350);
    expect(r.status).toBe(422);
    const causes: Json[] = r.body.details.causes;
    expect(causes.at(-1)).toEqual({
      reason: 'FieldValueInvalid',
      field: 'spec',
      message: 'Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run',
    });
  });
});

describe('estimated cost when the CRD is written', () => {
  test('a rule that could cost more than the limit is refused with the reference message; maxItems makes it acceptable', async () => {
    const r = await srv.json('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crdBody('unbounds', [NESTED]));
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    expect(r.body.details.causes).toContainEqual({
      reason: 'FieldValueForbidden',
      field: 'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule',
      message:
        'Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)',
    });
    const ok = await srv.json('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crdBody('unbounds', [NESTED], 100));
    expect(ok.status).toBe(201);
  });

  test('rules each within the limit but together past 100,000,000 are refused', async () => {
    const rules = Array.from({ length: 12 }, (_, i) => `${NESTED} && ${i} >= 0`);
    const r = await srv.json('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crdBody('totals', rules, 1000));
    expect(r.status).toBe(422);
    const causes: Json[] = r.body.details.causes;
    expect(causes.at(-1)?.field).toBe('spec.validation.openAPIV3Schema');
    expect(causes.at(-1)?.message).toStartWith(
      'Forbidden: x-kubernetes-validations estimated rule & messageExpression cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.',
    );
    expect(causes.filter((c) => c.message.includes('contributed to estimated rule & messageExpression cost total')).length).toBe(4);
  });
});

describe('admission policies', () => {
  const ADM = '/apis/admissionregistration.k8s.io/v1';
  async function policy(name: string, ns: string, failurePolicy: string): Promise<void> {
    const p = await srv.json('POST', `${ADM}/validatingadmissionpolicies`, {
      metadata: { name },
      spec: {
        failurePolicy,
        matchConstraints: {
          namespaceSelector: { matchLabels: { 'cost-test': ns } },
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
        },
        validations: [{ expression: "object.data.all(k, object.data.all(j, object.data[k] + object.data[j] != ''))" }],
      },
    });
    expect(p.status).toBe(201);
    const b = await srv.json('POST', `${ADM}/validatingadmissionpolicybindings`, {
      metadata: { name: `${name}-binding` },
      spec: { policyName: name, validationActions: ['Deny'] },
    });
    expect(b.status).toBe(201);
  }
  const data = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v'.repeat(20)]));

  test('an expression past the per-call limit denies under Fail with the cost error, admits under Ignore', async () => {
    for (const ns of ['cost-fail', 'cost-ignore']) {
      expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: ns, labels: { 'cost-test': ns } } })).status).toBe(201);
    }
    await policy('cost-fail', 'cost-fail', 'Fail');
    await policy('cost-ignore', 'cost-ignore', 'Ignore');
    let i = 0;
    const r = await until(
      () => srv.json('POST', '/api/v1/namespaces/cost-fail/configmaps', { metadata: { name: `big-${++i}` }, data: data(400) }),
      (x) => x.status !== 201,
      3000,
    );
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(
      `configmaps "big-${i}" is forbidden: ValidatingAdmissionPolicy 'cost-fail' with binding 'cost-fail-binding' denied request: ` +
        "expression 'object.data.all(k, object.data.all(j, object.data[k] + object.data[j] != ''))' resulted in error: operation cancelled: actual cost limit exceeded",
    );
    expect((await srv.json('POST', '/api/v1/namespaces/cost-fail/configmaps', { metadata: { name: 'small' }, data: data(5) })).status).toBe(
      201,
    );
    expect(
      (await srv.json('POST', '/api/v1/namespaces/cost-ignore/configmaps', { metadata: { name: 'big' }, data: data(400) })).status,
    ).toBe(201);
  });
});
