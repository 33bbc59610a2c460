/**
 * The conditional defaults (defaulters.ts) as the reference's SetDefaults_* apply them, through
 * SchemaSet.normalize: wherever the definition occurs, only for absent fields, Pod-only rules not
 * on templates.
 */
import { describe, expect, test } from 'bun:test';
import { defaulters, imageTag } from './defaulters';
import { SchemaSet } from './engine';
import generated from './generated/definitions.json';
import { overlays } from './overlays';
import type { Definitions } from './types';

// biome-ignore lint/suspicious/noExplicitAny: free-form objects under test
type Any = any;
const set = new SchemaSet(generated as unknown as Definitions, overlays, defaulters);
const norm = (def: string, o: Any): Any => {
  const r = set.normalize(`io.svc.api.${def}`, o, { prune: true, defaults: true });
  expect(r.typeErrors).toEqual([]);
  return o;
};

test.each([
  ['nginx', 'latest'],
  ['nginx:1.25', '1.25'],
  ['nginx:latest', 'latest'],
  ['registry.local:5000/app', 'latest'],
  ['registry.local:5000/app:v2', 'v2'],
  [`app@sha256:${'a'.repeat(64)}`, ''],
  [`app:v1@sha256:${'a'.repeat(64)}`, 'v1'],
  ['', ''],
])('imageTag(%p) = %p', (image, tag) => {
  expect(imageTag(image)).toBe(tag);
});

describe('containers', () => {
  test('imagePullPolicy from the tag, in pods and in every template; a set value stays', () => {
    const containers = () => [
      { name: 'a', image: 'nginx' },
      { name: 'b', image: 'nginx:1.25' },
      { name: 'c', image: 'nginx:1.25', imagePullPolicy: 'Never' },
    ];
    const pod = norm('core.v1.Pod', { spec: { containers: containers(), initContainers: containers() } });
    const dep = norm('apps.v1.Deployment', { spec: { template: { spec: { containers: containers() } } } });
    for (const cs of [pod.spec.containers, pod.spec.initContainers, dep.spec.template.spec.containers])
      expect(cs.map((c: Any) => c.imagePullPolicy)).toEqual(['Always', 'IfNotPresent', 'Never']);
  });

  test('Pod only: enableServiceLinks, requests from limits, hostPort with hostNetwork', () => {
    const spec = () => ({
      hostNetwork: true,
      containers: [
        {
          name: 'a',
          image: 'x:1',
          ports: [{ containerPort: 8080 }, { containerPort: 9090, hostPort: 9091 }],
          resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m' } },
        },
        { name: 'b', image: 'x:1', resources: { limits: { cpu: '2' } } },
      ],
    });
    const pod = norm('core.v1.Pod', { spec: spec() });
    expect(pod.spec.enableServiceLinks).toBe(true);
    expect(pod.spec.containers[0].resources.requests).toEqual({ cpu: '500m', memory: '1Gi' });
    expect(pod.spec.containers[1].resources.requests).toEqual({ cpu: '2' });
    expect(pod.spec.containers[0].ports.map((p: Any) => p.hostPort)).toEqual([8080, 9091]);
    const tpl = norm('core.v1.PodTemplate', { template: { spec: spec() } }).template.spec;
    expect(tpl.enableServiceLinks).toBeUndefined();
    expect(tpl.containers[1].resources.requests).toBeUndefined();
    expect(tpl.containers[0].ports[0].hostPort).toBeUndefined();
    expect(norm('core.v1.Pod', { spec: { enableServiceLinks: false, containers: [] } }).spec.enableServiceLinks).toBe(false);
  });

  test('a volume without a source is an emptyDir', () => {
    const pod = norm('core.v1.Pod', { spec: { containers: [], volumes: [{ name: 'a' }, { name: 'b', configMap: { name: 'c' } }] } });
    expect(pod.spec.volumes[0]).toEqual({ name: 'a', emptyDir: {} });
    expect(pod.spec.volumes[1].emptyDir).toBeUndefined();
  });
});

