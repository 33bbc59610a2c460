/**
 * OrderedKeys against a sorted model with reads between few changes (each read merges the keys
 * added since the one before), and the work of such a read: only those keys are sorted.
 */
import { afterEach, expect, test } from 'bun:test';
import { rng } from '../../test/helpers/rng';
import { OrderedKeys } from './ordered-keys';

const keysOf = (o: OrderedKeys, from = '', to?: string): string[] => {
  const out: string[] = [];
  o.each(from, to, (k) => {
    out.push(k);
    return true;
  });
  return out;
};

for (const seed of [11, 12]) {
  test(`reads a few changes apart match the model: adds, removes, removes and adds again (seed ${seed})`, () => {
    const r = rng(seed);
    const o = new OrderedKeys();
    const model = new Set<string>();
    const keyOf = (n: number) => `/registry/configmaps/ns-${n % 5}/cm-${Math.floor(n / 5)}`;
    let nextRead = 1;
    for (let op = 0; op < 16_000; op++) {
      const key = keyOf(Math.floor(r() * 9000));
      if (model.has(key)) {
        o.remove(key);
        model.delete(key);
      } else {
        o.add(key);
        model.add(key);
      }
      // Often enough that keys are added, removed and added again between two reads.
      if (op === nextRead) {
        nextRead += 1 + Math.floor(r() * 40);
        const a = keyOf(Math.floor(r() * 9000));
        const b = keyOf(Math.floor(r() * 9000));
        const [from, to] = a < b ? [a, b] : [b, a];
        const want = [...model].sort();
        expect(keysOf(o, from, to)).toEqual(want.filter((k) => k >= from && k < to));
        if (op % 397 === 0) expect(keysOf(o)).toEqual(want);
      }
    }
    expect(keysOf(o)).toEqual([...model].sort());
  });
}

const sort = Array.prototype.sort;
afterEach(() => {
  Array.prototype.sort = sort;
});

test('a read after a few additions sorts those, not every key added since the last rebuild', () => {
  const o = new OrderedKeys();
  // 20,000 keys in order go straight to the sorted base; 3,000 out of order wait beside it.
  for (let i = 0; i < 20_000; i++) o.add(`/k/${String(i).padStart(6, '0')}`);
  for (let i = 0; i < 3000; i++) o.add(`/k/${String(i).padStart(6, '0')}x`);
  expect(keysOf(o)).toHaveLength(23_000);
  const sorted: number[] = [];
  Array.prototype.sort = function (this: unknown[], ...args: []) {
    sorted.push(this.length);
    return sort.apply(this, args);
  } as typeof sort;
  o.add('/k/000005y');
  o.add('/k/000005a');
  o.remove('/k/000007x');
  const got = keysOf(o, '/k/000005', '/k/000008');
  expect(got).toEqual(['/k/000005', '/k/000005a', '/k/000005x', '/k/000005y', '/k/000006', '/k/000006x', '/k/000007']);
  // The two keys added since the read before, not the 3,002 held beside the base.
  expect(sorted).toEqual([2]);
  // Nothing changed: nothing sorted.
  expect(keysOf(o)).toHaveLength(23_001);
  expect(sorted).toEqual([2]);
});

test('keys added and removed again with no read between keep memory bounded', () => {
  // A churn of short-lived keys (events, pods created and deleted) that nothing lists: before,
  // every such key stayed in the list of additions to sort at the next read, which never came.
  const o = new OrderedKeys();
  for (let i = 0; i < 10_000; i++) o.add(`/registry/pods/ns/held-${String(i).padStart(6, '0')}`);
  let most = 0;
  for (let i = 0; i < 200_000; i++) {
    const key = `/registry/events/ns/e-${i}`;
    o.add(key);
    if (i >= 10) o.remove(`/registry/events/ns/e-${i - 10}`);
    most = Math.max(most, o.pendingKeys());
  }
  // 10 keys live at a time; what is remembered beside them stays near the rebuild threshold.
  expect(most).toBeLessThan(10_000);
  const events = keysOf(o, '/registry/events/', '/registry/events0');
  expect(events).toEqual(Array.from({ length: 10 }, (_, k) => `/registry/events/ns/e-${199_990 + k}`).sort());
  expect(keysOf(o)).toHaveLength(10_010);
});
