/**
 * apps/v1 StatefulSet, DaemonSet, ControllerRevision and batch/v1 Job, CronJob end to end on a
 * real server: create (with the reference's defaults), read, list, watch, server-side apply; one
 * invalid object per kind answered 422 with the reference's field path and message; the rules on
 * update (immutable fields, the DaemonSet template generation); Job selector generation; the
 * StatefulSet scale subresource; kubectl's columns and `kubectl get all`. Needs kubectl for the
 * kubectl tests (helpers/needs).
 */
import { describe, expect, test } from 'bun:test';
import { needs } from './helpers/needs';
import { STATIC_WORKLOADS, serverForFile } from './helpers/server';
import { openWatch } from './helpers/watch';

// The objects stay as stored: no Deployment or ReplicaSet controller writes to them.
const srv = serverForFile({ args: [STATIC_WORKLOADS] });
const kubectl = needs('kubectl');

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON
type Any = Record<string, any>;

const podTemplate = (labels: Record<string, string>, restartPolicy?: string): Any => ({
  metadata: { labels },
  spec: { containers: [{ name: 'c', image: 'busybox:1.36' }], ...(restartPolicy ? { restartPolicy } : {}) },
});

const APPS = '/apis/apps/v1/namespaces/default';
const BATCH = '/apis/batch/v1/namespaces/default';

interface Kind {
  kind: string;
  base: string;
  valid: () => Any;
  /** An invalid object and the text (field path and message) the 422 carries. */
  invalid: () => Any;
  error: string;
}

const statefulSet = (name = 'web'): Any => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name },
  spec: {
    serviceName: 'web',
    replicas: 2,
    selector: { matchLabels: { app: name } },
    template: podTemplate({ app: name }),
    volumeClaimTemplates: [
      { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    ],
  },
});

const daemonSet = (name = 'agent'): Any => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name },
  spec: { selector: { matchLabels: { app: name } }, template: podTemplate({ app: name }) },
});

const controllerRevision = (name = 'rev-1'): Any => ({
  apiVersion: 'apps/v1',
  kind: 'ControllerRevision',
  metadata: { name },
  data: { spec: { template: { metadata: { labels: { app: 'agent' } } } } },
  revision: 1,
});

const job = (name = 'pi', extra: Any = {}): Any => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name },
  spec: { template: podTemplate({ app: 'batch' }, 'Never'), ...extra },
});

const cronJob = (name = 'nightly', extra: Any = {}): Any => ({
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name },
  spec: {
    schedule: '*/5 * * * *',
    timeZone: 'Europe/Paris',
    jobTemplate: { spec: { template: podTemplate({}, 'OnFailure') } },
    ...extra,
  },
});

const KINDS: Record<string, Kind> = {
  statefulsets: {
    kind: 'StatefulSet',
    base: `${APPS}/statefulsets`,
    valid: () => statefulSet(),
    invalid: () => {
      const o = statefulSet('bad-sts');
      o.spec.podManagementPolicy = 'Sometimes';
      return o;
    },
    error: `StatefulSet.apps "bad-sts" is invalid: spec.podManagementPolicy: Invalid value: "Sometimes": must be 'OrderedReady' or 'Parallel'`,
  },
  daemonsets: {
    kind: 'DaemonSet',
    base: `${APPS}/daemonsets`,
    valid: () => daemonSet(),
    invalid: () => {
      const o = daemonSet('bad-ds');
      o.spec.template.spec.restartPolicy = 'Never';
      return o;
    },
    error: 'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
  },
  controllerrevisions: {
    kind: 'ControllerRevision',
    base: `${APPS}/controllerrevisions`,
    valid: () => controllerRevision(),
    invalid: () => {
      const o = controllerRevision('bad-rev');
      delete o.data;
      return o;
    },
    error: 'ControllerRevision.apps "bad-rev" is invalid: data: Required value: data is mandatory',
  },
  jobs: {
    kind: 'Job',
    base: `${BATCH}/jobs`,
    valid: () => job(),
    invalid: () => job('bad-job', { template: podTemplate({ app: 'batch' }, 'Always') }),
    error: 'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
  },
  cronjobs: {
    kind: 'CronJob',
    base: `${BATCH}/cronjobs`,
    valid: () => cronJob(),
    invalid: () => cronJob('bad-cj', { concurrencyPolicy: 'Sometimes' }),
    error: 'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"',
  },
};

const created: Record<string, Any> = {};

