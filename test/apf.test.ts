/**
 * API Priority and Fairness (issue 10), end to end over HTTP: the bootstrap configuration and its
 * upkeep, the Dangling condition, classification shown by the PF headers (users from
 * --token-auth-file and a service account token), a Reject level answering 429, a Queue level
 * making a request wait and timing it out, metrics and the debug dumps.
 *
 * The server shares 3 seats (--max-requests-inflight=2 --max-mutating-requests-inflight=1), so a
 * level of 1 share out of ~246 has exactly 1 seat; "slow" LISTs ask for a resourceVersion the
 * store has not reached, which the server answers after 3 s (504).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type Server, startServer } from './helpers/server';
import { until } from './helpers/until';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const FC = '/apis/flowcontrol.apiserver.svc.io/v1';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-apf-'));
const tokenFile = path.join(dir, 'tokens.csv');
fs.writeFileSync(
  tokenFile,
  ['dev-token,dev,uid-dev,"developers"', 'ops-token,ops,uid-ops,"operators"', 'wide-token,wide,uid-wide,"wide"', ''].join('\n'),
);
let srv: Server;
beforeAll(async () => {
  srv = await startServer({
    args: [
      `--token-auth-file=${tokenFile}`,
      '--max-requests-inflight=2',
      '--max-mutating-requests-inflight=1',
      '--request-timeout=8s',
      // LIST seats by the objects returned (the 1.34 default counts bytes: see work-estimate.test.ts).
      '--feature-gates=SizeBasedListCostEstimate=false',
    ],
  });
  // Both test users may list configmaps.
  await srv.json('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'apf-test-view' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'dev' },
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'ops' },
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'wide' },
    ],
  });
});
afterAll(async () => {
  await srv?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const get = async (p: string, token?: string) => {
  const r = await srv.fetch(p, token ? { token } : {});
  const text = await r.text();
  return { status: r.status, headers: r.headers, body: text.startsWith('{') ? (JSON.parse(text) as Json) : text };
};
const uidOf = async (kind: 'flowschemas' | 'prioritylevelconfigurations', name: string) =>
  ((await srv.json('GET', `${FC}/${kind}/${name}`)).body as Json).metadata.uid as string;
const names = async (kind: string) =>
  ((await srv.json('GET', `${FC}/${kind}`)).body as Json).items.map((i: Json) => i.metadata.name).sort();
/** A LIST the server answers only after 3 s (a resourceVersion it has not reached). */
const slowList = (token: string) =>
  get('/api/v1/namespaces/default/configmaps?resourceVersion=999999999&resourceVersionMatch=NotOlderThan', token);

const plc = (name: string, limited: Json) => ({
  apiVersion: 'flowcontrol.apiserver.svc.io/v1',
  kind: 'PriorityLevelConfiguration',
  metadata: { name },
  spec: { type: 'Limited', limited },
});
const flowSchema = (name: string, level: string, user: string, precedence = 10) => ({
  apiVersion: 'flowcontrol.apiserver.svc.io/v1',
  kind: 'FlowSchema',
  metadata: { name },
  spec: {
    priorityLevelConfiguration: { name: level },
    matchingPrecedence: precedence,
    distinguisherMethod: { type: 'ByUser' },
    rules: [
      {
        subjects: [{ kind: 'User', user: { name: user } }],
        resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
      },
    ],
  },
});

