/** Cells of the core/v1 kinds of issue 35, as the reference's printers fill them. */
import { describe, expect, test } from 'bun:test';
import type { Obj } from '../api/meta';
import {
  accessModesString,
  formatEndpoints,
  PERSISTENT_VOLUME_CLAIM_COLUMNS,
  PERSISTENT_VOLUME_COLUMNS,
  REPLICATION_CONTROLLER_COLUMNS,
} from './columns-core';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;
const o = (x: Any): Obj => ({ metadata: { name: 'x', creationTimestamp: '2026-01-01T00:00:00Z' }, ...x });
const NOW = Date.parse('2026-01-01T00:00:10Z');
const row = (cols: typeof PERSISTENT_VOLUME_COLUMNS, x: Obj) => cols.map((c) => c.cell(x, NOW));

describe('endpoints', () => {
  test('<none> without subsets; ip:port per port; bare ips without ports; IPv6 bracketed', () => {
    expect(formatEndpoints(o({}))).toBe('<none>');
    expect(formatEndpoints(o({ subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }, { port: 81 }] }] }))).toBe(
      '10.0.0.1:80,10.0.0.1:81',
    );
    expect(formatEndpoints(o({ subsets: [{ addresses: [{ ip: '10.0.0.1' }] }] }))).toBe('10.0.0.1');
    expect(formatEndpoints(o({ subsets: [{ addresses: [{ ip: 'fd00::1' }], ports: [{ port: 443 }] }] }))).toBe('[fd00::1]:443');
    expect(formatEndpoints(o({ subsets: [{ notReadyAddresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }] }))).toBe('');
  });

  test('three at most, then "+ N more..."', () => {
    const addresses = ['1', '2', '3', '4', '5'].map((n) => ({ ip: `10.0.0.${n}` }));
    expect(formatEndpoints(o({ subsets: [{ addresses, ports: [{ port: 80 }] }] }))).toBe('10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 2 more...');
  });
});

describe('volumes and claims', () => {
  test('access modes in the reference order', () => {
    expect(accessModesString(['ReadWriteOncePod', 'ReadWriteMany', 'ReadWriteOnce', 'ReadOnlyMany'])).toBe('RWO,ROX,RWX,RWOP');
    expect(accessModesString(undefined)).toBe('');
  });

  test('a bound volume', () => {
    const pv = o({
      metadata: {
        name: 'pv',
        creationTimestamp: '2026-01-01T00:00:00Z',
        annotations: { 'volume.beta.kubernetes.io/storage-class': 'old' },
      },
      spec: {
        capacity: { storage: '1024Mi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Delete',
        claimRef: { namespace: 'ns', name: 'c' },
        storageClassName: 'new',
        volumeMode: 'Block',
      },
      status: { phase: 'Bound' },
    });
    expect(row(PERSISTENT_VOLUME_COLUMNS, pv)).toEqual(['1Gi', 'RWO', 'Delete', 'Bound', 'ns/c', 'old', '<unset>', '', '10s', 'Block']);
  });

  test('a claim shows capacity and modes of its volume only once it names one; Terminating when deleted', () => {
    const pending = o({
      spec: { resources: { requests: { storage: '1Gi' } }, accessModes: ['ReadWriteOnce'] },
      status: { phase: 'Pending' },
    });
    expect(row(PERSISTENT_VOLUME_CLAIM_COLUMNS, pending)).toEqual(['Pending', '', '', '', '', '<unset>', '10s', '<unset>']);
    const bound = o({
      metadata: { name: 'c', creationTimestamp: '2026-01-01T00:00:00Z', deletionTimestamp: '2026-01-01T00:00:05Z' },
      spec: { volumeName: 'pv', storageClassName: 'fast', volumeMode: 'Filesystem' },
      status: { phase: 'Bound', capacity: { storage: '2Gi' }, accessModes: ['ReadWriteMany'] },
    });
    expect(row(PERSISTENT_VOLUME_CLAIM_COLUMNS, bound)).toEqual([
      'Terminating',
      'pv',
      '2Gi',
      'RWX',
      'fast',
      '<unset>',
      '10s',
      'Filesystem',
    ]);
  });
});

test('replication controller: desired defaults to 1; the selector map as a=b', () => {
  const rc = o({
    spec: {
      selector: { b: '2', a: '1' },
      template: {
        spec: {
          containers: [
            { name: 'c', image: 'i' },
            { name: 'd', image: 'j' },
          ],
        },
      },
    },
    status: { replicas: 2, readyReplicas: 1 },
  });
  expect(row(REPLICATION_CONTROLLER_COLUMNS, rc)).toEqual([1, 2, 1, '10s', 'c,d', 'i,j', 'a=1,b=2']);
});