for (const [plural, k] of Object.entries(KINDS)) {
  describe(k.kind, () => {
    test('created, read back, listed, watched, applied', async () => {
      const c = await srv.json('POST', k.base, k.valid());
      expect(c.status).toBe(201);
      created[plural] = c.body;
      const name = c.body.metadata.name;
      const g = await srv.json('GET', `${k.base}/${name}`);
      expect(g.status).toBe(200);
      expect(g.body.metadata.uid).toBe(c.body.metadata.uid);
      const l = await srv.json('GET', k.base);
      expect(l.status).toBe(200);
      expect(l.body.kind).toBe(`${k.kind}List`);
      expect(l.body.items.map((i: Any) => i.metadata.name)).toContain(name);
      const w = await openWatch(srv, `${k.base}?watch=1&resourceVersion=${l.body.metadata.resourceVersion}`);
      try {
        const apiVersion = k.base.startsWith('/apis/apps') ? 'apps/v1' : 'batch/v1';
        const applied = await srv.fetch(`${k.base}/${name}?fieldManager=workload-test`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/apply-patch+yaml' },
          // A ControllerRevision's revision is a value field the server writes as 0 into an applied
          // configuration without it (and then conflicts): the test applies it as it is.
          body: JSON.stringify({
            apiVersion,
            kind: k.kind,
            metadata: { name, labels: { applied: 'yes' } },
            ...(k.kind === 'ControllerRevision' ? { revision: 1 } : {}),
          }),
        });
        expect(applied.status).toBe(200);
        const evs = await w.until((e) => e.type === 'MODIFIED' && e.object.metadata.name === name, 5000);
        expect(evs.at(-1)?.object.metadata.labels.applied).toBe('yes');
      } finally {
        await w.close();
      }
    });

    test('served as protobuf too (client-go default for built-in kinds)', async () => {
      const name = created[plural]?.metadata.name;
      const r = await srv.fetch(`${k.base}/${name}`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toStartWith('application/vnd.kubernetes.protobuf');
      expect((await r.arrayBuffer()).byteLength).toBeGreaterThan(20);
    });

    test('an invalid object is 422 with the reference field path and message', async () => {
      const r = await srv.json('POST', k.base, k.invalid());
      expect(r.status).toBe(422);
      expect(r.body.reason).toBe('Invalid');
      expect(r.body.message).toContain(k.error);
    });
  });
}

