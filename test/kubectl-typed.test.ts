/**
 * Issue 34 item 1: kubectl commands that decode objects into their own Go types work unmodified,
 * because discovery maps plain resource names to the upstream group names (the default
 * --discovery-group-order=upstream-first): set subject, create token, auth reconcile, drain,
 * rollout history, create job --from a CronJob, autoscale, and create/get through short names
 * (certificate approve/deny: test/api-misc-kinds.test.ts).
 */
import { expect, setDefaultTimeout, test } from 'bun:test';
import { serverForFile } from './helpers/server';

// Waits poll with deadlines of several seconds; on a loaded 2-core CI machine a test may take longer than bun's 5 s default.
setDefaultTimeout(60_000);

const srv = serverForFile();

function ok(args: string[], input?: string): string {
  const r = srv.kubectl(args, input);
  expect({ args, stderr: r.stderr, code: r.code }).toEqual({ args, stderr: '', code: 0 });
  return r.stdout;
}

test('kubectl set subject on a clusterrolebinding and a rolebinding', async () => {
  ok(['create', 'clusterrolebinding', 'crb', '--clusterrole=view', '--user=alice']);
  expect(ok(['set', 'subject', 'clusterrolebinding', 'crb', '--user=bob', '--group=devs'])).toBe(
    'clusterrolebinding.rbac.authorization.k8s.io/crb subjects updated\n',
  );
  const crb = (await srv.json('GET', '/apis/rbac.authorization.svc.io/v1/clusterrolebindings/crb')).body;
  expect(crb.subjects.map((s: { kind: string; name: string }) => `${s.kind}:${s.name}`)).toEqual(['User:alice', 'User:bob', 'Group:devs']);
  ok(['create', 'rolebinding', 'rb', '-n', 'default', '--clusterrole=edit', '--serviceaccount=default:default']);
  expect(ok(['set', 'subject', 'rolebinding', 'rb', '-n', 'default', '--user=carol'])).toBe(
    'rolebinding.rbac.authorization.k8s.io/rb subjects updated\n',
  );
});

test('kubectl create token, and auth reconcile of an RBAC manifest', async () => {
  const token = ok(['create', 'token', 'default', '-n', 'default']).trim();
  expect(token.split('.')).toHaveLength(3);
  const whoami = await srv.json(
    'POST',
    '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    { authorization: `Bearer ${token}` },
  );
  expect(whoami.body.status.userInfo.username).toBe('system:serviceaccount:default:default');
  const manifest = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reconciled
rules:
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get"]
`;
  // kubectl reports what it reconciled on stderr.
  const rec = srv.kubectl(['auth', 'reconcile', '-f', '-'], manifest);
  expect(rec.code).toBe(0);
  expect(rec.stderr).toContain('reconciliation required create');
  expect(rec.stdout).toContain('clusterrole.rbac.authorization.k8s.io/reconciled reconciled');
  expect((await srv.json('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/reconciled')).body.rules).toEqual([
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
  ]);
});

test('kubectl drain cordons the node and evicts its pods; rollout history reads a deployment', async () => {
  expect((await srv.json('POST', '/api/v1/nodes', { metadata: { name: 'drain-me' } })).status).toBe(201);
  for (const name of ['a', 'b']) {
    const p = await srv.json('POST', '/api/v1/namespaces/default/pods', {
      metadata: { name: `drained-${name}` },
      spec: { nodeName: 'drain-me', containers: [{ name: 'c', image: 'i' }], terminationGracePeriodSeconds: 0 },
    });
    expect(p.status).toBe(201);
  }
  const r = srv.kubectl(['drain', 'drain-me', '--force', '--grace-period=0', '--timeout=30s']);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('node/drain-me cordoned');
  expect(r.stdout).toContain('pod/drained-a evicted');
  expect(r.stdout).toContain('node/drain-me drained');
  expect((await srv.json('GET', '/api/v1/nodes/drain-me')).body.spec.unschedulable).toBe(true);
  ok(['create', 'deployment', 'hist', '--image=nginx']);
  expect(ok(['rollout', 'history', 'deployment/hist'])).toContain('deployment.apps/hist');
});

test('kubectl create job --from=cronjob and kubectl autoscale decode into kubectl’s own types', async () => {
  ok(['create', 'cronjob', 'nightly', '--image=busybox', '--schedule=0 3 * * *']);
  expect(ok(['create', 'job', 'manual-run', '--from=cronjob/nightly'])).toContain('job.batch/manual-run created');
  const job = (await srv.json('GET', '/apis/batch/v1/namespaces/default/jobs/manual-run')).body;
  expect(job.metadata.annotations['cronjob.kubernetes.io/instantiate']).toBe('manual');
  expect(job.metadata.ownerReferences[0]).toMatchObject({ kind: 'CronJob', name: 'nightly' });
  ok(['create', 'deployment', 'scaled', '--image=nginx']);
  expect(ok(['autoscale', 'deployment', 'scaled', '--min=2', '--max=5', '--cpu-percent=70'])).toContain('scaled autoscaled');
  const hpa = (await srv.json('GET', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/scaled')).body;
  expect(hpa.spec).toMatchObject({ minReplicas: 2, maxReplicas: 5, scaleTargetRef: { kind: 'Deployment', name: 'scaled' } });
});
