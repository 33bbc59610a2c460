import { describe, expect, test } from 'bun:test';
import type { Obj } from '../api/meta';
import { budgetOf, defaultSelector } from './cluster-objects';
import { pod } from './fixtures.test-helpers';

const svc = (selector?: Record<string, string>): Obj => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 's' },
  spec: { selector },
});
const owned = (apiVersion: string, kind: string, labels: Record<string, string>) =>
  pod('p', {}, { labels, ownerReferences: [{ apiVersion, kind, name: 'o', uid: 'u', controller: true }] });

describe("DefaultSelector (the Services' and the controller's selectors)", () => {
  const owners: Record<string, Obj> = {
    ReplicaSet: { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'o' }, spec: { selector: { matchLabels: { app: 'web' } } } },
    StatefulSet: {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'o' },
      spec: { selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }] } },
    },
    ReplicationController: { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'o' }, spec: { selector: { app: 'web' } } },
  };
  const lookup = (kind: string) => owners[kind];
  // The selector's verdict on some label sets, or undefined for none.
  const verdicts = (p: ReturnType<typeof pod>, services: Obj[]) => {
    const s = defaultSelector(p, services, lookup);
    const sets: Record<string, string>[] = [{ app: 'web', tier: 'a' }, { app: 'web' }, { tier: 'a' }];
    return s && sets.map((l) => s.matches(l));
  };

  test.each([
    ['a ReplicaSet: its selector', owned('apps/v1', 'ReplicaSet', { app: 'web', tier: 'a' }), [], [true, true, false]],
    ['a StatefulSet: its requirements', owned('apps/v1', 'StatefulSet', { app: 'web', tier: 'a' }), [], [true, false, true]],
    ['a ReplicationController: its map', owned('v1', 'ReplicationController', { app: 'web', tier: 'a' }), [], [true, true, false]],
    ['a Service selecting the pod', pod('p', {}, { labels: { tier: 'a' } }), [svc({ tier: 'a' })], [true, false, true]],
    [
      'a Service and a ReplicaSet: both',
      owned('apps/v1', 'ReplicaSet', { app: 'web', tier: 'a' }),
      [svc({ tier: 'a' })],
      [true, false, false],
    ],
    ['a Service not selecting the pod', pod('p', {}, { labels: { tier: 'a' } }), [svc({ tier: 'b' })], undefined],
    ['a Service without a selector', pod('p', {}, { labels: { tier: 'a' } }), [svc()], undefined],
    ['an owner of another group version', owned('apps/v1beta2', 'ReplicaSet', { app: 'web' }), [], undefined],
    ['a Deployment (not a selector source)', owned('apps/v1', 'Deployment', { app: 'web' }), [], undefined],
    ['no owner, no Service', pod('p', {}, { labels: { app: 'web' } }), [], undefined],
  ] as [string, ReturnType<typeof pod>, Obj[], boolean[] | undefined][])('%s', (_, p, services, want) => {
    expect(verdicts(p, services)).toEqual(want);
  });

  test('the anchor is a label every selected pod carries: the ReplicaSet pod-template-hash, else a required one, else none', () => {
    const rs = (matchLabels: Record<string, string>) => () =>
      ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'o' }, spec: { selector: { matchLabels } } }) as Obj;
    const p = owned('apps/v1', 'ReplicaSet', { app: 'web', 'pod-template-hash': 'abc', tier: 'a' });
    expect(defaultSelector(p, [], rs({ app: 'web', 'pod-template-hash': 'abc' }))?.anchor).toEqual(['pod-template-hash', 'abc']);
    expect(defaultSelector(p, [svc({ tier: 'a' })], rs({ app: 'web' }))?.anchor).toEqual(['app', 'web']);
    expect(defaultSelector(pod('q', {}, { labels: { tier: 'a' } }), [svc({ tier: 'a' })], lookup)?.anchor).toEqual(['tier', 'a']);
    // A StatefulSet's expressions only: no label is required by value.
    expect(defaultSelector(owned('apps/v1', 'StatefulSet', { tier: 'a' }), [], lookup)?.anchor).toBeUndefined();
  });

  test('a missing owner object adds nothing', () => {
    expect(defaultSelector(owned('apps/v1', 'ReplicaSet', { app: 'web' }), [], () => undefined)).toBeUndefined();
  });
});

test('budgetOf: status.disruptionsAllowed and disruptedPods; nil and empty selectors match nothing', () => {
  const b = (selector: unknown, status: Record<string, unknown> = {}) =>
    budgetOf({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'b', namespace: 'ns' },
      spec: { selector },
      status,
    });
  const x = b({ matchLabels: { app: 'web' } }, { disruptionsAllowed: 2, disruptedPods: { p1: '2026-01-01T00:00:00Z' } });
  expect(x.namespace).toBe('ns');
  expect(x.disruptionsAllowed).toBe(2);
  expect([...x.disruptedPods]).toEqual(['p1']);
  expect(x.selector?.matches({ app: 'web' })).toBe(true);
  expect(b(undefined).selector).toBeUndefined();
  expect(b({}).selector).toBeUndefined();
  expect(b({ matchLabels: { app: 'web' } }).disruptionsAllowed).toBe(0);
});
