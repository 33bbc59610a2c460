/** PersistentVolume, PersistentVolumeClaim, ReplicationController and Endpoints rules as tables of cases. */
import { describe, expect, test } from 'bun:test';
import type { Obj } from '../../api/meta';
import { fieldErrorText } from '../../api/status';
import type { FieldError } from '../../api/validation';
import { validateEndpoints, validateReplicationControllerSpec, validateReplicationControllerStatus } from './core-controllers';
import {
  stampPhaseTransition,
  validatePersistentVolumeClaimUpdate,
  validatePersistentVolumeSpec,
  validatePersistentVolumeUpdate,
} from './core-storage';
import { persistentVolumeClaimSpec } from './core-volumes';

// biome-ignore lint/suspicious/noExplicitAny: test data
type Any = any;
const causes = (errs: FieldError[]) => errs.map((e) => [e.field, fieldErrorText(e)]);
const o = (x: Any): Obj => ({ metadata: { name: 'x', namespace: 'default' }, ...x });

const pv = (x: Any = {}) => ({ capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/d' }, ...x });

describe('PersistentVolume', () => {
  test.each([
    ['valid', pv(), []],
    ['no access modes', pv({ accessModes: [] }), [['spec.accessModes', 'Required value']]],
    [
      'ReadWriteOncePod with another mode',
      pv({ accessModes: ['ReadWriteOncePod', 'ReadOnlyMany'] }),
      [['spec.accessModes', 'Forbidden: may not use ReadWriteOncePod with other access modes']],
    ],
    [
      'capacity other than storage',
      pv({ capacity: { storage: '1Gi', cpu: '1' } }),
      [['spec.capacity', 'Unsupported value: core.ResourceList{"cpu":"1", "storage":"1Gi"}: supported values: "storage"']],
    ],
    ['zero capacity', pv({ capacity: { storage: '0' } }), [['spec.capacity[storage]', 'Invalid value: "0": must be greater than zero']]],
    [
      'bad reclaim policy',
      pv({ persistentVolumeReclaimPolicy: 'Keep' }),
      [['spec.persistentVolumeReclaimPolicy', 'Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"']],
    ],
    ['no source', pv({ hostPath: undefined }), [['spec', 'Required value: must specify a volume type']]],
    [
      'local without node affinity',
      pv({ hostPath: undefined, local: { path: '/mnt' } }),
      [['spec.nodeAffinity', 'Required value: Local volume requires node affinity']],
    ],
    [
      'node affinity without terms',
      pv({ nodeAffinity: { required: { nodeSelectorTerms: [] } } }),
      [['spec.nodeAffinity.required.nodeSelectorTerms', 'Required value: must have at least one node selector term']],
    ],
    [
      'csi without a handle',
      pv({ hostPath: undefined, csi: { driver: 'csi.example.com' } }),
      [['spec.csi.volumeHandle', 'Required value']],
    ],
  ] as [string, Any, string[][]][])('%s', (_, spec, want) => {
    expect(causes(validatePersistentVolumeSpec(spec))).toEqual(want);
  });

  test('the source and the volume mode are immutable', () => {
    const errs = validatePersistentVolumeUpdate(
      o({ spec: pv({ hostPath: { path: '/e' }, volumeMode: 'Block' }) }),
      o({ spec: pv({ volumeMode: 'Filesystem' }) }),
    );
    expect(errs.map((e) => [e.field, e.type])).toEqual([
      ['spec.persistentvolumesource', 'FieldValueForbidden'],
      ['volumeMode', 'FieldValueInvalid'],
    ]);
    expect(errs[0]?.detail.split('\n')[0]).toBe('spec.persistentvolumesource is immutable after creation');
  });

  test('a status phase change stamps lastPhaseTransitionTime; an unchanged phase keeps it', () => {
    const old = o({ status: { phase: 'Pending', lastPhaseTransitionTime: '2020-01-01T00:00:00Z' } });
    const changed = o({ status: { phase: 'Bound', lastPhaseTransitionTime: '2020-01-01T00:00:00Z' } });
    stampPhaseTransition(changed, old);
    expect(changed.status).not.toEqual({ phase: 'Bound', lastPhaseTransitionTime: '2020-01-01T00:00:00Z' });
    const same = o({ status: { phase: 'Pending' } });
    stampPhaseTransition(same, old);
    expect((same.status as Any).lastPhaseTransitionTime).toBe('2020-01-01T00:00:00Z');
  });
});

const claim = (x: Any = {}) => ({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...x });

describe('PersistentVolumeClaim', () => {
  test.each([
    ['valid', claim(), []],
    ['no storage request', claim({ resources: {} }), [['spec.resources[storage]', 'Required value']]],
    [
      'bad access mode',
      claim({ accessModes: ['Everyone'] }),
      [
        [
          'spec.accessModes',
          'Unsupported value: "Everyone": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
        ],
      ],
    ],
    [
      'data source of a core kind other than a claim',
      claim({ dataSource: { kind: 'Pod', name: 'p' } }),
      [['spec.dataSource', `Invalid value: "Pod": must be 'PersistentVolumeClaim' when referencing the default apiGroup`]],
    ],
    [
      'bad volume mode',
      claim({ volumeMode: 'Raw' }),
      [['spec.volumeMode', 'Unsupported value: "Raw": supported values: "Block", "Filesystem"']],
    ],
  ] as [string, Any, string[][]][])('%s', (_, spec, want) => {
    expect(causes(persistentVolumeClaimSpec(spec, 'spec'))).toEqual(want);
  });

  test('updates: the spec is immutable but for volumeName once and requests when bound', () => {
    const before = o({ spec: claim() });
    expect(validatePersistentVolumeClaimUpdate(o({ spec: claim({ volumeName: 'pv1' }) }), before)).toEqual([]);
    const grown = o({ spec: claim({ resources: { requests: { storage: '2Gi' } } }), status: { phase: 'Bound' } });
    expect(validatePersistentVolumeClaimUpdate(grown, before)).toEqual([]);
    const unbound = o({ spec: claim({ resources: { requests: { storage: '2Gi' } } }) });
    expect(validatePersistentVolumeClaimUpdate(unbound, before).map((e) => [e.field, e.type])).toEqual([['spec', 'FieldValueForbidden']]);
  });
});

describe('ReplicationController', () => {
  const template = {
    metadata: { labels: { app: 'a' } },
    spec: {
      containers: [{ name: 'c', image: 'i', imagePullPolicy: 'Always', terminationMessagePolicy: 'File' }],
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      terminationGracePeriodSeconds: 30,
    },
  };
  test.each([
    ['valid', { replicas: 1, selector: { app: 'a' }, template }, []],
    ['no selector', { replicas: 1, template }, [['spec.selector', 'Required value']]],
    [
      'negative replicas',
      { replicas: -1, selector: { app: 'a' }, template },
      [['spec.replicas', 'Invalid value: -1: must be greater than or equal to 0']],
    ],
    ['no template', { replicas: 1, selector: { app: 'a' } }, [['spec.template', 'Required value']]],
    [
      'restart policy Never',
      { selector: { app: 'a' }, template: { ...template, spec: { ...template.spec, restartPolicy: 'Never' } } },
      [['spec.template.spec.restartPolicy', 'Unsupported value: "Never": supported values: "Always"']],
    ],
  ] as [string, Any, string[][]][])('%s', (_, spec, want) => {
    expect(causes(validateReplicationControllerSpec(spec))).toEqual(want);
  });

  test('status counts', () => {
    expect(causes(validateReplicationControllerStatus({ replicas: 1, readyReplicas: 1, availableReplicas: 2 }))).toEqual([
      ['status.availableReplicas', 'Invalid value: 2: cannot be greater than status.replicas'],
      ['status.availableReplicas', 'Invalid value: 2: cannot be greater than readyReplicas'],
    ]);
  });
});

describe('Endpoints', () => {
  test.each([
    ['valid', [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80, protocol: 'TCP' }] }], []],
    [
      'no addresses',
      [{ ports: [{ port: 80, protocol: 'TCP' }] }],
      [['subsets[0]', 'Required value: must specify `addresses` or `notReadyAddresses`']],
    ],
    [
      'not an IP',
      [{ addresses: [{ ip: 'x' }] }],
      [
        ['subsets[0].addresses[0].ip', 'Invalid value: "x": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'],
        ['subsets[0].addresses[0].ip', 'Invalid value: "x": must be a valid IP address'],
      ],
    ],
    [
      'link-local',
      [{ addresses: [{ ip: '169.254.1.1' }] }],
      [['subsets[0].addresses[0].ip', 'Invalid value: "169.254.1.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)']],
    ],
    [
      'two ports need names',
      [
        {
          addresses: [{ ip: '10.0.0.1' }],
          ports: [
            { port: 80, protocol: 'TCP' },
            { name: 'b', port: 81, protocol: 'UDP' },
          ],
        },
      ],
      [['subsets[0].ports[0].name', 'Required value']],
    ],
  ] as [string, Any, string[][]][])('%s', (_, subsets, want) => {
    expect(causes(validateEndpoints(o({ subsets })))).toEqual(want);
  });
});
