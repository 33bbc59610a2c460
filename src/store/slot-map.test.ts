/** SlotMap against a Map model through random sets, updates, deletes and clears. */
import { expect, test } from 'bun:test';
import { rng } from '../../test/helpers/rng';
import { SlotMap } from './slot-map';

const sorted = <T>(entries: [string, T][]) => [...entries].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));

for (const [keys, steps] of [
  [300, 20_000],
  [40_000, 200_000],
] as const) {
  test(`a SlotMap answers as a Map through sets, inserts, updates, deletes (slots reused) and clears (${keys} keys, ${steps} steps)`, () => {
    const random = rng(42 + keys);
    const m = new SlotMap<{ v: number }>();
    const model = new Map<string, { v: number }>();
    let most = 0;
    for (let step = 0; step < steps; step++) {
      // A new string each time (as requests build keys), with a long shared prefix.
      const key = `/registry/configmaps/ns-${Math.floor(random() * 3)}/k${Math.floor(random() * keys)}`;
      const r = random();
      // Grow in the first half, shrink in the second: the table resizes both ways.
      const grow = step < steps / 2 ? 0.6 : 0.3;
      if (r < grow) {
        const v = { v: step };
        // A key known to be absent goes in with insert (what the key index does for a new key).
        if (!model.has(key) && r < grow / 2) m.insert(key, v);
        else expect(m.set(key, v)).toBe(!model.has(key));
        model.set(key, v);
      } else if (r < 0.9995) {
        expect(m.delete(key)).toBe(model.delete(key));
      } else {
        m.clear();
        model.clear();
      }
      most = Math.max(most, model.size);
      expect(m.size).toBe(model.size);
      expect(m.get(key)).toBe(model.get(key));
      expect(m.has(key)).toBe(model.has(key));
      if (step % 4999 === 0 || step === steps - 1) {
        // Every key and value (in slot order: compared sorted), and every held key found again.
        const seen: [string, { v: number }][] = [];
        m.forEach((v, k) => {
          seen.push([k, v]);
        });
        expect(sorted(seen)).toEqual(sorted([...model]));
        expect(new Set(m.values())).toEqual(new Set(model.values()));
        for (const [k, v] of model) expect(m.get(k)).toBe(v);
      }
    }
    // Deleted keys' slots were reused: never more slots than keys held at once.
    const slots = (m as unknown as { slotCount: number }).slotCount;
    expect(slots).toBeLessThanOrEqual(most);
  });
}

test('keys that share their hashes are told apart, through deletes that shift the run after them (wrapping around)', () => {
  const m = new SlotMap<number>();
  const table = m as unknown as { hash: (k: string) => number; mask: number };
  expect(table.mask).toBe(255);
  // Two hashes, homes near the table's end and near its start: one run of linear probing that
  // wraps around holds every key.
  table.hash = (k) => (Number(k.slice(4)) % 2 === 0 ? 250 : 0);
  const keys = Array.from({ length: 100 }, (_, i) => `key-${i}`);
  keys.forEach((k, i) => {
    m.insert(k, i);
  });
  for (let i = 0; i < keys.length; i += 3) expect(m.delete(keys[i] as string)).toBe(true);
  keys.forEach((k, i) => {
    expect(m.get(k)).toBe(i % 3 === 0 ? undefined : i);
  });
  expect(m.size).toBe(66);
  expect(m.set('key-0', -1)).toBe(true);
  expect(m.get('key-0')).toBe(-1);
});
