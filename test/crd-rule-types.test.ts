/**
 * Custom resource validation rules type-checked against their node's schema when the CRD is
 * written (issue 12 item 2), with cel-go's error texts, and property names escaped as the
 * reference exposes them (`max-size` is `self.max__dash__size`).
 */
import { describe, expect, test } from 'bun:test';
import { serverForFile } from './helpers/server';
import { until } from './helpers/until';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const srv = serverForFile();
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

function crd(plural: string, specRules: string[], rootRules: string[] = []): Json {
  const kind = plural[0]?.toUpperCase() + plural.slice(1, -1);
  return {
    metadata: { name: `${plural}.types.example.com` },
    spec: {
      group: 'types.example.com',
      scope: 'Namespaced',
      names: { plural, singular: plural.slice(0, -1), kind },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              ...(rootRules.length > 0 && { 'x-kubernetes-validations': rootRules.map((rule) => ({ rule })) }),
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    replicas: { type: 'integer' },
                    'max-size': { type: 'integer' },
                    tags: { type: 'array', items: { type: 'string' } },
                  },
                  'x-kubernetes-validations': specRules.map((rule) => ({ rule })),
                },
              },
            },
          },
        },
      ],
    },
  };
}

const ruleValue = (rule: string) =>
  `apiextensions.ValidationRule{Rule:${JSON.stringify(rule)}, Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}`;

describe('rules are type-checked against the schema', () => {
  test('an undefined field and a mismatched operator refuse the CRD with cel-go texts', async () => {
    const r = await srv.json('POST', CRDS, crd('typos', ['self.replicass > 0', "self.replicas == 'x'"]));
    expect(r.status).toBe(422);
    const F = 'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations';
    expect(r.body.details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: `${F}[0].rule`,
        message: `Invalid value: ${ruleValue('self.replicass > 0')}: compilation failed: ERROR: <input>:1:5: undefined field 'replicass'\n | self.replicass > 0\n | ....^`,
      },
      {
        reason: 'FieldValueInvalid',
        field: `${F}[1].rule`,
        message: expect.stringContaining(
          `compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(int, string)'`,
        ),
      },
    ]);
  });

  test('escaped property names, list element types and the root metadata check and evaluate', async () => {
    const body = crd('sizes', ['self.max__dash__size <= 10', 'self.tags.all(t, t.size() < 8)'], ["self.metadata.name.startsWith('s')"]);
    const created = await srv.json('POST', CRDS, body);
    expect(created.status).toBe(201);
    const P = '/apis/types.example.com/v1/namespaces/default/sizes';
    const make = (name: string, spec: Json) =>
      srv.json('POST', P, { apiVersion: 'types.example.com/v1', kind: 'Size', metadata: { name }, spec });
    const ok = await until(
      () => make('small', { 'max-size': 5, tags: ['a'] }),
      (r) => r.status !== 404,
      5000,
    );
    expect(ok.status).toBe(201);
    const big = await make('sbig', { 'max-size': 20 });
    expect(big.status).toBe(422);
    expect(big.body.details.causes[0]).toMatchObject({
      field: 'spec',
      message: 'Invalid value: "object": failed rule: self.max__dash__size <= 10',
    });
    const name = await make('other', { 'max-size': 1 });
    expect(name.status).toBe(422);
    expect(name.body.details.causes[0].message).toContain("failed rule: self.metadata.name.startsWith('s')");
  });

  test('an embedded resource has apiVersion, kind and metadata name and generateName, no other metadata', async () => {
    const body = crd('wraps', []);
    const spec = body.spec.versions[0].schema.openAPIV3Schema.properties.spec;
    spec.properties.template = {
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
    };
    spec['x-kubernetes-validations'] = [
      { rule: "self.template.kind == 'Pod' && self.template.metadata.name.startsWith('w')" },
      { rule: 'self.template.spec.size < 3' },
    ];
    const refused = await srv.json('POST', CRDS, {
      ...body,
      spec: {
        ...body.spec,
        versions: [
          {
            ...body.spec.versions[0],
            schema: {
              openAPIV3Schema: {
                ...body.spec.versions[0].schema.openAPIV3Schema,
                properties: { spec: { ...spec, 'x-kubernetes-validations': [{ rule: 'self.template.metadata.labels.size() > 0' }] } },
              },
            },
          },
        ],
      },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.details.causes[0].message).toContain("undefined field 'labels'");

    expect((await srv.json('POST', CRDS, body)).status).toBe(201);
    const P = '/apis/types.example.com/v1/namespaces/default/wraps';
    const make = (name: string, template: Json) =>
      srv.json('POST', P, {
        apiVersion: 'types.example.com/v1',
        kind: 'Wrap',
        metadata: { name: 'x' },
        spec: { template: { ...template, metadata: { name } } },
      });
    const ok = await until(
      () => make('w1', { apiVersion: 'v1', kind: 'Pod', spec: { size: 1 } }),
      (r) => r.status !== 404,
      5000,
    );
    expect(ok.status).toBe(201);
    // Pruning keeps an embedded resource's apiVersion, kind and metadata.
    expect(ok.body.spec.template).toEqual({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'w1' }, spec: { size: 1 } });
    const bad = await make('v1', { apiVersion: 'v1', kind: 'Pod', spec: { size: 1 } });
    expect(bad.status).toBe(422);
    expect(bad.body.details.causes[0].message).toContain("failed rule: self.template.kind == 'Pod'");
  });
});
