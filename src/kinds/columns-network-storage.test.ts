/** Cells of the networking, discovery and storage columns on hand-made objects (the reference's printers). */
import { describe, expect, test } from 'bun:test';
import type { Obj } from '../api/meta';
import type { Column } from '../codec/table';
import { ENDPOINT_SLICE, INGRESS, INGRESS_CLASS, IP_ADDRESS, STORAGE_CLASS } from './columns-network-storage';

const cells = (cols: Column[], o: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(cols.map((c) => [c.name, c.cell({ metadata: { name: 'x' }, ...o } as Obj, Date.now())]));

describe('Ingress', () => {
  test('hosts: empty ones skipped, "*" when none, past three "+ N more..." counting rules', () => {
    const rules = (hosts: string[]) => ({ spec: { rules: hosts.map((host) => (host ? { host } : {})) } });
    expect(cells(INGRESS, rules([])).Hosts).toBe('*');
    expect(cells(INGRESS, rules(['', ''])).Hosts).toBe('*');
    expect(cells(INGRESS, rules(['a', '', 'b'])).Hosts).toBe('a,b');
    expect(cells(INGRESS, rules(['a', 'b', 'c', 'd', 'e'])).Hosts).toBe('a,b,c + 2 more...');
  });

  test('class <none>, address sorted and unique, ports 80 or "80, 443"', () => {
    const c = cells(INGRESS, {
      spec: { tls: [{}] },
      status: { loadBalancer: { ingress: [{ ip: '10.0.0.2' }, { hostname: 'lb.example.com' }, { ip: '10.0.0.1' }, { ip: '10.0.0.2' }] } },
    });
    expect(c).toMatchObject({ Class: '<none>', Address: '10.0.0.1,10.0.0.2,lb.example.com', Ports: '80, 443' });
    expect(cells(INGRESS, { spec: {} }).Ports).toBe('80');
  });
});

test('IngressClass parameters: Kind[.group]/name, <none>', () => {
  expect(cells(INGRESS_CLASS, { spec: { controller: 'a.io/b' } }).Parameters).toBe('<none>');
  expect(cells(INGRESS_CLASS, { spec: { parameters: { kind: 'P', name: 'n' } } }).Parameters).toBe('P/n');
  expect(cells(INGRESS_CLASS, { spec: { parameters: { apiGroup: 'x.io', kind: 'P', name: 'n' } } }).Parameters).toBe('P.x.io/n');
});

test('IPAddress parentRef: resource[.group][/namespace]/name in lower case', () => {
  expect(cells(IP_ADDRESS, { spec: { parentRef: { group: 'Gateway.Example.io', resource: 'Gateways', name: 'gw' } } }).ParentRef).toBe(
    'gateways.gateway.example.io/gw',
  );
  expect(cells(IP_ADDRESS, { spec: {} }).ParentRef).toBe('<none>');
});

test('EndpointSlice: ports by number, name or *; up to three addresses then "+ N more..."; <unset>', () => {
  const c = cells(ENDPOINT_SLICE, {
    addressType: 'IPv4',
    ports: [{ port: 80 }, { name: 'dns' }, {}, { port: 9 }],
    endpoints: [{ addresses: ['10.0.0.1', '10.0.0.2'] }, { addresses: ['10.0.0.3', '10.0.0.4', '10.0.0.5'] }],
  });
  expect(c).toMatchObject({ Ports: '80,dns,* + 1 more...', Endpoints: '10.0.0.1,10.0.0.2,10.0.0.3 + 2 more...' });
  expect(cells(ENDPOINT_SLICE, { addressType: 'FQDN' })).toMatchObject({ Ports: '<unset>', Endpoints: '<unset>' });
});

test('StorageClass: "(default)" after the name for either annotation; Delete, Immediate, false when unset', () => {
  const sc = (annotations: Record<string, string>) =>
    cells(STORAGE_CLASS, { metadata: { name: 'std', annotations }, provisioner: 'p.io/x' });
  expect(sc({ 'storageclass.kubernetes.io/is-default-class': 'true' }).Name).toBe('std (default)');
  expect(sc({ 'storageclass.beta.kubernetes.io/is-default-class': 'true' }).Name).toBe('std (default)');
  expect(sc({ 'storageclass.kubernetes.io/is-default-class': 'True' }).Name).toBe('std');
  expect(sc({})).toMatchObject({ ReclaimPolicy: 'Delete', VolumeBindingMode: 'Immediate', AllowVolumeExpansion: false });
});
