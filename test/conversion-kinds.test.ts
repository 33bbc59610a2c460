/**
 * Kinds served in two forms over one stored object: autoscaling v1/v2 HorizontalPodAutoscalers
 * and the events.k8s.io/core Event dual view, over HTTP against a real server, with kubectl.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type Server, STATIC_WORKLOADS, startServer } from './helpers/server';

let srv: Server;
beforeAll(async () => {
  srv = await startServer({ args: [STATIC_WORKLOADS] });
});
afterAll(async () => {
  await srv?.stop();
});

const HPA = (v: string) => `/apis/autoscaling/${v}/namespaces/default/horizontalpodautoscalers`;

describe('HorizontalPodAutoscaler autoscaling/v1 ⇄ v2', () => {
  test('a v1 object reads back as v2 with the CPU target as a metric, and as v1 unchanged', async () => {
    const v1 = {
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'web' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        minReplicas: 2,
        maxReplicas: 5,
        targetCPUUtilizationPercentage: 60,
      },
    };
    const c = await srv.json('POST', HPA('v1'), v1);
    expect(c.status).toBe(201);
    expect(c.body.apiVersion).toBe('autoscaling/v1');
    expect(c.body.spec.targetCPUUtilizationPercentage).toBe(60);
    const g2 = await srv.json('GET', `${HPA('v2')}/web`);
    expect(g2.status).toBe(200);
    expect(g2.body.apiVersion).toBe('autoscaling/v2');
    expect(g2.body.spec.metrics).toEqual([
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
    ]);
    expect(g2.body.spec.targetCPUUtilizationPercentage).toBeUndefined();
    const g1 = await srv.json('GET', `${HPA('v1')}/web`);
    expect(g1.body.spec).toEqual(v1.spec);
    expect(g1.body.metadata.resourceVersion).toBe(g2.body.metadata.resourceVersion);
  });

  test('a v2 object with several metrics: v1 shows the CPU target and keeps the rest in the annotation; a v1 write keeps them', async () => {
    const v2 = {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'multi' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'multi' },
        maxReplicas: 10,
        metrics: [
          { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } } },
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
        ],
      },
    };
    expect((await srv.json('POST', HPA('v2'), v2)).status).toBe(201);
    const g1 = await srv.json('GET', `${HPA('v1')}/multi`);
    expect(g1.body.spec.targetCPUUtilizationPercentage).toBe(70);
    expect(g1.body.spec.minReplicas).toBe(1);
    const other = JSON.parse(g1.body.metadata.annotations['autoscaling.alpha.kubernetes.io/metrics']);
    expect(other).toEqual([{ type: 'Resource', resource: { name: 'memory', targetAverageValue: '500Mi' } }]);
    // A v1 client updates maxReplicas: the memory metric survives (from the annotation).
    g1.body.spec.maxReplicas = 12;
    const u = await srv.json('PUT', `${HPA('v1')}/multi`, g1.body);
    expect(u.status).toBe(200);
    const g2 = await srv.json('GET', `${HPA('v2')}/multi`);
    expect(g2.body.spec.maxReplicas).toBe(12);
    expect(g2.body.spec.metrics.map((m: any) => m.resource.name)).toEqual(['memory', 'cpu']);
    expect(g2.body.metadata.annotations ?? {}).not.toHaveProperty('autoscaling.alpha.kubernetes.io/metrics');
  });

  test('v1 without a target gets the default 80% CPU metric in v2', async () => {
    const v1 = {
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'plain' },
      spec: { scaleTargetRef: { kind: 'Deployment', name: 'plain' }, maxReplicas: 3 },
    };
    expect((await srv.json('POST', HPA('v1'), v1)).status).toBe(201);
    const g2 = await srv.json('GET', `${HPA('v2')}/plain`);
    expect(g2.body.spec.metrics[0].resource.target).toEqual({ type: 'Utilization', averageUtilization: 80 });
  });

  test('invalid: the reference paths and messages, in either version', async () => {
    const bad = await srv.json('POST', HPA('v2'), {
      metadata: { name: 'bad' },
      spec: { scaleTargetRef: { kind: 'Deployment' }, minReplicas: 3, maxReplicas: 2 },
    });
    expect(bad.status).toBe(422);
    const causes = bad.body.details.causes.map((c: any) => `${c.field}: ${c.message}`);
    expect(causes).toContain('spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`');
    expect(causes).toContain('spec.scaleTargetRef.name: Required value');
    const bad1 = await srv.json('POST', HPA('v1'), {
      metadata: { name: 'bad1' },
      spec: { scaleTargetRef: { kind: 'Deployment', name: 'x' }, maxReplicas: 0 },
    });
    expect(bad1.status).toBe(422);
    expect(bad1.body.message).toContain('spec.maxReplicas: Invalid value: 0: must be greater than 0');
    expect((await srv.json('GET', `${HPA('v2')}/bad1`)).status).toBe(404);
  });

  test('discovery prefers v2; list and watch in v1; kubectl shows the reference columns', async () => {
    const g = await srv.json('GET', '/apis/autoscaling');
    expect(g.body.preferredVersion.version).toBe('v2');
    expect(g.body.versions.map((v: any) => v.version)).toEqual(['v2', 'v1']);
    const l = await srv.json('GET', HPA('v1'));
    expect(l.body.apiVersion).toBe('autoscaling/v1');
    expect(l.body.items.every((i: any) => i.apiVersion === 'autoscaling/v1')).toBe(true);
    const r = srv.kubectl(['get', 'hpa', 'web']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE/);
    expect(r.stdout).toMatch(/web\s+Deployment\/web\s+cpu: <unknown>\/60%\s+2\s+5\s+0/);
  });

  test('a watch in v1 sees v2 writes converted', async () => {
    const res = await srv.fetch(`${HPA('v1')}?watch=1&fieldSelector=metadata.name%3Dwatched`);
    const reader = res.body!.getReader();
    await srv.json('POST', HPA('v2'), {
      metadata: { name: 'watched' },
      spec: {
        scaleTargetRef: { kind: 'Deployment', name: 'w' },
        maxReplicas: 4,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 55 } } }],
      },
    });
    let text = '';
    const dec = new TextDecoder();
    while (!text.includes('\n')) text += dec.decode((await reader.read()).value);
    await reader.cancel();
    const ev = JSON.parse(text.split('\n')[0]!);
    expect(ev.type).toBe('ADDED');
    expect(ev.object.apiVersion).toBe('autoscaling/v1');
    expect(ev.object.spec.targetCPUUtilizationPercentage).toBe(55);
  });
});

describe('Event: events.k8s.io/v1 and core/v1 views of one object', () => {
  const EV = '/apis/events.k8s.io/v1/namespaces/default/events';
  test('created in events.k8s.io, read in core with the core names', async () => {
    const e = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'ev1' },
      eventTime: '2026-11-26T10:00:00.000000Z',
      reportingController: 'example.com/ctl',
      reportingInstance: 'ctl-1',
      action: 'Scaling',
      reason: 'Scaled',
      regarding: { kind: 'Deployment', namespace: 'default', name: 'web' },
      note: 'scaled up',
      type: 'Normal',
    };
    const c = await srv.json('POST', EV, e);
    expect(c.status).toBe(201);
    expect(c.body.apiVersion).toBe('events.k8s.io/v1');
    expect(c.body.note).toBe('scaled up');
    const core = await srv.json('GET', '/api/v1/namespaces/default/events/ev1');
    expect(core.status).toBe(200);
    expect(core.body.apiVersion).toBe('v1');
    expect(core.body.message).toBe('scaled up');
    expect(core.body.involvedObject).toEqual({ kind: 'Deployment', namespace: 'default', name: 'web' });
    expect(core.body.reportingComponent).toBe('example.com/ctl');
    expect(core.body.metadata.uid).toBe(c.body.metadata.uid);
    const svc = await srv.json('GET', '/apis/events.svc.io/v1/namespaces/default/events/ev1');
    expect(svc.body.apiVersion).toBe('events.svc.io/v1');
  });

  test('a core event reads in events.k8s.io with the deprecated fields', async () => {
    const c = await srv.json('POST', '/api/v1/namespaces/default/events', {
      metadata: { name: 'old' },
      involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' },
      reason: 'Started',
      message: 'started',
      source: { component: 'kubelet' },
      count: 3,
      type: 'Normal',
    });
    expect(c.status).toBe(201);
    const g = await srv.json('GET', `${EV}/old`);
    expect(g.body.regarding.name).toBe('p');
    expect(g.body.note).toBe('started');
    expect(g.body.deprecatedSource).toEqual({ component: 'kubelet' });
    expect(g.body.deprecatedCount).toBe(3);
    const l = await srv.json('GET', EV);
    expect(l.body.items.map((i: any) => i.metadata.name)).toEqual(expect.arrayContaining(['ev1', 'old']));
  });

  test('the strict rules of events.k8s.io on create, with the reference paths', async () => {
    const bad = await srv.json('POST', EV, {
      metadata: { name: 'bad' },
      regarding: { kind: 'Pod', namespace: 'default', name: 'p' },
      type: 'Odd',
      deprecatedCount: 2,
    });
    expect(bad.status).toBe(422);
    const causes = bad.body.details.causes.map((c: any) => `${c.field}: ${c.message}`);
    expect(causes).toContain('eventTime: Required value');
    expect(causes).toContain('type: Invalid value: "": has invalid value: Odd');
    expect(causes).toContain('count: Invalid value: "": needs to be unset');
  });

  test('kubectl get events.v1.events.k8s.io lists the reference columns', () => {
    const r = srv.kubectl(['get', 'events.v1.events.k8s.io']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE/);
    expect(r.stdout).toMatch(/Normal\s+Scaled\s+deployment\/web\s+scaled up/);
  });
});
