import { afterEach, expect, test } from 'bun:test';
import { pod } from './fixtures.test-helpers';
import { SchedulingQueue } from './queue';

let now = 0;
let q: SchedulingQueue;
const make = () => {
  now = 1_000_000;
  q = new SchedulingQueue({ clock: () => now });
  return q;
};
afterEach(() => q.close());

const popName = () => q.tryPop()?.pod.name;

test('activeQ: higher priority first, then the oldest', () => {
  make();
  q.addOrUpdate(pod('low', { priority: 1 }));
  now++;
  q.addOrUpdate(pod('high', { priority: 10 }));
  now++;
  q.addOrUpdate(pod('low2', { priority: 1 }));
  expect([popName(), popName(), popName(), popName()]).toEqual(['high', 'low', 'low2', undefined]);
});

test('unschedulable pods wait for a helpful event, then for their backoff (1 s, 2 s, ... 10 s)', () => {
  make();
  q.addOrUpdate(pod('p'));
  let e = q.tryPop();
  if (!e) throw new Error('no pod');
  expect(q.requeue(e, new Set(['NodeResourcesFit']))).toBe(true);
  expect(q.sizes().unschedulable).toBe(1);
  // A pod bound elsewhere does not help a pod short of cpu.
  q.onEvent('AssignedPodAdd');
  expect(q.sizes().unschedulable).toBe(1);
  // A node added does, but the pod backs off for 1 s first.
  q.onEvent('NodeAdd');
  expect(q.sizes()).toMatchObject({ unschedulable: 0, backoff: 1 });
  expect(popName()).toBeUndefined();
  now += 1000;
  e = q.tryPop();
  expect(e?.pod.name).toBe('p');
  if (!e) throw new Error('no pod');
  // Second failure: 2 s; and so on up to 10 s.
  q.requeue(e, 'error');
  now += 1999;
  expect(popName()).toBeUndefined();
  now += 1;
  expect(popName()).toBe('p');
});

test('the backoff is at most 10 s', () => {
  make();
  q.addOrUpdate(pod('p'));
  for (let i = 0; i < 6; i++) {
    const e = q.tryPop();
    if (!e) throw new Error(`no pod at ${i}`);
    q.requeue(e, 'error');
    now += 10_000;
  }
  const e = q.tryPop();
  if (!e) throw new Error('no pod');
  q.requeue(e, 'error');
  now += 9_999;
  expect(popName()).toBeUndefined();
  now += 1;
  expect(popName()).toBe('p');
});

test('an event during the attempt sends the failed pod to backoff, not unschedulable', () => {
  make();
  q.addOrUpdate(pod('p'));
  const e = q.tryPop();
  if (!e) throw new Error('no pod');
  q.onEvent('NodeAdd');
  q.requeue(e, new Set(['NodeResourcesFit']));
  expect(q.sizes()).toMatchObject({ unschedulable: 0, backoff: 1 });
});

test('updates: a changed spec retries an unschedulable pod; a status-only update does not; delete forgets', () => {
  make();
  q.addOrUpdate(pod('p', {}, { uid: 'u' }));
  const e = q.tryPop();
  if (!e) throw new Error('no pod');
  q.requeue(e, new Set(['NodeAffinity']));
  now += 5000;
  q.addOrUpdate(pod('p', {}, { uid: 'u' }));
  expect(q.sizes().unschedulable).toBe(1);
  q.addOrUpdate(pod('p', { nodeSelector: { a: 'b' } }, { uid: 'u' }));
  expect(popName()).toBe('p');
  q.addOrUpdate(pod('gone'));
  q.delete('default/gone');
  expect(popName()).toBeUndefined();
});

test('pods unschedulable for 5 minutes are retried without an event', () => {
  make();
  q.addOrUpdate(pod('p'));
  const e = q.tryPop();
  if (!e) throw new Error('no pod');
  q.requeue(e, new Set(['NodeAffinity']));
  now += 5 * 60_000 - 1;
  q.flush();
  expect(popName()).toBeUndefined();
  now += 1;
  q.flush();
  expect(popName()).toBe('p');
});

test('a pod bound elsewhere retries only pods rejected by spread or affinity', () => {
  make();
  for (const [name, plugin] of [
    ['fit', 'NodeResourcesFit'],
    ['spread', 'PodTopologySpread'],
  ] as const) {
    q.addOrUpdate(pod(name));
    const e = q.tryPop();
    if (!e) throw new Error('no pod');
    q.requeue(e, new Set([plugin]));
  }
  now += 1000;
  q.onEvent('AssignedPodAdd');
  expect(popName()).toBe('spread');
  expect(q.sizes().unschedulable).toBe(1);
  q.onEvent('PodDelete');
  expect(popName()).toBe('fit');
});
