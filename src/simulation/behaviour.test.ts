import { expect, test } from 'bun:test';
import type { Obj } from '../api/meta';
import { type Behaviour, behaviourOf, transition } from './behaviour';
import { buildStatus, decodeRun, type RunState } from './pod-status';

const pod = (spec: Record<string, unknown> = {}, annotations: Record<string, string> = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns', uid: 'u1', annotations },
  spec: { containers: [{ name: 'app', image: 'nginx' }], ...spec },
});

/** Every state from `new` with no waiting, each written and read back as a kubelet's restart would. */
function walk(p: Obj, b: Behaviour, steps: number): string[] {
  const out: string[] = [];
  let cur = p;
  let now = 1_800_000_000_000;
  for (let i = 0; i < steps; i++) {
    const rs = decodeRun(cur);
    const t = transition(cur, rs, b, now);
    if (!t) break;
    now += t.delayMs;
    const next: RunState = t.next;
    cur = { ...cur, status: buildStatus(cur, next, { hostIP: '172.16.0.1', podIP: '10.64.0.2', now, ready: b.ready }) };
    const back = decodeRun(cur);
    out.push(`${back.stage}/${back.restarts}`);
  }
  return out;
}

test.each([
  ['long-running', pod(), {}, ['pending/0', 'running/0']],
  ['init containers first', pod({ initContainers: [{ name: 'a' }, { name: 'b' }] }), {}, ['pending/0', 'init/0', 'init/0', 'running/0']],
  [
    'run-duration, Never',
    pod({ restartPolicy: 'Never' }, { 'sim.svc.io/run-duration': '2s' }),
    {},
    ['pending/0', 'running/0', 'succeeded/0'],
  ],
  ['exit-code, Never', pod({ restartPolicy: 'Never' }, { 'sim.svc.io/exit-code': '2' }), {}, ['pending/0', 'running/0', 'failed/0']],
  [
    'exit-code, Always: back-off and restarts',
    pod({}, { 'sim.svc.io/exit-code': '1' }),
    {},
    ['pending/0', 'running/0', 'backoff/0', 'running/1', 'backoff/1', 'running/2'],
  ],
  [
    'exit 0 under OnFailure: Succeeded',
    pod({ restartPolicy: 'OnFailure' }, { 'sim.svc.io/run-duration': '1s' }),
    {},
    ['pending/0', 'running/0', 'succeeded/0'],
  ],
] as [string, Obj, object, string[]][])('%s', (_what, p, _x, want) => {
  expect(walk(p, behaviourOf(p, 'fast'), 8).slice(0, want.length)).toEqual(want);
});

test('back-off doubles from 10 s to 5 minutes, as the message says', () => {
  const p = pod({}, { 'sim.svc.io/exit-code': '1' });
  const b = behaviourOf(p, 'fast');
  const delays: number[] = [];
  let rs: RunState = { stage: 'running', initDone: 0, restarts: 0, since: 0 };
  for (let i = 0; i < 7; i++) {
    const t = transition(p, { ...rs, stage: 'running' }, b, 0);
    rs = t?.next as RunState;
    const st = buildStatus(p, rs, { hostIP: 'h', now: 0, ready: true }) as {
      containerStatuses: { state: { waiting: { message: string } } }[];
    };
    delays.push(decodeRun({ ...p, status: st }).backoffSec as number);
    rs = { ...rs, restarts: rs.restarts + 1 };
  }
  expect(delays).toEqual([10, 20, 40, 80, 160, 300, 300]);
});

test('realistic profile: 1 s to 5 s per step, the same at every look', () => {
  const p = pod();
  const a = behaviourOf(p, 'realistic');
  expect(a.startDelayMs).toBeGreaterThanOrEqual(1000);
  expect(a.startDelayMs).toBeLessThanOrEqual(5000);
  expect(behaviourOf(p, 'realistic').startDelayMs).toBe(a.startDelayMs);
  expect(behaviourOf(p, 'fast').startDelayMs).toBe(0);
});
