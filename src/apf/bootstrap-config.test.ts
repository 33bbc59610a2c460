import { describe, expect, test } from 'bun:test';
import type { Obj } from '../api/meta';
import { validateFlowSchema, validatePriorityLevelConfiguration } from '../kinds/validation/flowcontrol';
import { bootstrapConfig } from './bootstrap-config';

type J = Record<string, unknown>;

const spec = (o: Obj): J => o.spec as J;
const first = (v: unknown): J => (v as J[])[0]!;
const named = (list: Obj[], name: string): Obj => {
  const o = list.find((x) => x.metadata.name === name);
  if (!o) throw new Error(`no ${name}`);
  return o;
};

describe('bootstrapConfig', () => {
  const cfg = bootstrapConfig();
  const plcs = [...cfg.mandatory.priorityLevels, ...cfg.suggested.priorityLevels];
  const schemas = [...cfg.mandatory.flowSchemas, ...cfg.suggested.flowSchemas];

  test('holds the reference objects', () => {
    expect(cfg.mandatory.priorityLevels.map((o) => o.metadata.name).sort()).toEqual(['catch-all', 'exempt']);
    expect(cfg.mandatory.flowSchemas.map((o) => o.metadata.name).sort()).toEqual(['catch-all', 'exempt']);
    expect(cfg.suggested.priorityLevels.map((o) => o.metadata.name)).toEqual([
      'system',
      'node-high',
      'leader-election',
      'workload-high',
      'workload-low',
      'global-default',
    ]);
    expect(cfg.suggested.flowSchemas.map((o) => o.metadata.name)).toEqual([
      'system-nodes',
      'system-node-high',
      'probes',
      'system-leader-election',
      'workload-leader-election',
      'endpoint-controller',
      'kube-controller-manager',
      'kube-scheduler',
      'kube-system-service-accounts',
      'service-accounts',
      'global-default',
    ]);
  });

  test('every object passes validation', () => {
    for (const o of plcs) {
      expect(o.apiVersion).toBe('flowcontrol.apiserver.svc.io/v1');
      expect(o.kind).toBe('PriorityLevelConfiguration');
      expect({ name: o.metadata.name, errs: validatePriorityLevelConfiguration(o) }).toEqual({ name: o.metadata.name, errs: [] });
    }
    for (const o of schemas) {
      expect(o.apiVersion).toBe('flowcontrol.apiserver.svc.io/v1');
      expect(o.kind).toBe('FlowSchema');
      expect({ name: o.metadata.name, errs: validateFlowSchema(o) }).toEqual({ name: o.metadata.name, errs: [] });
    }
  });

  test('names are unique and every schema names an existing priority level', () => {
    const plNames = plcs.map((o) => o.metadata.name);
    expect(new Set(plNames).size).toBe(plNames.length);
    const fsNames = schemas.map((o) => o.metadata.name);
    expect(new Set(fsNames).size).toBe(fsNames.length);
    for (const o of schemas) {
      const pl = (spec(o).priorityLevelConfiguration as J).name as string;
      expect({ schema: o.metadata.name, found: plNames.includes(pl) }).toEqual({ schema: o.metadata.name, found: true });
    }
  });

  test('carries the autoupdate annotation', () => {
    for (const o of [...plcs, ...schemas]) expect(o.metadata.annotations).toEqual({ 'apf.kubernetes.io/autoupdate-spec': 'true' });
  });

  test('mandatory facts', () => {
    expect(spec(named(cfg.mandatory.flowSchemas, 'exempt')).matchingPrecedence).toBe(1);
    expect(spec(named(cfg.mandatory.flowSchemas, 'exempt')).distinguisherMethod).toBeUndefined();
    expect(spec(named(cfg.mandatory.flowSchemas, 'catch-all')).matchingPrecedence).toBe(10000);
    expect(spec(named(cfg.mandatory.priorityLevels, 'exempt'))).toEqual({
      type: 'Exempt',
      exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 },
    });
    expect(spec(named(cfg.mandatory.priorityLevels, 'catch-all'))).toEqual({
      type: 'Limited',
      limited: { nominalConcurrencyShares: 5, limitResponse: { type: 'Reject' }, lendablePercent: 0 },
    });
  });

  test('suggested facts', () => {
    expect(spec(named(cfg.suggested.priorityLevels, 'workload-low'))).toEqual({
      type: 'Limited',
      limited: {
        nominalConcurrencyShares: 100,
        limitResponse: { type: 'Queue', queuing: { queues: 128, handSize: 6, queueLengthLimit: 50 } },
        lendablePercent: 90,
      },
    });
    const leader = (spec(named(cfg.suggested.priorityLevels, 'leader-election')).limited as J).limitResponse as J;
    expect(leader.queuing).toEqual({ queues: 16, handSize: 4, queueLengthLimit: 50 });

    const probes = spec(named(cfg.suggested.flowSchemas, 'probes'));
    expect(probes.matchingPrecedence).toBe(2);
    expect((probes.priorityLevelConfiguration as J).name).toBe('exempt');
    expect(probes.rules).toEqual([
      {
        subjects: [
          { kind: 'Group', group: { name: 'system:unauthenticated' } },
          { kind: 'Group', group: { name: 'system:authenticated' } },
        ],
        nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }],
      },
    ]);

    const nodeHigh = spec(named(cfg.suggested.flowSchemas, 'system-node-high'));
    expect(nodeHigh.distinguisherMethod).toEqual({ type: 'ByUser' });
    expect(first(nodeHigh.rules).resourceRules).toEqual([
      { verbs: ['*'], apiGroups: [''], resources: ['nodes', 'nodes/status'], clusterScope: true, namespaces: ['*'] },
      { verbs: ['*'], apiGroups: ['coordination.k8s.io'], resources: ['leases'], namespaces: ['*'] },
    ]);

    const sa = spec(named(cfg.suggested.flowSchemas, 'kube-system-service-accounts'));
    expect(sa.matchingPrecedence).toBe(900);
    expect(sa.distinguisherMethod).toEqual({ type: 'ByNamespace' });
    expect(first(sa.rules).subjects).toEqual([{ kind: 'ServiceAccount', serviceAccount: { namespace: 'kube-system', name: '*' } }]);
  });

  test('returns fresh objects on every call', () => {
    const a = bootstrapConfig();
    const wl = named(a.suggested.priorityLevels, 'workload-low');
    (spec(wl).limited as J).nominalConcurrencyShares = 1;
    wl.metadata.name = 'changed';
    const probes = spec(named(a.suggested.flowSchemas, 'probes'));
    first(first(probes.rules).nonResourceRules).verbs = ['*'];
    const everything = spec(named(a.suggested.flowSchemas, 'global-default'));
    (first(first(everything.rules).resourceRules).verbs as string[]).push('x');
    named(a.mandatory.flowSchemas, 'exempt').metadata.annotations!['apf.kubernetes.io/autoupdate-spec'] = 'false';

    expect(bootstrapConfig()).toEqual(cfg);
  });
});
