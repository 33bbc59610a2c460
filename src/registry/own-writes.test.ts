import { describe, expect, test } from 'bun:test';
import { OwnWriteSeats } from './own-writes';

const tick = () => new Promise<void>((r) => setTimeout(r, 1));

describe('OwnWriteSeats', () => {
  test('at most `seats` run at once; the others wait in order and each gets a seat', async () => {
    const g = new OwnWriteSeats(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const gates: (() => void)[] = [];
    const runs = [0, 1, 2, 3, 4].map((i) =>
      g.run(async () => {
        running++;
        most = Math.max(most, running);
        order.push(i);
        await new Promise<void>((r) => gates.push(r));
        running--;
        return i * 10;
      }),
    );
    await tick();
    expect(order).toEqual([0, 1]);
    expect(g.busy).toBe(2);
    expect(g.queued).toBe(3);
    while (gates.length > 0 || order.length < 5) {
      (gates.shift() as () => void)();
      await tick();
    }
    expect(await Promise.all(runs)).toEqual([0, 10, 20, 30, 40]);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
    expect(g.busy).toBe(0);
    expect(g.queued).toBe(0);
    expect(g.waited).toBe(3);
  });

  test('a failing write gives its seat back', async () => {
    const g = new OwnWriteSeats(1);
    await expect(g.run(async () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(await g.run(async () => 'next')).toBe('next');
    expect(g.busy).toBe(0);
  });

  test('background writes wait behind the others, taking every fourth freed seat while both wait', async () => {
    const g = new OwnWriteSeats(1);
    const order: string[] = [];
    const gates: (() => void)[] = [];
    const write = (name: string, background: boolean) =>
      g.run(async () => {
        order.push(name);
        await new Promise<void>((r) => gates.push(r));
      }, background);
    const runs = [write('first', false), write('b1', true), write('b2', true)];
    for (let i = 1; i <= 6; i++) runs.push(write(`w${i}`, false));
    await tick();
    expect(g.queued).toBe(8);
    while (order.length < 9 || gates.length > 0) {
      (gates.shift() as () => void)();
      await tick();
    }
    await Promise.all(runs);
    // Freed seats 1-3 go to the other writes, the 4th to a background one; 5-7 to the others,
    // the 8th to the second background one.
    expect(order).toEqual(['first', 'w1', 'w2', 'w3', 'b1', 'w4', 'w5', 'w6', 'b2']);
    expect(g.busy).toBe(0);
  });

  test('a background write alone gets a free seat at once', async () => {
    const g = new OwnWriteSeats(2);
    expect(await g.run(async () => 'event', true)).toBe('event');
    expect(g.waited).toBe(0);
  });
});