describe('bootstrap configuration', () => {
  test('the reference objects exist, with their specs', async () => {
    expect(await names('prioritylevelconfigurations')).toEqual(
      ['catch-all', 'exempt', 'global-default', 'leader-election', 'node-high', 'system', 'workload-high', 'workload-low'].sort(),
    );
    expect(await names('flowschemas')).toEqual(
      [
        'catch-all',
        'endpoint-controller',
        'exempt',
        'global-default',
        'kube-controller-manager',
        'kube-scheduler',
        'kube-system-service-accounts',
        'probes',
        'service-accounts',
        'system-leader-election',
        'system-node-high',
        'system-nodes',
        'workload-leader-election',
      ].sort(),
    );
    const low = (await srv.json('GET', `${FC}/prioritylevelconfigurations/workload-low`)).body as Json;
    expect(low.spec.limited.nominalConcurrencyShares).toBe(100);
    expect(low.spec.limited.lendablePercent).toBe(90);
    expect(low.metadata.annotations['apf.kubernetes.io/autoupdate-spec']).toBe('true');
    const cm = (await srv.json('GET', `${FC}/flowschemas/catch-all`)).body as Json;
    expect(cm.spec.matchingPrecedence).toBe(10000);
  });

  test('a deleted or changed mandatory object is restored', async () => {
    expect((await srv.json('DELETE', `${FC}/flowschemas/catch-all`)).status).toBe(200);
    const back = await until(
      () => srv.json('GET', `${FC}/flowschemas/catch-all`),
      (r) => r.status === 200,
    );
    expect(back.status).toBe(200);
    const patched = await srv.json(
      'PATCH',
      `${FC}/prioritylevelconfigurations/exempt`,
      { spec: { exempt: { lendablePercent: 50 } } },
      {
        'content-type': 'application/merge-patch+json',
      },
    );
    expect(patched.status).toBe(200);
    const restored = await until(
      () => srv.json('GET', `${FC}/prioritylevelconfigurations/exempt`),
      (r) => (r.body as Json).spec.exempt.lendablePercent === 0,
    );
    expect((restored.body as Json).spec.exempt.lendablePercent).toBe(0);
  });

  test('a suggested object is recreated when deleted, put back while it auto-updates, left alone once it does not', async () => {
    expect((await srv.json('DELETE', `${FC}/prioritylevelconfigurations/workload-high`)).status).toBe(200);
    const back = await until(
      () => srv.json('GET', `${FC}/prioritylevelconfigurations/workload-high`),
      (r) => r.status === 200,
    );
    expect((back.body as Json).spec.limited.nominalConcurrencyShares).toBe(40);
    const mp = { 'content-type': 'application/merge-patch+json' };
    await srv.json(
      'PATCH',
      `${FC}/prioritylevelconfigurations/global-default`,
      { spec: { limited: { nominalConcurrencyShares: 21 } } },
      mp,
    );
    const reverted = await until(
      () => srv.json('GET', `${FC}/prioritylevelconfigurations/global-default`),
      (r) => (r.body as Json).spec.limited.nominalConcurrencyShares === 20,
    );
    expect((reverted.body as Json).spec.limited.nominalConcurrencyShares).toBe(20);
    // The user takes it over: annotation false, then its own spec stays.
    await srv.json(
      'PATCH',
      `${FC}/prioritylevelconfigurations/global-default`,
      { metadata: { annotations: { 'apf.kubernetes.io/autoupdate-spec': 'false' } }, spec: { limited: { nominalConcurrencyShares: 22 } } },
      mp,
    );
    await Bun.sleep(1000);
    const kept = await srv.json('GET', `${FC}/prioritylevelconfigurations/global-default`);
    expect((kept.body as Json).spec.limited.nominalConcurrencyShares).toBe(22);
  });
});

