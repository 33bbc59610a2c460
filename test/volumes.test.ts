/**
 * The PersistentVolume binder and the built-in provisioner (src/controllers/volumes/), end to end
 * on a simulated node: a claim binds to the smallest fitting volume of its class (access modes,
 * selector), both sides annotated; deleting the claim releases a Retain volume; the default class
 * `standard` (WaitForFirstConsumer) waits for a pod, then provisions `pvc-<uid>` on the pod's node,
 * binds it and the pod runs; deleting the claim deletes the provisioned volume.
 */
import { expect, setDefaultTimeout, test } from 'bun:test';
import { serverForFile } from './helpers/server';
import { until } from './helpers/until';

setDefaultTimeout(60_000);

// biome-ignore lint/suspicious/noExplicitAny: API objects read as JSON
type Any = any;

const NS = '/api/v1/namespaces/default';
const PV = '/api/v1/persistentvolumes';
const srv = serverForFile({ args: ['--simulated-nodes=1'] });

const volume = (name: string, size: string, extra: Record<string, unknown> = {}, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name, labels },
  spec: {
    capacity: { storage: size },
    accessModes: ['ReadWriteOnce'],
    storageClassName: 'manual',
    hostPath: { path: `/tmp/${name}` },
    ...extra,
  },
});

const claim = (name: string, size: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } }, ...spec },
});

const get = async (p: string): Promise<Any> => (await srv.json('GET', p)).body;
const phase = (o: Any): string | undefined => o?.status?.phase;
const eventsOf = async (name: string): Promise<Any[]> =>
  (await srv.json('GET', `${NS}/events?fieldSelector=involvedObject.name%3D${name}`)).body.items ?? [];

