/**
 * Compaction as the reference's compactor: every interval, compact to the revision seen one
 * interval ago (so a reader has at least one interval to finish a paged list). An interval of 0
 * turns it off, as the reference's --etcd-compaction-interval.
 */
import { isStoreError, type KV } from './types';

export function startCompactor(kv: KV, intervalMs: number, log: (msg: string) => void): { stop(): void } {
  if (intervalMs <= 0) return { stop: () => {} };
  let seen = kv.currentRevision();
  const timer = setInterval(() => {
    const target = seen;
    seen = kv.currentRevision();
    if (target > kv.compactedRevision()) {
      kv.compact(target).catch((e) => {
        if (!isStoreError(e, 'compacted')) log(`compaction to ${target} failed: ${String(e)}`);
      });
    }
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
