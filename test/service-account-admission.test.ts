/**
 * ServiceAccount admission and the per-namespace objects it relies on (the default account and
 * the kube-root-ca.crt ConfigMap), against a real server.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { type Server, startServer } from './helpers/server';
import { until } from './helpers/until';

setDefaultTimeout(30_000);
let srv: Server;
beforeAll(async () => {
  srv = await startServer({ args: ['--controllers=*'] });
});
afterAll(async () => {
  await srv?.stop();
});

const pod = (name: string, spec: Record<string, unknown> = {}) => ({
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec },
});

describe('ServiceAccount admission', () => {
  test('a pod without an account runs as default and gets the API-access volume in every container', async () => {
    const r = await srv.json('POST', '/api/v1/namespaces/default/pods', {
      metadata: { name: 'sa1' },
      spec: { initContainers: [{ name: 'i', image: 'busybox' }], containers: [{ name: 'c', image: 'nginx' }] },
    });
    expect(r.status).toBe(201);
    const spec = r.body.spec;
    expect(spec.serviceAccountName).toBe('default');
    expect(spec.serviceAccount).toBe('default');
    const vol = spec.volumes.find((v: any) => v.name.startsWith('kube-api-access-'));
    expect(vol.name).toMatch(/^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(vol.projected).toEqual({
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
      defaultMode: 420,
    });
    for (const c of [...spec.initContainers, ...spec.containers]) {
      expect(c.volumeMounts).toEqual([{ name: vol.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
    }
  });

  test('an account that does not exist: 403 with the reference message, nothing stored', async () => {
    const r = await srv.json('POST', '/api/v1/namespaces/default/pods', pod('sa2', { serviceAccountName: 'robot' }));
    expect(r.status).toBe(403);
    expect(r.body.message).toBe(
      'pods "sa2" is forbidden: error looking up service account default/robot: serviceaccount "robot" not found',
    );
    expect((await srv.json('GET', '/api/v1/namespaces/default/pods/sa2')).status).toBe(404);
  });

  test('automountServiceAccountToken false on the pod or on its account: no volume', async () => {
    const a = await srv.json('POST', '/api/v1/namespaces/default/pods', pod('sa3', { automountServiceAccountToken: false }));
    expect(a.status).toBe(201);
    expect(a.body.spec.volumes).toBeUndefined();
    expect(
      (
        await srv.json('POST', '/api/v1/namespaces/default/serviceaccounts', {
          metadata: { name: 'quiet' },
          automountServiceAccountToken: false,
        })
      ).status,
    ).toBe(201);
    const b = await srv.json('POST', '/api/v1/namespaces/default/pods', pod('sa4', { serviceAccountName: 'quiet' }));
    expect(b.status).toBe(201);
    expect(b.body.spec.volumes).toBeUndefined();
    // The pod's own setting wins over its account's.
    const c = await srv.json(
      'POST',
      '/api/v1/namespaces/default/pods',
      pod('sa5', { serviceAccountName: 'quiet', automountServiceAccountToken: true }),
    );
    expect(c.body.spec.volumes.length).toBe(1);
  });

  test('a container that already mounts the path keeps its mount', async () => {
    const r = await srv.json('POST', '/api/v1/namespaces/default/pods', {
      metadata: { name: 'sa6' },
      spec: {
        containers: [
          { name: 'own', image: 'nginx', volumeMounts: [{ name: 'mine', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }] },
          { name: 'plain', image: 'nginx' },
        ],
        volumes: [{ name: 'mine', emptyDir: {} }],
      },
    });
    expect(r.status).toBe(201);
    expect(r.body.spec.containers[0].volumeMounts.map((m: any) => m.name)).toEqual(['mine']);
    expect(r.body.spec.containers[1].volumeMounts[0].name).toMatch(/^kube-api-access-/);
  });

  test('a new namespace gets its default account and kube-root-ca.crt with the server CA; pods can be created at once', async () => {
    expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'fresh' } })).status).toBe(201);
    const p = await srv.json('POST', '/api/v1/namespaces/fresh/pods', pod('first'));
    expect(p.status).toBe(201);
    const got = await until(
      () => srv.json('GET', '/api/v1/namespaces/fresh/configmaps/kube-root-ca.crt'),
      (g) => g.status === 200,
    );
    const cm = got.body;
    expect(cm.data['ca.crt']).toBe(srv.ca);
    expect(cm.metadata.annotations['kubernetes.io/description']).toContain('CA bundle');
    // Changed or deleted, it is put back.
    cm.data['ca.crt'] = 'junk';
    expect((await srv.json('PUT', '/api/v1/namespaces/fresh/configmaps/kube-root-ca.crt', cm)).status).toBe(200);
    const back = await until(
      () => srv.json('GET', '/api/v1/namespaces/fresh/configmaps/kube-root-ca.crt'),
      (g) => g.body.data?.['ca.crt'] === srv.ca,
    );
    expect(back.body.data['ca.crt']).toBe(srv.ca);
    expect((await srv.json('DELETE', '/api/v1/namespaces/fresh/configmaps/kube-root-ca.crt')).status).toBe(200);
    const again = await until(
      () => srv.json('GET', '/api/v1/namespaces/fresh/configmaps/kube-root-ca.crt'),
      (g) => g.status === 200,
    );
    expect(again.status).toBe(200);
  });
});
