import { describe, expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { builtinTypes } from '../../kinds/builder';
import { mergeApplyConfiguration } from './apply-configuration';

const { schemas } = builtinTypes({});
const DEPLOYMENT = 'io.svc.api.apps.v1.Deployment';
const POD = 'io.svc.api.core.v1.Pod';

const deployment: Obj = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', labels: { app: 'web' } },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx', args: ['a'] }] } },
  },
};

describe('mergeApplyConfiguration', () => {
  test('fields, maps and map lists merge; the object given is not changed', () => {
    const before = structuredClone(deployment);
    const out = mergeApplyConfiguration(schemas, DEPLOYMENT, deployment, {
      metadata: { labels: { team: 'blue' } },
      spec: {
        replicas: 3,
        template: {
          spec: {
            containers: [
              { name: 'sidecar', image: 'proxy' },
              { name: 'app', image: 'nginx:2' },
            ],
          },
        },
      },
    });
    expect(deployment).toEqual(before);
    expect(out.metadata.labels).toEqual({ app: 'web', team: 'blue' });
    expect((out.spec as { replicas: number }).replicas).toBe(3);
    const containers = (out.spec as { template: { spec: { containers: { name: string; image: string; args?: string[] }[] } } }).template
      .spec.containers;
    expect(containers.map((c) => [c.name, c.image])).toEqual([
      ['sidecar', 'proxy'],
      ['app', 'nginx:2'],
    ]);
    expect(containers[1]?.args).toEqual(['a']);
  });

  test.each([
    ['an atomic list', POD, { spec: { containers: [{ name: 'app', args: ['x'] }] } }, '.spec.containers[0].args'],
    ['an atomic struct', DEPLOYMENT, { spec: { selector: { matchLabels: { a: 'b' } } } }, '.spec.selector'],
    [
      'several',
      POD,
      {
        spec: {
          containers: [{ name: 'a', command: ['x'] }],
          nodeSelector: { a: 'b' },
          affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [] } } },
        },
      },
      '.spec.containers[0].command, .spec.nodeSelector, .spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution, .spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms',
    ],
  ])('%s is refused', (_, def, patch, paths) => {
    expect(() => mergeApplyConfiguration(schemas, def, { apiVersion: 'v1', kind: 'X', metadata: { name: 'x' } }, patch)).toThrow(
      `invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: ${paths}`,
    );
  });

  test('a map list item without its key cannot be merged', () => {
    expect(() =>
      mergeApplyConfiguration(
        schemas,
        POD,
        { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } },
        { spec: { containers: [{ image: 'x' }] } },
      ),
    ).toThrow('failed to merge patch: .spec.containers: element 0: associative list with keys has an element that omits key field "name"');
  });

  test('without a schema the shapes come from the values (maps merge, lists replace)', () => {
    const out = mergeApplyConfiguration(
      schemas,
      undefined,
      { apiVersion: 'x/v1', kind: 'X', metadata: { name: 'x' }, spec: { a: 1, l: [1] } },
      {
        spec: { b: 2 },
      },
    );
    expect(out.spec).toEqual({ a: 1, b: 2, l: [1] });
  });
});
