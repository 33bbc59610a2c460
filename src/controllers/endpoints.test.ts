import { expect, test } from 'bun:test';
import type { Obj } from '../api/meta';
import { apiserverAddress, computeSubsets, type EndpointSubset, repackSubsets, truncateSubsets } from './endpoints';
import { planSlices, type SliceEndpoint } from './endpointslice/reconciler';
import { findBestMatch } from './volumes/matching';

const pod = (name: string, ip: string, ready: boolean, ports: { name: string; containerPort: number }[] = []): Obj => ({
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, labels: { app: 'a' } },
  spec: { nodeName: 'n1', containers: [{ name: 'c', ports }] },
  status: { podIP: ip, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

const svc: Obj = {
  metadata: { name: 'svc', namespace: 'ns' },
  spec: { selector: { app: 'a' }, ports: [{ name: 'web', port: 80, targetPort: 'http' }] },
};

test('pods group into subsets by their resolved ports; a pod without the named port is left out', () => {
  const subsets = computeSubsets(svc, [
    pod('a', '10.0.0.1', true, [{ name: 'http', containerPort: 8080 }]),
    pod('b', '10.0.0.2', false, [{ name: 'http', containerPort: 8080 }]),
    pod('c', '10.0.0.3', true, [{ name: 'http', containerPort: 9090 }]),
    pod('d', '10.0.0.4', true, [{ name: 'other', containerPort: 1 }]),
    pod('e', '', true, [{ name: 'http', containerPort: 8080 }]),
  ]);
  expect(subsets.map((s) => [s.ports?.[0]?.port, s.addresses?.map((a) => a.ip), s.notReadyAddresses?.map((a) => a.ip)])).toEqual([
    [8080, ['10.0.0.1'], ['10.0.0.2']],
    [9090, ['10.0.0.3'], undefined],
  ]);
  expect(subsets[0]?.addresses?.[0]).toEqual({
    ip: '10.0.0.1',
    nodeName: 'n1',
    targetRef: { kind: 'Pod', namespace: 'ns', name: 'a', uid: 'uid-a' },
  });
});

test('repack merges the ports of one address; truncation keeps 1000, ready first, proportionally', () => {
  const a = { ip: '10.0.0.1' };
  const packed = repackSubsets([
    { addresses: [a], ports: [{ name: 'x', port: 1, protocol: 'TCP' }] },
    { addresses: [a], ports: [{ name: 'y', port: 2, protocol: 'TCP' }] },
  ]);
  expect(packed).toEqual([
    {
      addresses: [a],
      ports: [
        { name: 'x', port: 1, protocol: 'TCP' },
        { name: 'y', port: 2, protocol: 'TCP' },
      ],
    },
  ]);
  const ips = (n: number, base: number) => Array.from({ length: n }, (_, i) => ({ ip: `10.${base}.${i >> 8}.${i & 255}` }));
  const subsets: EndpointSubset[] = [
    { addresses: ips(600, 1), notReadyAddresses: ips(100, 2) },
    { addresses: ips(300, 3), notReadyAddresses: ips(300, 4) },
  ];
  expect(truncateSubsets(subsets)).toBe(true);
  expect(subsets.map((s) => [s.addresses?.length, s.notReadyAddresses?.length ?? 0])).toEqual([
    [600, 25],
    [300, 75],
  ]);
  const ready: EndpointSubset[] = [{ addresses: ips(1200, 5) }];
  expect(truncateSubsets(ready)).toBe(true);
  expect(ready[0]?.addresses).toHaveLength(1000);
  expect(truncateSubsets([{ addresses: ips(1000, 6) }])).toBe(false);
});

test('the slice plan reuses slices: a changed endpoint updates its slice only, new ones fill it, full chunks make new slices', () => {
  const ep = (i: number, ready = true): SliceEndpoint => ({
    addresses: [`10.0.${i >> 8}.${i & 255}`],
    conditions: { ready, serving: ready, terminating: false },
    targetRef: { kind: 'Pod', namespace: 'ns', name: `p${i}`, uid: `u${i}` },
  });
  const ports = [{ name: 'web', port: 80, protocol: 'TCP' }];
  const fresh = planSlices([{ ports, endpoints: Array.from({ length: 150 }, (_, i) => ep(i)) }], []);
  expect(fresh.create.map((c) => c.endpoints.length)).toEqual([100, 50]);
  const slices: Obj[] = fresh.create.map((c, i) => ({ metadata: { name: `s${i}`, uid: `s${i}` }, ports, endpoints: c.endpoints }));
  // Pod 120 goes not ready, pods 150..159 come: one slice written, the other untouched.
  const want = Array.from({ length: 160 }, (_, i) => ep(i, i !== 120));
  const plan = planSlices([{ ports, endpoints: want }], slices);
  expect(plan.create).toEqual([]);
  expect(plan.delete).toEqual([]);
  expect(plan.unchanged.map((s) => s.metadata.name)).toEqual(['s0']);
  expect(plan.update.map((u) => [u.slice.metadata.name, u.endpoints.length])).toEqual([['s1', 60]]);
  // Every pod gone: the slices are deleted.
  const none = planSlices([], slices);
  expect(none.delete).toHaveLength(2);
});

test('the smallest fitting volume; pre-bound first; WaitForFirstConsumer without a node only pre-bound', () => {
  const pv = (name: string, size: string, extra: Record<string, unknown> = {}): Obj => ({
    metadata: { name },
    spec: { capacity: { storage: size }, accessModes: ['ReadWriteOnce'], storageClassName: 'm', ...extra },
    status: { phase: 'Available' },
  });
  const claim: Obj = {
    metadata: { name: 'c', namespace: 'ns', uid: 'cu' },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'm', resources: { requests: { storage: '2Gi' } } },
  };
  const vols = [pv('a', '1Gi'), pv('b', '10Gi'), pv('c', '3Gi'), pv('d', '2Gi', { accessModes: ['ReadOnlyMany'] })];
  expect(findBestMatch(claim, vols, false, undefined)?.metadata.name).toBe('c');
  const pre = pv('e', '50Gi', { claimRef: { namespace: 'ns', name: 'c' } });
  expect(findBestMatch(claim, [...vols, pre], false, undefined)?.metadata.name).toBe('e');
  expect(findBestMatch(claim, vols, true, undefined)).toBeUndefined();
  expect(findBestMatch(claim, [...vols, pre], true, undefined)?.metadata.name).toBe('e');
});

test('the kubernetes Service is published only for a routable IPv4 bind address', () => {
  expect(apiserverAddress('127.0.0.1', 6443)).toBeUndefined();
  expect(apiserverAddress('0.0.0.0', 6443)).toBeUndefined();
  expect(apiserverAddress('::1', 6443)).toBeUndefined();
  expect(apiserverAddress('10.1.2.3', 6443)).toEqual({ ip: '10.1.2.3', port: 6443 });
  expect(apiserverAddress('0.0.0.0', 6443, ['169.254.0.1', '192.0.2.2'])).toEqual({ ip: '192.0.2.2', port: 6443 });
});
