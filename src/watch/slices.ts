/**
 * Long passes over a cache's objects that let the event loop go between slices: a controller,
 * the scheduler or the simulated kubelets starting on 100k pods parse each one (~17 us) and file
 * it; done in one turn, that held every request for 3.4-4.3 s when a replica took the
 * controllers' lease on etcd (2026-11-29). A pass that ends within its first slice ends in the
 * same turn (no promise), so small caches behave as a plain loop did.
 */
import type { Obj } from '../api/meta';
import type { CachedObject } from './events';

/** The longest a slice holds the event loop (ms). */
export const SLICE_MS = 10;

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * `fn` on each item in order, in slices of at most `sliceMs`: undefined when every item was done
 * in the first slice, else a promise of the rest. `stopped` is asked between slices: true ends
 * the pass where it is.
 */
export function eachInSlices<T>(
  items: readonly T[],
  fn: (item: T, i: number) => void,
  stopped: () => boolean = () => false,
  sliceMs = SLICE_MS,
): Promise<void> | undefined {
  const from = (start: number): number => {
    const until = performance.now() + sliceMs;
    let i = start;
    while (i < items.length) {
      fn(items[i] as T, i);
      i++;
      // The clock is read every 32 items: ~0.5 ms of parses at most past the slice.
      if ((i & 31) === 0 && performance.now() >= until) break;
    }
    return i;
  };
  let i = from(0);
  if (i >= items.length) return undefined;
  return (async () => {
    while (i < items.length) {
      await turn();
      if (stopped()) return;
      i = from(i);
    }
  })();
}

/**
 * The cache's shared parses of `cached` (CachedObject.shared: read-only), made in slices; an
 * array when all were made in the first slice, else its promise.
 */
export function sharedObjects(cached: readonly CachedObject[], stopped?: () => boolean): Obj[] | Promise<Obj[]> {
  const out: Obj[] = new Array(cached.length);
  const pass = eachInSlices(cached, (c, i) => (out[i] = c.shared), stopped);
  return pass === undefined ? out : pass.then(() => out);
}