describe('defaults and server-set fields', () => {
  test('StatefulSet: the reference defaults and an empty status', () => {
    const s = created.statefulsets as Any;
    expect(s.spec.podManagementPolicy).toBe('OrderedReady');
    expect(s.spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
    expect(s.spec.revisionHistoryLimit).toBe(10);
    expect(s.spec.persistentVolumeClaimRetentionPolicy).toEqual({ whenDeleted: 'Retain', whenScaled: 'Retain' });
    expect(s.spec.volumeClaimTemplates[0].spec.volumeMode).toBe('Filesystem');
    expect(s.status).toEqual({ replicas: 0, availableReplicas: 0 });
    expect(s.metadata.generation).toBe(1);
  });

  test('DaemonSet: rolling update 1/0 and template generation 1', () => {
    const d = created.daemonsets as Any;
    expect(d.spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
    expect(d.spec.revisionHistoryLimit).toBe(10);
    expect(d.metadata.annotations['deprecated.daemonset.template.generation']).toBe('1');
    expect(d.status).toMatchObject({ currentNumberScheduled: 0, desiredNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0 });
  });

  test('Job: SetDefaults_Job, a generated selector and the generated labels', () => {
    const j = created.jobs as Any;
    const uid = j.metadata.uid;
    expect(j.spec).toMatchObject({
      completions: 1,
      parallelism: 1,
      backoffLimit: 6,
      completionMode: 'NonIndexed',
      suspend: false,
      manualSelector: false,
      podReplacementPolicy: 'TerminatingOrFailed',
    });
    expect(j.spec.selector).toEqual({ matchLabels: { 'batch.kubernetes.io/controller-uid': uid } });
    expect(j.spec.template.metadata.labels).toEqual({
      app: 'batch',
      'batch.kubernetes.io/controller-uid': uid,
      'batch.kubernetes.io/job-name': 'pi',
      'controller-uid': uid,
      'job-name': 'pi',
    });
    expect(j.metadata.labels).toEqual({ app: 'batch' });
    expect(j.status).toEqual({});
  });

  test('CronJob: concurrency, suspend and history defaults', () => {
    const c = created.cronjobs as Any;
    expect(c.spec).toMatchObject({ concurrencyPolicy: 'Allow', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 });
    expect(c.status).toEqual({});
  });
});

describe('Job selectors', () => {
  test('a selector of its own without manualSelector: `selector` not auto-generated', async () => {
    const r = await srv.json('POST', `${BATCH}/jobs`, job('own-selector', { selector: { matchLabels: { app: 'batch' } } }));
    expect(r.status).toBe(422);
    expect(r.body.message).toContain('spec.selector: Invalid value: ');
    expect(r.body.message).toContain('`selector` not auto-generated');
  });

  test('manualSelector: true keeps the selector and adds no labels', async () => {
    const r = await srv.json('POST', `${BATCH}/jobs`, job('manual', { manualSelector: true, selector: { matchLabels: { app: 'batch' } } }));
    expect(r.status).toBe(201);
    expect(r.body.spec.selector).toEqual({ matchLabels: { app: 'batch' } });
    expect(r.body.spec.template.metadata.labels).toEqual({ app: 'batch' });
  });

  test('Indexed options: backoffLimitPerIndex requires indexed completion mode', async () => {
    const r = await srv.json('POST', `${BATCH}/jobs`, job('per-index', { backoffLimitPerIndex: 1 }));
    expect(r.status).toBe(422);
    expect(r.body.message).toContain('spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode');
  });
});

describe('updates', () => {
  test('StatefulSet: replicas may change, serviceName may not', async () => {
    const path = `${APPS}/statefulsets/web`;
    const cur = (await srv.json('GET', path)).body;
    cur.spec.replicas = 3;
    const ok = await srv.json('PUT', path, cur);
    expect(ok.status).toBe(200);
    expect(ok.body.metadata.generation).toBe(2);
    ok.body.spec.serviceName = 'other';
    const r = await srv.json('PUT', path, ok.body);
    expect(r.status).toBe(422);
    expect(r.body.message).toContain(
      "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    );
  });

  test('StatefulSet status: written through /status, validated as the reference', async () => {
    const path = `${APPS}/statefulsets/web`;
    const cur = (await srv.json('GET', path)).body;
    cur.status = { replicas: 3, readyReplicas: 2, availableReplicas: 2 };
    const ok = await srv.json('PUT', `${path}/status`, cur);
    expect(ok.status).toBe(200);
    expect(ok.body.status).toMatchObject({ replicas: 3, readyReplicas: 2 });
    ok.body.status.readyReplicas = 4;
    const bad = await srv.json('PUT', `${path}/status`, ok.body);
    expect(bad.status).toBe(422);
    expect(bad.body.message).toContain('status.readyReplicas: Invalid value: 4: cannot be greater than status.replicas');
  });

  test('DaemonSet: a template change bumps the template generation; the selector is immutable', async () => {
    const path = `${APPS}/daemonsets/agent`;
    const cur = (await srv.json('GET', path)).body;
    cur.spec.template.spec.containers[0].image = 'busybox:1.37';
    const ok = await srv.json('PUT', path, cur);
    expect(ok.status).toBe(200);
    expect(ok.body.metadata.annotations['deprecated.daemonset.template.generation']).toBe('2');
    ok.body.spec.selector = { matchLabels: { app: 'other' } };
    ok.body.spec.template.metadata.labels = { app: 'other' };
    const r = await srv.json('PUT', path, ok.body);
    expect(r.status).toBe(422);
    expect(r.body.message).toContain('spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"other"}');
    expect(r.body.message).toContain('field is immutable');
  });

  test('ControllerRevision: data is immutable', async () => {
    const path = `${APPS}/controllerrevisions/rev-1`;
    const cur = (await srv.json('GET', path)).body;
    cur.data = { changed: true };
    const r = await srv.json('PUT', path, cur);
    expect(r.status).toBe(422);
    expect(r.body.message).toContain('data: Invalid value: ');
    expect(r.body.message).toContain('field is immutable');
  });

  test('Job: the template is immutable unless suspended and never started', async () => {
    const path = `${BATCH}/jobs/pi`;
    const cur = (await srv.json('GET', path)).body;
    cur.spec.template.spec.nodeSelector = { disk: 'ssd' };
    const r = await srv.json('PUT', path, cur);
    expect(r.status).toBe(422);
    expect(r.body.message).toContain('spec.template: Invalid value: ');
    expect(r.body.message).toContain('field is immutable');

    const s = await srv.json('POST', `${BATCH}/jobs`, job('suspended', { suspend: true }));
    expect(s.status).toBe(201);
    s.body.spec.template.spec.nodeSelector = { disk: 'ssd' };
    const ok = await srv.json('PUT', `${BATCH}/jobs/suspended`, s.body);
    expect(ok.status).toBe(200);
    expect(ok.body.spec.template.spec.nodeSelector).toEqual({ disk: 'ssd' });
    ok.body.spec.template.spec.containers[0].image = 'busybox:1.37';
    const bad = await srv.json('PUT', `${BATCH}/jobs/suspended`, ok.body);
    expect(bad.status).toBe(422);
  });
});

describe('CronJob schedules and zones', () => {
  const cases: [string, Any, string][] = [
    [
      'tz-inline',
      { schedule: 'TZ=UTC */5 * * * *' },
      'spec.schedule: Invalid value: "TZ=UTC */5 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead',
    ],
    ['fields', { schedule: '*/5 * * *' }, 'spec.schedule: Invalid value: "*/5 * * *": expected exactly 5 fields, found 4: [*/5 * * *]'],
    ['range', { schedule: '0 25 * * *' }, 'spec.schedule: Invalid value: "0 25 * * *": end of range (25) above maximum (23): 25'],
    ['zone', { timeZone: 'Europe/Pariss' }, 'spec.timeZone: Invalid value: "Europe/Pariss": unknown time zone Europe/Pariss'],
    ['negative', { startingDeadlineSeconds: -1 }, 'spec.startingDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0'],
  ];
  for (const [name, extra, msg] of cases) {
    test(name, async () => {
      const r = await srv.json('POST', `${BATCH}/cronjobs`, cronJob(`cj-${name}`, extra));
      expect(r.status).toBe(422);
      expect(r.body.message).toContain(msg);
    });
  }

  test('jobTemplate is validated as a Job spec under spec.jobTemplate.spec', async () => {
    const r = await srv.json(
      'POST',
      `${BATCH}/cronjobs`,
      cronJob('cj-template', { jobTemplate: { spec: { template: podTemplate({}, 'Always'), selector: { matchLabels: { a: 'b' } } } } }),
    );
    expect(r.status).toBe(422);
    expect(r.body.message).toContain(
      'spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
    );
    expect(r.body.message).toContain('spec.jobTemplate.spec.selector: Invalid value: ');
    expect(r.body.message).toContain('`selector` will be auto-generated');
  });

  test('macros are accepted', async () => {
    const r = await srv.json('POST', `${BATCH}/cronjobs`, cronJob('hourly', { schedule: '@hourly', timeZone: 'UTC' }));
    expect(r.status).toBe(201);
  });
});

describe('Deployment', () => {
  const deployment = (name: string, annotations?: Record<string, string>): Any => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, ...(annotations ? { annotations } : {}) },
    spec: { selector: { matchLabels: { app: name } }, template: podTemplate({ app: name }) },
  });

  test('an annotation change bumps the generation', async () => {
    const c = await srv.json('POST', `${APPS}/deployments`, deployment('annotated'));
    expect(c.status).toBe(201);
    c.body.metadata.annotations = { note: 'x' };
    const u = await srv.json('PUT', `${APPS}/deployments/annotated`, c.body);
    expect(u.status).toBe(200);
    expect(u.body.metadata.generation).toBe(2);
    u.body.metadata.labels = { only: 'labels' };
    expect((await srv.json('PUT', `${APPS}/deployments/annotated`, u.body)).body.metadata.generation).toBe(2);
  });

  test('the rollback annotation: a negative revision is 422, a non-integer 400', async () => {
    const neg = await srv.json('POST', `${APPS}/deployments`, deployment('rb-neg', { 'deprecated.deployment.rollback.to': '-1' }));
    expect(neg.status).toBe(422);
    expect(neg.body.message).toContain('spec.rollback.version: Invalid value: -1: must be greater than or equal to 0');
    const nan = await srv.json('POST', `${APPS}/deployments`, deployment('rb-nan', { 'deprecated.deployment.rollback.to': 'abc' }));
    expect(nan.status).toBe(400);
    expect(nan.body.message).toContain('failed to parse annotation[deprecated.deployment.rollback.to]=abc as int64');
    const ok = await srv.json('POST', `${APPS}/deployments`, deployment('rb-ok', { 'deprecated.deployment.rollback.to': '2' }));
    expect(ok.status).toBe(201);
  });
});