test('a claim binds to the smallest volume that fits; deleting it releases a Retain volume', async () => {
  for (const v of [
    volume('pv-small', '1Gi'),
    volume('pv-mid', '5Gi'),
    volume('pv-big', '10Gi'),
    volume('pv-rwx', '4Gi', { accessModes: ['ReadWriteMany'] }),
    volume('pv-gold', '20Gi', {}, { tier: 'gold' }),
  ])
    expect((await srv.json('POST', PV, v)).status).toBe(201);
  expect((await srv.json('POST', `${NS}/persistentvolumeclaims`, claim('data', '3Gi', { storageClassName: 'manual' }))).status).toBe(201);
  const c = await until(
    () => get(`${NS}/persistentvolumeclaims/data`),
    (x) => phase(x) === 'Bound',
    10_000,
  );
  expect(c.spec.volumeName).toBe('pv-mid');
  expect(c.metadata.annotations).toMatchObject({ 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' });
  expect(c.status.capacity).toEqual({ storage: '5Gi' });
  expect(c.status.accessModes).toEqual(['ReadWriteOnce']);
  const v = await until(
    () => get(`${PV}/pv-mid`),
    (x) => phase(x) === 'Bound',
    5000,
  );
  expect(v.spec.claimRef).toMatchObject({ kind: 'PersistentVolumeClaim', namespace: 'default', name: 'data', uid: c.metadata.uid });
  expect(v.metadata.annotations['pv.kubernetes.io/bound-by-controller']).toBe('yes');
  for (const n of ['pv-small', 'pv-big', 'pv-rwx'])
    expect(
      phase(
        await until(
          () => get(`${PV}/${n}`),
          (x) => phase(x) === 'Available',
          5000,
        ),
      ),
    ).toBe('Available');

  // A selector narrows the volumes: the only gold one, larger than needed.
  const gold = claim('gold', '1Gi', { storageClassName: 'manual', selector: { matchLabels: { tier: 'gold' } } });
  expect((await srv.json('POST', `${NS}/persistentvolumeclaims`, gold)).status).toBe(201);
  const g = await until(
    () => get(`${NS}/persistentvolumeclaims/gold`),
    (x) => phase(x) === 'Bound',
    10_000,
  );
  expect(g.spec.volumeName).toBe('pv-gold');

  // A claim nothing fits stays Pending.
  expect((await srv.json('POST', `${NS}/persistentvolumeclaims`, claim('huge', '50Gi', { storageClassName: 'manual' }))).status).toBe(201);
  await Bun.sleep(300);
  expect(phase(await get(`${NS}/persistentvolumeclaims/huge`))).toBe('Pending');

  // Deleting the claim: the Retain volume (the default policy of a static volume) is Released.
  expect((await srv.json('DELETE', `${NS}/persistentvolumeclaims/data`)).status).toBe(200);
  const released = await until(
    () => get(`${PV}/pv-mid`),
    (x) => phase(x) === 'Released',
    10_000,
  );
  expect(phase(released)).toBe('Released');
  expect(released.spec.claimRef.name).toBe('data');
  // A Delete volume no plugin can delete fails.
  expect(
    (
      await srv.json('PATCH', `${PV}/pv-gold`, JSON.stringify({ spec: { persistentVolumeReclaimPolicy: 'Delete' } }), {
        'content-type': 'application/merge-patch+json',
      })
    ).status,
  ).toBe(200);
  expect((await srv.json('DELETE', `${NS}/persistentvolumeclaims/gold`)).status).toBe(200);
  const failed = await until(
    () => get(`${PV}/pv-gold`),
    (x) => phase(x) === 'Failed',
    10_000,
  );
  expect(phase(failed)).toBe('Failed');
  const why = await until(
    () => eventsOf('pv-gold'),
    (e) => e.some((x) => x.reason === 'VolumeFailedDelete'),
    5000,
  );
  expect(why.find((x) => x.reason === 'VolumeFailedDelete')?.involvedObject).toMatchObject({ kind: 'PersistentVolume', name: 'pv-gold' });
});

test('the default class standard provisions a volume once a pod uses the claim; deleting the claim deletes it', async () => {
  const sc = await get('/apis/storage.k8s.io/v1/storageclasses/standard');
  expect(sc).toMatchObject({
    provisioner: 'sim.svc.io/provisioner',
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
    metadata: { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
  });
  // No class named: the DefaultStorageClass admission gives it standard.
  expect((await srv.json('POST', `${NS}/persistentvolumeclaims`, claim('cache', '2Gi'))).status).toBe(201);
  const waiting = await until(
    () => eventsOf('cache'),
    (e) => e.some((x) => x.reason === 'WaitForFirstConsumer'),
    10_000,
  );
  expect(waiting.map((x) => x.reason)).toContain('WaitForFirstConsumer');
  expect(phase(await get(`${NS}/persistentvolumeclaims/cache`))).toBe('Pending');

  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'user' },
    spec: {
      containers: [{ name: 'c', image: 'busybox', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'cache' } }],
    },
  };
  expect((await srv.json('POST', `${NS}/pods`, pod)).status).toBe(201);
  const c = await until(
    () => get(`${NS}/persistentvolumeclaims/cache`),
    (x) => phase(x) === 'Bound',
    15_000,
  );
  expect(phase(c)).toBe('Bound');
  const p = await until(
    () => get(`${NS}/pods/user`),
    (x) => phase(x) === 'Running',
    15_000,
  );
  expect(c.metadata.annotations['volume.kubernetes.io/selected-node']).toBe(p.spec.nodeName);
  expect(c.metadata.annotations['volume.kubernetes.io/storage-provisioner']).toBe('sim.svc.io/provisioner');
  expect(c.spec.volumeName).toBe(`pvc-${c.metadata.uid}`);
  expect(c.status.capacity).toEqual({ storage: '2Gi' });
  const v = await get(`${PV}/${c.spec.volumeName}`);
  expect(v.spec).toMatchObject({
    storageClassName: 'standard',
    persistentVolumeReclaimPolicy: 'Delete',
    capacity: { storage: '2Gi' },
    claimRef: { name: 'cache', uid: c.metadata.uid },
  });
  expect(v.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values).toEqual([p.spec.nodeName]);
  expect(v.metadata.annotations['pv.kubernetes.io/provisioned-by']).toBe('sim.svc.io/provisioner');
  expect((await eventsOf('cache')).map((x) => x.reason)).toContain('ProvisioningSucceeded');

  // The pod goes, then the claim: the provisioned volume (reclaim policy Delete) is deleted.
  expect((await srv.json('DELETE', `${NS}/pods/user?gracePeriodSeconds=0`)).status).toBe(200);
  expect((await srv.json('DELETE', `${NS}/persistentvolumeclaims/cache`)).status).toBe(200);
  const r = await until(
    () => srv.json('GET', `${PV}/${c.spec.volumeName}`),
    (x) => x.status === 404,
    20_000,
  );
  expect(r.status).toBe(404);
});
