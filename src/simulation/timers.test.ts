import { expect, test } from 'bun:test';
import { TimerQueue } from './timers';

test('deadlines run in order under one timer; rescheduling replaces, cancel drops', async () => {
  const q = new TimerQueue();
  const ran: string[] = [];
  const t0 = Date.now();
  q.schedule('c', t0 + 30, () => ran.push('c'));
  q.schedule('a', t0 + 10, () => ran.push('a'));
  q.schedule('b', t0 + 20, () => ran.push('b'));
  q.schedule('a', t0 + 40, () => ran.push('a2'));
  q.schedule('d', t0 + 15, () => ran.push('d'));
  q.cancel('d');
  expect(q.size).toBe(3);
  expect(q.dueOf('a')).toBe(t0 + 40);
  await Bun.sleep(80);
  expect(ran).toEqual(['b', 'c', 'a2']);
  expect(q.size).toBe(0);
  q.stop();
});

test('a callback that throws is reported; the others still run', async () => {
  const errors: string[] = [];
  const q = new TimerQueue({ onError: (k) => errors.push(k) });
  const ran: string[] = [];
  q.schedule('bad', Date.now(), () => {
    throw new Error('x');
  });
  q.schedule('good', Date.now() + 1, () => ran.push('good'));
  await Bun.sleep(30);
  expect([errors, ran]).toEqual([['bad'], ['good']]);
  q.stop();
});

test('many replaced deadlines do not grow the heap without bound', async () => {
  const q = new TimerQueue();
  let n = 0;
  for (let i = 0; i < 10_000; i++) q.schedule(`k${i % 10}`, Date.now() + 5 + (i % 7), () => n++);
  expect(q.size).toBe(10);
  await Bun.sleep(40);
  expect(n).toBe(10);
  q.stop();
});
