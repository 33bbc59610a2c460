/**
 * Sets by key (a Map of Sets): the shape of the watch cache's two indexes, its objects' keys by
 * a selector field's value (object-indexes.ts) and its watchers by the value or namespace they
 * select (watchers.ts). The two helpers live here, not in either index, so that neither index
 * file imports the other.
 */

/** Add `v` to the set of `k` in an index (watchers by value, keys by value). */
export function addTo<T>(m: Map<string, Set<T>>, k: string, v: T): void {
  let set = m.get(k);
  if (set === undefined) {
    set = new Set();
    m.set(k, set);
  }
  set.add(v);
}

/** Remove `v` from the set of `k`; a set left empty goes. */
export function removeFrom<T>(m: Map<string, Set<T>>, k: string, v: T): void {
  const set = m.get(k);
  if (set === undefined) return;
  set.delete(v);
  if (set.size === 0) m.delete(k);
}