describe('services', () => {
  const svc = (spec: Any) => norm('core.v1.Service', { spec }).spec;

  test('ClusterIP: targetPort from port (unset, 0 or ""), internalTrafficPolicy, no externalTrafficPolicy', () => {
    const s = svc({ ports: [{ port: 80 }, { port: 81, targetPort: 0 }, { port: 82, targetPort: '' }, { port: 83, targetPort: 'http' }] });
    expect(s.ports.map((p: Any) => p.targetPort)).toEqual([80, 81, 82, 'http']);
    expect(s).toMatchObject({ type: 'ClusterIP', sessionAffinity: 'None', internalTrafficPolicy: 'Cluster' });
    expect(s.externalTrafficPolicy).toBeUndefined();
    expect(s.allocateLoadBalancerNodePorts).toBeUndefined();
  });

  test('NodePort and LoadBalancer are externally accessible; a ClusterIP with externalIPs too', () => {
    expect(svc({ type: 'NodePort', ports: [{ port: 80 }] }).externalTrafficPolicy).toBe('Cluster');
    const lb = svc({ type: 'LoadBalancer', ports: [{ port: 80 }] });
    expect(lb).toMatchObject({ externalTrafficPolicy: 'Cluster', internalTrafficPolicy: 'Cluster', allocateLoadBalancerNodePorts: true });
    expect(svc({ externalIPs: ['1.2.3.4'], ports: [{ port: 80 }] }).externalTrafficPolicy).toBe('Cluster');
    expect(svc({ type: 'LoadBalancer', externalTrafficPolicy: 'Local', allocateLoadBalancerNodePorts: false })).toMatchObject({
      externalTrafficPolicy: 'Local',
      allocateLoadBalancerNodePorts: false,
    });
  });

  test('ExternalName gets no traffic policies', () => {
    const s = svc({ type: 'ExternalName', externalName: 'example.com' });
    expect(s.internalTrafficPolicy).toBeUndefined();
    expect(s.externalTrafficPolicy).toBeUndefined();
  });

  test('session affinity: ClientIP gets the 3 h timeout, None drops the config', () => {
    expect(svc({ sessionAffinity: 'ClientIP' }).sessionAffinityConfig).toEqual({ clientIP: { timeoutSeconds: 10800 } });
    expect(svc({ sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } }).sessionAffinityConfig).toEqual(
      {
        clientIP: { timeoutSeconds: 60 },
      },
    );
    expect(svc({ sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } }).sessionAffinityConfig).toBeUndefined();
  });
});

test('deployment strategy: RollingUpdate gets 25% / 25%, each only when absent; Recreate none', () => {
  const dep = (strategy: Any) =>
    norm('apps.v1.Deployment', { spec: { ...(strategy ? { strategy } : {}), template: { spec: { containers: [] } } } }).spec.strategy;
  expect(dep(undefined)).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
  expect(dep({ rollingUpdate: { maxSurge: 1 } })).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: 1 } });
  expect(dep({ type: 'Recreate' })).toEqual({ type: 'Recreate' });
});

test('network policy types: Ingress, and Egress with egress rules; set types stay', () => {
  const np = (spec: Any) => norm('networking.v1.NetworkPolicy', { spec }).spec.policyTypes;
  expect(np({ podSelector: {} })).toEqual(['Ingress']);
  expect(np({ podSelector: {}, egress: [{}] })).toEqual(['Ingress', 'Egress']);
  expect(np({ podSelector: {}, egress: [{}], policyTypes: ['Egress'] })).toEqual(['Egress']);
});

test('node status: allocatable from capacity when unset', () => {
  expect(norm('core.v1.Node', { status: { capacity: { cpu: '4' } } }).status.allocatable).toEqual({ cpu: '4' });
  expect(norm('core.v1.Node', { status: { capacity: { cpu: '4' }, allocatable: { cpu: '3' } } }).status.allocatable).toEqual({ cpu: '3' });
});

test('without defaults, nothing is filled', () => {
  const o: Any = { spec: { containers: [{ name: 'a', image: 'nginx' }] } };
  set.normalize('io.svc.api.core.v1.Pod', o, { prune: true, defaults: false });
  expect(o.spec.containers[0].imagePullPolicy).toBeUndefined();
  expect(o.spec.enableServiceLinks).toBeUndefined();
});

describe('HorizontalPodAutoscaler behavior (autoscaling/v2)', () => {
  const spec = (behavior?: Any): Any => ({
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' },
    maxReplicas: 3,
    ...(behavior ? { behavior } : {}),
  });

  test('absent: stays absent (the controller applies its own rules)', () => {
    expect(norm('autoscaling.v2.HorizontalPodAutoscalerSpec', spec()).behavior).toBeUndefined();
  });

  test('given in part: the rest from the default rules, each given field kept', () => {
    const o = norm('autoscaling.v2.HorizontalPodAutoscalerSpec', spec({ scaleDown: { selectPolicy: 'Min' } }));
    expect(o.behavior).toEqual({
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [
          { type: 'Pods', value: 4, periodSeconds: 15 },
          { type: 'Percent', value: 100, periodSeconds: 15 },
        ],
      },
      scaleDown: { selectPolicy: 'Min', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
    });
    const up = norm('autoscaling.v2.HorizontalPodAutoscalerSpec', spec({ scaleUp: { stabilizationWindowSeconds: 30, policies: [] } }));
    expect(up.behavior.scaleUp).toEqual({ stabilizationWindowSeconds: 30, selectPolicy: 'Max', policies: [] });
  });
});