describe('PriorityLevelConfiguration defaults and validation', () => {
  test('nominalConcurrencyShares defaults to 30 only when unset; an explicit 0 stays; zero queuing fields get defaults', async () => {
    const unset = await srv.json('POST', `${FC}/prioritylevelconfigurations`, plc('d-unset', { limitResponse: { type: 'Reject' } }));
    expect(unset.status).toBe(201);
    expect((unset.body as Json).spec.limited).toEqual({
      nominalConcurrencyShares: 30,
      lendablePercent: 0,
      limitResponse: { type: 'Reject' },
    });
    const zero = await srv.json(
      'POST',
      `${FC}/prioritylevelconfigurations`,
      plc('d-zero', {
        nominalConcurrencyShares: 0,
        limitResponse: { type: 'Queue', queuing: { queues: 0, handSize: 0, queueLengthLimit: 0 } },
      }),
    );
    expect(zero.status).toBe(201);
    expect((zero.body as Json).spec.limited.nominalConcurrencyShares).toBe(0);
    expect((zero.body as Json).spec.limited.limitResponse.queuing).toEqual({ queues: 64, handSize: 8, queueLengthLimit: 50 });
    // A level with 0 shares has 0 nominal seats: the metrics say so.
    const metrics = (
      await until(
        () => get('/metrics'),
        (r) => (r.body as string).includes('nominal_limit_seats{priority_level="d-zero"}'),
      )
    ).body as string;
    expect(metrics).toContain('apiserver_flowcontrol_nominal_limit_seats{priority_level="d-zero"} 0');
    await srv.json('DELETE', `${FC}/prioritylevelconfigurations/d-unset`);
    await srv.json('DELETE', `${FC}/prioritylevelconfigurations/d-zero`);
  });

  test('the reference bounds: the entropy of queues and hand size, type Exempt only for "exempt"', async () => {
    const deal = await srv.json(
      'POST',
      `${FC}/prioritylevelconfigurations`,
      plc('bad-deal', { limitResponse: { type: 'Queue', queuing: { queues: 128, handSize: 10, queueLengthLimit: 5 } } }),
    );
    expect(deal.status).toBe(422);
    expect((deal.body as Json).details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'spec.limited.limitResponse.queuing.handSize',
        message: 'Invalid value: 10: required entropy bits of deckSize 128 and handSize 10 should not be greater than 60',
      },
    ]);
    const exempt = await srv.json('POST', `${FC}/prioritylevelconfigurations`, {
      apiVersion: 'flowcontrol.apiserver.svc.io/v1',
      kind: 'PriorityLevelConfiguration',
      metadata: { name: 'mine' },
      spec: { type: 'Exempt' },
    });
    expect(exempt.status).toBe(422);
    expect((exempt.body as Json).message).toContain("type must be 'Exempt' if and only if name is 'exempt'");
  });
});