test('StatefulSet scale subresource', async () => {
  const path = `${APPS}/statefulsets/web/scale`;
  const g = await srv.json('GET', path);
  expect(g.status).toBe(200);
  expect(g.body).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 3 }, status: { selector: 'app=web' } });
  const p = await srv.json('PATCH', path, { spec: { replicas: 5 } }, { 'content-type': 'application/merge-patch+json' });
  expect(p.status).toBe(200);
  expect(p.body.spec.replicas).toBe(5);
  expect((await srv.json('GET', `${APPS}/statefulsets/web`)).body.spec.replicas).toBe(5);
});

describe('kubectl', () => {
  const rows = (args: string[]) => {
    const r = srv.kubectl(args);
    expect(r.stderr).toBe('');
    return r.stdout.split('\n').map((l) => l.trim().split(/\s{2,}/));
  };

  kubectl.test('get: the reference printers columns', async () => {
    // The DaemonSet owns the ControllerRevision (as the DaemonSet controller makes them).
    const ds = (await srv.json('GET', `${APPS}/daemonsets/agent`)).body;
    const owned = controllerRevision('agent-owned');
    owned.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: ds.metadata.uid, controller: true }];
    expect((await srv.json('POST', `${APPS}/controllerrevisions`, owned)).status).toBe(201);

    expect(rows(['get', 'sts', 'web'])[0]).toEqual(['NAME', 'READY', 'AGE']);
    expect(rows(['get', 'sts', 'web'])[1]?.slice(0, 2)).toEqual(['web', '2/5']);
    expect(rows(['get', 'sts', 'web', '-o', 'wide'])[0]).toEqual(['NAME', 'READY', 'AGE', 'CONTAINERS', 'IMAGES']);
    expect(rows(['get', 'ds', 'agent'])[0]).toEqual([
      'NAME',
      'DESIRED',
      'CURRENT',
      'READY',
      'UP-TO-DATE',
      'AVAILABLE',
      'NODE SELECTOR',
      'AGE',
    ]);
    expect(rows(['get', 'ds', 'agent'])[1]?.slice(0, 7)).toEqual(['agent', '0', '0', '0', '0', '0', '<none>']);
    expect(rows(['get', 'controllerrevisions', 'agent-owned'])[0]).toEqual(['NAME', 'CONTROLLER', 'REVISION', 'AGE']);
    expect(rows(['get', 'controllerrevisions', 'agent-owned'])[1]?.slice(0, 3)).toEqual(['agent-owned', 'daemonset.apps/agent', '1']);
    expect(rows(['get', 'jobs', 'pi'])[0]).toEqual(['NAME', 'STATUS', 'COMPLETIONS', 'DURATION', 'AGE']);
    expect(rows(['get', 'jobs', 'pi'])[1]?.slice(0, 3)).toEqual(['pi', 'Running', '0/1']);
    expect(rows(['get', 'cj', 'nightly'])[0]).toEqual(['NAME', 'SCHEDULE', 'TIMEZONE', 'SUSPEND', 'ACTIVE', 'LAST SCHEDULE', 'AGE']);
    expect(rows(['get', 'cj', 'nightly'])[1]?.slice(0, 6)).toEqual(['nightly', '*/5 * * * *', 'Europe/Paris', 'False', '0', '<none>']);
  });

  kubectl.test('create job, create cronjob, scale statefulset', () => {
    const job = srv.kubectl(['create', 'job', 'hello', '--image=busybox:1.36', '--', 'echo', 'hi']);
    expect(job.stderr).toBe('');
    expect(job.stdout.trim()).toBe('job.batch/hello created');
    const cj = srv.kubectl(['create', 'cronjob', 'tick', '--image=busybox:1.36', '--schedule=*/1 * * * *']);
    expect(cj.stderr).toBe('');
    expect(cj.stdout.trim()).toBe('cronjob.batch/tick created');
    const bad = srv.kubectl(['create', 'cronjob', 'tock', '--image=busybox:1.36', '--schedule=every minute']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('spec.schedule: Invalid value: "every minute": expected exactly 5 fields, found 2: [every minute]');
    expect(srv.kubectl(['scale', 'sts', 'web', '--replicas=1']).stdout.trim()).toBe('statefulset.apps/web scaled');
    expect(srv.kubectl(['get', 'sts', 'web', '-o', 'jsonpath={.spec.replicas}']).stdout).toBe('1');
  });

  kubectl.test('get all lists the new kinds that are in category all', () => {
    const out = srv.kubectl(['get', 'all', '-n', 'default']).stdout;
    for (const name of ['statefulset.apps/web', 'daemonset.apps/agent', 'job.batch/pi', 'cronjob.batch/nightly'])
      expect(out).toContain(name);
    expect(out).not.toContain('controllerrevision');
  });
});
