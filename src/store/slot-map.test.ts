/** SlotMap against a Map model through random sets, updates, deletes and clears. */
import { expect, test } from 'bun:test';
import { rng } from '../../test/helpers/rng';
import { SlotMap } from './slot-map';

for (const youngKeys of [undefined, 1, 16]) {
  test(`a SlotMap answers as a Map through sets, inserts, updates, deletes (slots reused) and clears (new keys moved into the old index every ${youngKeys ?? 'default'})`, () => {
    const random = rng(42);
    const m = new SlotMap<{ v: number }>(youngKeys);
    const model = new Map<string, { v: number }>();
    for (let step = 0; step < 20_000; step++) {
      const key = `k${Math.floor(random() * 300)}`;
      const r = random();
      if (r < 0.5) {
        const v = { v: step };
        // A key known to be absent goes in with insert (what the key index does for a new key).
        if (!model.has(key) && r < 0.25) m.insert(key, v);
        else expect(m.set(key, v)).toBe(!model.has(key));
        model.set(key, v);
      } else if (r < 0.95) {
        expect(m.delete(key)).toBe(model.delete(key));
      } else if (r < 0.951) {
        m.clear();
        model.clear();
      }
      expect(m.size).toBe(model.size);
      expect(m.get(key)).toBe(model.get(key));
      expect(m.has(key)).toBe(model.has(key));
      if (step % 997 === 0) {
        // Every key and value, in a Map's order (first set, a deleted key set again goes last).
        const seen: [string, { v: number }][] = [];
        m.forEach((v, k) => {
          seen.push([k, v]);
        });
        expect(seen).toEqual([...model]);
        expect(m.values()).toEqual([...model.values()]);
      }
    }
    // Deleted keys' slots were reused: never more slots than keys held at once.
    const slots = (m as unknown as { slotCount: number }).slotCount;
    expect(slots).toBeLessThanOrEqual(300);
  });
}