describe('Dangling condition', () => {
  test('True/NotFound while the priority level is missing, False/Found within a second of its creation', async () => {
    expect((await srv.json('POST', `${FC}/flowschemas`, flowSchema('orphan', 'not-yet', 'nobody'))).status).toBe(201);
    const dangling = await until(
      () => srv.json('GET', `${FC}/flowschemas/orphan`),
      (r) => ((r.body as Json).status?.conditions ?? []).some((c: Json) => c.type === 'Dangling'),
      1000,
    );
    const cond = (dangling.body as Json).status.conditions.find((c: Json) => c.type === 'Dangling');
    expect(cond).toMatchObject({
      status: 'True',
      reason: 'NotFound',
      message: 'This FlowSchema references the PriorityLevelConfiguration object named "not-yet" but there is no such object',
    });
    expect(typeof cond.lastTransitionTime).toBe('string');
    expect((dangling.body as Json).metadata.managedFields.map((m: Json) => m.manager)).toContain(
      'api-priority-and-fairness-config-consumer-v1',
    );
    const pl = plc('not-yet', { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject' } });
    expect((await srv.json('POST', `${FC}/prioritylevelconfigurations`, pl)).status).toBe(201);
    const found = await until(
      () => srv.json('GET', `${FC}/flowschemas/orphan`),
      (r) => (r.body as Json).status.conditions.find((c: Json) => c.type === 'Dangling')?.status === 'False',
      1000,
    );
    expect((found.body as Json).status.conditions.find((c: Json) => c.type === 'Dangling')).toMatchObject({
      status: 'False',
      reason: 'Found',
      message: 'This FlowSchema references the PriorityLevelConfiguration object named "not-yet" and it exists',
    });
  });
});

describe('classification', () => {
  test('system:masters requests are exempt; other users fall to global-default; the headers say so', async () => {
    const admin = await get('/api/v1/namespaces');
    expect(admin.headers.get('x-kubernetes-pf-flowschema-uid')).toBe(await uidOf('flowschemas', 'exempt'));
    expect(admin.headers.get('x-kubernetes-pf-prioritylevel-uid')).toBe(await uidOf('prioritylevelconfigurations', 'exempt'));
    const dev = await get('/api/v1/namespaces/default/configmaps', 'dev-token');
    expect(dev.status).toBe(200);
    expect(dev.headers.get('x-kubernetes-pf-flowschema-uid')).toBe(await uidOf('flowschemas', 'global-default'));
    expect(dev.headers.get('x-kubernetes-pf-prioritylevel-uid')).toBe(await uidOf('prioritylevelconfigurations', 'global-default'));
    // Authorization comes first (as the reference's chain): a 403 is not classified.
    const denied = await get('/api/v1/secrets', 'dev-token');
    expect(denied.status).toBe(403);
    expect(denied.headers.get('x-kubernetes-pf-flowschema-uid')).toBeNull();
  });

  test('a service account token is classified by the service-accounts schema', async () => {
    await srv.json('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'apf-robot' } });
    const tr = await srv.json('POST', '/api/v1/namespaces/default/serviceaccounts/apf-robot/token', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {},
    });
    expect(tr.status).toBe(201);
    const r = await get('/apis', (tr.body as Json).status.token);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-kubernetes-pf-flowschema-uid')).toBe(await uidOf('flowschemas', 'service-accounts'));
    expect(r.headers.get('x-kubernetes-pf-prioritylevel-uid')).toBe(await uidOf('prioritylevelconfigurations', 'workload-low'));
  });
});

describe('limits', () => {
  test('a Reject level with 1 seat answers 429 to the second of two concurrent slow LISTs', async () => {
    const pl = plc('tiny', {
      nominalConcurrencyShares: 1,
      lendablePercent: 0,
      borrowingLimitPercent: 0,
      limitResponse: { type: 'Reject' },
    });
    expect((await srv.json('POST', `${FC}/prioritylevelconfigurations`, pl)).status).toBe(201);
    expect((await srv.json('POST', `${FC}/flowschemas`, flowSchema('tiny', 'tiny', 'dev'))).status).toBe(201);
    const tinyUid = await uidOf('flowschemas', 'tiny');
    await until(
      () => get('/api/v1/namespaces/default/configmaps', 'dev-token'),
      (r) => r.headers.get('x-kubernetes-pf-flowschema-uid') === tinyUid,
    );
    const first = slowList('dev-token');
    await Bun.sleep(200);
    const second = await get('/api/v1/namespaces/default/configmaps', 'dev-token');
    expect(second.status).toBe(429);
    expect(second.headers.get('retry-after')).toBe('1');
    expect(second.headers.get('x-kubernetes-pf-flowschema-uid')).toBe(tinyUid);
    expect(second.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'TooManyRequests', code: 429 });
    // Another user's flow is not affected.
    expect((await get('/api/v1/namespaces/default/configmaps', 'ops-token')).status).toBe(200);
    expect((await first).status).toBe(504);
    expect((await get('/api/v1/namespaces/default/configmaps', 'dev-token')).status).toBe(200);

    const metrics = (await get('/metrics')).body as string;
    expect(metrics).toContain(
      'apiserver_flowcontrol_rejected_requests_total{flow_schema="tiny",priority_level="tiny",reason="concurrency-limit"} 1',
    );
    expect(metrics).toMatch(/apiserver_flowcontrol_dispatched_requests_total\{flow_schema="tiny",priority_level="tiny"\} [1-9]/);
    expect(metrics).toContain('apiserver_flowcontrol_nominal_limit_seats{priority_level="tiny"} 1');
    expect(metrics).toContain('apiserver_flowcontrol_current_limit_seats{priority_level="tiny"} 1');
    expect(metrics).toMatch(
      /apiserver_flowcontrol_request_execution_seconds_count\{flow_schema="tiny",priority_level="tiny",type="regular"\} [1-9]/,
    );
    expect(metrics).toContain('apiserver_flowcontrol_current_inqueue_requests{flow_schema="tiny",priority_level="tiny"} 0');
  }, 15_000);

  test('a Queue level makes the second request wait (dump_requests shows it), then times it out at a quarter of the request timeout', async () => {
    const pl = plc('narrow', {
      nominalConcurrencyShares: 1,
      lendablePercent: 0,
      borrowingLimitPercent: 0,
      limitResponse: { type: 'Queue', queuing: { queues: 4, handSize: 2, queueLengthLimit: 5 } },
    });
    expect((await srv.json('POST', `${FC}/prioritylevelconfigurations`, pl)).status).toBe(201);
    expect((await srv.json('POST', `${FC}/flowschemas`, flowSchema('narrow', 'narrow', 'ops'))).status).toBe(201);
    const uid = await uidOf('flowschemas', 'narrow');
    await until(
      () => get('/api/v1/namespaces/default/configmaps', 'ops-token'),
      (r) => r.headers.get('x-kubernetes-pf-flowschema-uid') === uid,
    );
    const first = slowList('ops-token');
    await Bun.sleep(200);
    const started = Date.now();
    const second = get('/api/v1/namespaces/default/configmaps', 'ops-token');
    await Bun.sleep(300);
    const dump = (await get('/debug/api_priority_and_fairness/dump_requests?includeRequestDetails=1')).body as string;
    const lines = dump.trim().split('\n');
    expect(lines[0]).toMatch(/^PriorityLevelName, +FlowSchemaName, +QueueIndex, +RequestIndexInQueue, +FlowDistingsher, +ArriveTime,/);
    expect(lines[0]).toContain('UserName');
    const row = lines.find((l) => l.startsWith('narrow,'));
    expect(row).toBeDefined();
    expect(row).toMatch(/^narrow, +narrow, +\d+, +0, +ops, /);
    expect(row).toContain(' list,');
    const levels = (await get('/debug/api_priority_and_fairness/dump_priority_levels')).body as string;
    expect(levels.split('\n')[0]).toMatch(
      /^PriorityLevelName, +ActiveQueues, +IsIdle, +IsQuiescing, +WaitingRequests, +ExecutingRequests,/,
    );
    expect(levels).toMatch(/\nnarrow, +[12], +false, +false, +1, +1, /);
    const queues = (await get('/debug/api_priority_and_fairness/dump_queues')).body as string;
    expect(queues.split('\n')[0]).toMatch(/^PriorityLevelName, +Index, +PendingRequests, +ExecutingRequests, +SeatsInUse, +NextDispatchR,/);
    expect(queues.split('\n').filter((l) => l.startsWith('narrow,')).length).toBe(4);
    const metrics = (await get('/metrics')).body as string;
    expect(metrics).toContain('apiserver_flowcontrol_current_inqueue_requests{flow_schema="narrow",priority_level="narrow"} 1');
    // --request-timeout=8s: it waits 2 s, then 429.
    const r = await second;
    const waited = Date.now() - started;
    expect(r.status).toBe(429);
    expect(waited).toBeGreaterThanOrEqual(1900);
    expect(waited).toBeLessThan(3000);
    expect((await first).status).toBe(504);
    const after = (await get('/metrics')).body as string;
    expect(after).toContain(
      'apiserver_flowcontrol_rejected_requests_total{flow_schema="narrow",priority_level="narrow",reason="time-out"} 1',
    );
    expect(after).toMatch(
      /apiserver_flowcontrol_request_wait_duration_seconds_count\{execute="false",flow_schema="narrow",priority_level="narrow"\} 1/,
    );
  }, 15_000);

  test('a queued request runs when the seat frees before its wait limit', async () => {
    // The first request waits for the next revision; the second queues behind it; a write by the
    // (exempt) admin releases the first, then the second runs.
    const rv = Number(((await srv.json('GET', '/api/v1/namespaces/default/configmaps')).body as Json).metadata.resourceVersion);
    const first = get(`/api/v1/namespaces/default/configmaps?resourceVersion=${rv + 1}&resourceVersionMatch=NotOlderThan`, 'ops-token');
    await Bun.sleep(200);
    const started = Date.now();
    const second = get('/api/v1/namespaces/default/configmaps', 'ops-token');
    await Bun.sleep(300);
    expect((await srv.json('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'apf-release' } })).status).toBe(201);
    expect((await first).status).toBe(200);
    const r = await second;
    expect(r.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1900);
    const metrics = (await get('/metrics')).body as string;
    expect(metrics).toMatch(
      /apiserver_flowcontrol_request_wait_duration_seconds_count\{execute="true",flow_schema="narrow",priority_level="narrow"\} [1-9]/,
    );
  }, 10_000);
});

describe('seats by work', () => {
  test("a LIST takes a seat per 100 objects of its resource (the reference's list estimator): 3 for 250 ConfigMaps, 1 for a few Services", async () => {
    // 10,000 shares of the server's 3 seats: the level owns all 3 (the others keep 1 each).
    const pl = plc('wide', {
      nominalConcurrencyShares: 10_000,
      lendablePercent: 0,
      borrowingLimitPercent: 0,
      limitResponse: { type: 'Queue', queuing: { queues: 4, handSize: 2, queueLengthLimit: 5 } },
    });
    expect((await srv.json('POST', `${FC}/prioritylevelconfigurations`, pl)).status).toBe(201);
    expect((await srv.json('POST', `${FC}/flowschemas`, flowSchema('wide', 'wide', 'wide'))).status).toBe(201);
    try {
      expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'wide' } })).status).toBe(201);
      for (let b = 0; b < 250; b += 50) {
        const batch = Array.from({ length: 50 }, (_, i) =>
          srv.json('POST', '/api/v1/namespaces/wide/configmaps', { metadata: { name: `cm-${b + i}` } }),
        );
        for (const r of await Promise.all(batch)) expect(r.status).toBe(201);
      }
      const uid = await uidOf('flowschemas', 'wide');
      await until(
        () => get('/api/v1/namespaces/default/services', 'wide-token'),
        (r) => r.headers.get('x-kubernetes-pf-flowschema-uid') === uid,
      );
      const seatsHistogram = async () => {
        const m = (await get('/metrics')).body as string;
        const le = (b: string) =>
          Number(
            new RegExp(
              `apiserver_flowcontrol_work_estimated_seats_bucket\\{flow_schema="wide",priority_level="wide",le="${b}"\\} (\\d+)`,
            ).exec(m)?.[1] ?? -1,
          );
        return { m, one: le('1'), four: le('4') };
      };
      // The Services LIST (until()'s) took 1 seat.
      const before = await seatsHistogram();
      expect(before.one).toBeGreaterThanOrEqual(1);
      expect(before.four).toBe(before.one);
      expect(before.m).toContain('apiserver_flowcontrol_nominal_limit_seats{priority_level="wide"} 3');
      // A ConfigMaps LIST held 3 s (a resourceVersion not reached) occupies 3 seats while it runs.
      const slow = get('/api/v1/namespaces/wide/configmaps?resourceVersion=999999999&resourceVersionMatch=NotOlderThan', 'wide-token');
      await Bun.sleep(300);
      const during = await seatsHistogram();
      expect(during.m).toContain('apiserver_flowcontrol_current_executing_seats{flow_schema="wide",priority_level="wide"} 3');
      expect(during.m).toContain('apiserver_flowcontrol_current_executing_requests{flow_schema="wide",priority_level="wide"} 1');
      expect(during.one).toBe(before.one);
      expect(during.four).toBe(before.four + 1);
      const queues = (await get('/debug/api_priority_and_fairness/dump_queues')).body as string;
      const seatsInUse = queues
        .split('\n')
        .filter((l) => l.startsWith('wide,'))
        .reduce((n, l) => n + Number(l.split(',')[4]), 0);
      expect(seatsInUse).toBe(3);
      // Meanwhile a one-seat request of the same flow waits, no seat being free, and times out
      // at the wait limit (2 s) before the LIST ends (3 s).
      const small = get('/api/v1/namespaces/default/services', 'wide-token');
      await Bun.sleep(300);
      expect((await get('/metrics')).body as string).toContain(
        'apiserver_flowcontrol_current_inqueue_requests{flow_schema="wide",priority_level="wide"} 1',
      );
      expect((await small).status).toBe(429);
      expect((await slow).status).toBe(504);
    } finally {
      await srv.json('DELETE', `${FC}/flowschemas/wide`);
      await srv.json('DELETE', `${FC}/prioritylevelconfigurations/wide`);
    }
  }, 20_000);
});

describe('off', () => {
  test('--enable-priority-and-fairness=false: no classification, no headers', async () => {
    const off = await startServer({ args: ['--enable-priority-and-fairness=false'] });
    try {
      const r = await off.fetch('/api/v1/namespaces');
      expect(r.status).toBe(200);
      expect(r.headers.get('x-kubernetes-pf-flowschema-uid')).toBeNull();
      expect((await off.fetch('/debug/api_priority_and_fairness/dump_priority_levels')).status).toBe(404);
    } finally {
      await off.stop();
    }
  });
});
