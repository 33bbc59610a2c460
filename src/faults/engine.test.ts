import { expect, describe as group, test } from 'bun:test';
import type { Obj } from '../api/meta';
import { parseRequestInfo, requestUrl } from '../api/request-info';
import type { UserInfo } from '../api/user';
import { compileFault } from './compile';
import { describe, FaultSet } from './engine';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const alice: UserInfo = { name: 'alice', uid: '', groups: ['system:authenticated'] };
const bob: UserInfo = { name: 'bob', uid: '', groups: ['system:authenticated'] };

let uid = 0;
function fault(name: string, actions: unknown[], spec: Record<string, unknown> = {}, rule: Record<string, unknown> = {}): Obj {
  return {
    apiVersion: 'testing.svc.io/v1alpha1',
    kind: 'FaultInjection',
    metadata: { name, uid: `u-${++uid}`, generation: 1, creationTimestamp: new Date(T0).toISOString() },
    spec: {
      match: [
        {
          subjects: [{ kind: 'User', user: { name: 'alice' } }],
          resourceRules: [{ verbs: ['*'], apiGroups: [''], resources: ['configmaps'], namespaces: ['ns'], ...rule }],
        },
      ],
      actions,
      ...spec,
    },
  } as Obj;
}

function request(method: string, path: string) {
  const url = requestUrl(`https://x${path}`);
  return { url, info: parseRequestInfo(method, url.pathname, url.searchParams) };
}
const GET = request('GET', '/api/v1/namespaces/ns/configmaps/a');
const LIST = request('GET', '/api/v1/namespaces/ns/configmaps');
const CONTINUED = request('GET', '/api/v1/namespaces/ns/configmaps?limit=1&continue=x');
const WATCH = request('GET', '/api/v1/namespaces/ns/configmaps?watch=1');
const CREATE = request('POST', '/api/v1/namespaces/ns/configmaps');
const OTHER_NS = request('GET', '/api/v1/namespaces/other/configmaps/a');
const PODS = request('GET', '/api/v1/namespaces/ns/pods/a');

const set = (...objs: Obj[]) => {
  const s = new FaultSet();
  s.configure(objs.map(compileFault));
  return s;
};
const decide = (s: FaultSet, r: typeof GET, user = alice, now = T0 + 1) => s.decide(user, r.info, r.url, () => now);

group('matching', () => {
  test.each([
    ['its user, namespace and resource', alice, GET, true],
    ['another user', bob, GET, false],
    ['another namespace', alice, OTHER_NS, false],
    ['another resource', alice, PODS, false],
  ] as const)('%s', (_, user, r, fires) => {
    const s = set(fault('f', [{ error: { code: 500 } }]));
    expect(decide(s, r, user) !== undefined).toBe(fires);
    expect(s.counts.get(s.faults[0]?.uid as string)?.matched).toBe(fires ? 1 : 0);
  });

  test.each([
    ['409 on a get', { error: { code: 409 } }, GET, false],
    ['409 on a create', { error: { code: 409 } }, CREATE, true],
    ['watch on a get', { watch: { closeAfterEvents: 1 } }, GET, false],
    ['watch on a watch', { watch: { closeAfterEvents: 1 } }, WATCH, true],
    ['stale on a get', { stale: { revisions: 2 } }, GET, true],
    ['stale on a get of the status', { stale: { revisions: 2 } }, request('GET', '/api/v1/namespaces/ns/configmaps/a/status'), true],
    ['stale on a get of the log', { stale: { revisions: 2 } }, request('GET', '/api/v1/namespaces/ns/configmaps/a/log'), false],
    ['stale on a list', { stale: { revisions: 2 } }, LIST, true],
    ['stale on a continued list', { stale: { revisions: 2 } }, CONTINUED, false],
    ['failWrites on a get', { store: { failWrites: true } }, GET, false],
    ['failWrites on a create', { store: { failWrites: true } }, CREATE, true],
    ['compact on a get', { store: { compact: true } }, GET, true],
  ] as const)('an action applies only where it can: %s', (_, action, r, fires) => {
    expect(
      decide(set(fault('f', [action], {}, { resources: ['configmaps', 'configmaps/status', 'configmaps/log'] })), r) !== undefined,
    ).toBe(fires);
  });
});

test('schedule and limit', () => {
  const s = set(fault('f', [{ error: { code: 503 } }], { schedule: { startAfterSeconds: 10, activeForSeconds: 5 }, limit: 2 }));
  expect(decide(s, GET, alice, T0 + 9_999)).toBeUndefined();
  expect(decide(s, GET, alice, T0 + 15_000)).toBeUndefined();
  expect(decide(s, GET, alice, T0 + 10_000)?.error?.code).toBe(503);
  expect(decide(s, GET, alice, T0 + 14_999)?.error?.code).toBe(503);
  // The limit is spent.
  expect(decide(s, GET, alice, T0 + 12_000)).toBeUndefined();
  expect(s.counts.get(s.faults[0]?.uid as string)).toMatchObject({ matched: 2, injected: 2 });
});

test('faults combine: delays add up, the first error by name answers', () => {
  const s = set(
    fault('b-error', [{ error: { code: 504 } }, { delay: { fixedMs: 10 } }]),
    fault('a-error', [{ error: { code: 429, retryAfterSeconds: 3 } }]),
    fault('c-delay', [{ delay: { fixedMs: 5, phase: 'After' } }]),
  );
  const inj = decide(s, GET);
  expect(inj?.error?.code).toBe(429);
  expect(inj?.error?.headers).toEqual({ 'Retry-After': '3' });
  expect(inj?.delayBeforeMs).toBe(10);
  expect(inj?.delayAfterMs).toBe(5);
  expect(inj && describe(inj)).toBe('a-error:error; b-error:error,delay; c-delay:delay');
});

test('a probability and a seed give the same decisions every time; counts keep across a reconfiguration', () => {
  const o = fault('p', [{ delay: { fixedMs: 1, jitterMs: 50 } }], { probability: 0.3, seed: 99 });
  const run = () => {
    const s = set(o);
    return Array.from({ length: 40 }, () => decide(s, GET)?.delayBeforeMs ?? -1);
  };
  const a = run();
  expect(run()).toEqual(a);
  const fired = a.filter((x) => x >= 0).length;
  expect(fired).toBeGreaterThan(3);
  expect(fired).toBeLessThan(25);
  const s = set(o);
  decide(s, GET);
  const before = s.counts.get(o.metadata.uid as string)?.matched;
  s.configure([compileFault(o)]);
  expect(s.counts.get(o.metadata.uid as string)?.matched).toBe(before);
  s.configure([]);
  expect(s.active).toBe(false);
  expect(s.counts.size).toBe(0);
});

test('a slow disk: the longest slowFsyncMs of the faults that fire, on writes only, not an answer delay', () => {
  const s = set(fault('a', [{ store: { slowFsyncMs: 50 } }]), fault('b', [{ store: { slowFsyncMs: 80 } }]));
  const inj = decide(s, CREATE);
  expect(inj?.slowFsyncMs).toBe(80);
  expect(inj?.delayAfterMs).toBe(0);
  expect(decide(s, GET)).toBeUndefined();
});
