/**
 * The embedded store's background upkeep: snapshots, and the compaction of the key index and of
 * the history spill files that follows a compaction.
 *
 * A snapshot starts when the WAL written since the last one outgrows max(snapshotMinBytes, the
 * last snapshot's size) (afterDurable), or at once for snapshot(). It is written paced
 * (snapshotPaceBytesPerSecond) unless someone waits for it (snapshot(), close()), and then
 * releases the WAL segments it covers. A compaction drops old versions from the index a step of
 * keys per turn of the event loop, then the spill files that held only those.
 *
 * The two are scheduled together because they exclude each other: a snapshot reads the keys'
 * order once and relies on no key being removed while it writes (KeyIndex.liveReader), and only a
 * compaction removes keys. So no snapshot starts while a compaction runs, and a compaction asked
 * for during a snapshot waits for its end (deferredCompact).
 *
 * It is apart from the store (mvcc.ts) because none of it is on a transaction's path: the store
 * owns one Maintenance, tells it when writes become durable (afterDurable: a plain method call
 * and a few field reads, no allocation) and when it compacts (compact), and waits for it at
 * close. What a compaction changes at once (the compacted revision, the change log) stays the
 * store's.
 */
import * as path from 'node:path';
import type { KeyIndex } from './key-index';
import { SNAPSHOT_PACE_BYTES_PER_S, writeSnapshot } from './snapshot';
import type { HistorySpill } from './spill';
import type { Revision } from './types';
import type { Wal } from './wal';

/** What maintenance reads of the store's options (MvccOptions, which describes them). */
export interface MaintenanceOptions {
  dir?: string;
  fsync?: 'always' | 'none';
  snapshotMinBytes?: number;
  snapshotPaceBytesPerSecond?: number;
  logger?: (msg: string) => void;
}

/** What maintenance reads of its store (MvccStore). */
export interface MaintainedStore {
  /** Newest durable revision: a snapshot is taken at it. */
  readonly committedRevision: Revision;
}

export class Maintenance {
  /** The store's WAL, once open has recovered it; a store in memory has none and no snapshots. */
  wal: Wal | undefined;
  private snapshotting: Promise<void> | undefined;
  /** The snapshot being written goes at full speed (someone waits for it: snapshot(), close()). */
  private hurry = false;
  /** The index compaction in progress (compactIndex). */
  private compacting: Promise<void> | undefined;
  private deferredCompact: Revision = 0;
  private lastSnapshotBytes = 0;
  private written = 0;

  constructor(
    private readonly store: MaintainedStore,
    private readonly opts: MaintenanceOptions,
    private readonly index: KeyIndex,
    private readonly spill: HistorySpill | undefined,
  ) {}

  /** Snapshots this process wrote (StoreStats.snapshots). */
  get snapshots(): number {
    return this.written;
  }

  /** The index compaction in progress (the last of those queued), if any. */
  get compaction(): Promise<void> | undefined {
    return this.compacting;
  }

  /** The snapshot being written, if any, from now on at full speed (close() waits for it). */
  rushSnapshot(): Promise<void> | undefined {
    this.hurry = true;
    return this.snapshotting;
  }

  /**
   * Writes became durable: a snapshot starts if the WAL since the last one exceeds
   * max(snapshotMinBytes, the last snapshot's size). The store calls it only while open.
   */
  afterDurable(): void {
    const wal = this.wal;
    if (
      wal &&
      !this.snapshotting &&
      !this.compacting &&
      wal.bytesSinceRelease >= Math.max(this.opts.snapshotMinBytes ?? 128 << 20, this.lastSnapshotBytes)
    ) {
      this.startSnapshot();
    }
  }

  /** Take a snapshot now (normally scheduled by WAL growth, and paced); resolves when written, at full speed. */
  async snapshot(): Promise<void> {
    this.hurry = true;
    while (this.compacting) await this.compacting.catch(() => {});
    if (!this.snapshotting) this.startSnapshot();
    await this.snapshotting;
  }

  /**
   * The index and the spill files follow a compaction to `revision` (see compactIndex); resolves
   * when they have. `atOnce`: the index in one go (replay at open).
   */
  compact(revision: Revision, atOnce: boolean): Promise<void> | undefined {
    if (atOnce) {
      this.index.compact(revision);
      return this.spill?.release(revision);
    }
    if (this.snapshotting) this.deferredCompact = Math.max(this.deferredCompact, revision);
    else return this.compactIndex(revision);
    return undefined;
  }

  /**
   * Drop old versions from the index, a step of keys per turn of the event loop, then delete the
   * spill files that held only those (unlinked off the loop). Compactions run one after another,
   * and no snapshot starts while one runs (as none runs during a snapshot: deferredCompact).
   */
  private compactIndex(revision: Revision): Promise<void> {
    const before = this.compacting?.catch(() => {}) ?? Promise.resolve();
    const run = before.then(async () => {
      await this.index.compactInSteps(revision);
      await this.spill?.release(revision);
    });
    const tracked: Promise<void> = run.finally(() => {
      if (this.compacting === tracked) this.compacting = undefined;
    });
    this.compacting = tracked;
    return tracked;
  }

  private startSnapshot(): void {
    const dir = this.opts.dir;
    const wal = this.wal;
    if (dir === undefined || wal === undefined) return;
    const rev = this.store.committedRevision;
    // WAL bytes written up to now are covered by this snapshot; bytes written while it is being
    // written are not, and count toward the next one.
    const covered = wal.bytesSinceRelease;
    const run = async () => {
      const started = performance.now();
      const live = this.index.liveReader(rev);
      this.opts.logger?.(`store: snapshot at revision ${rev} begins (${covered} bytes of log since the last)`);
      const res = await writeSnapshot(
        path.join(dir, 'snap'),
        rev,
        // 1,024 keys a chunk: a cold key's value is inflated as it is written (~3.5 us a pod),
        // and 4,096 of them held the event loop ~15-25 ms per chunk (density, 2026-11-28).
        (after) => live(after, 1024),
        this.opts.fsync ?? 'always',
        () => (this.hurry ? 0 : (this.opts.snapshotPaceBytesPerSecond ?? SNAPSHOT_PACE_BYTES_PER_S)),
      );
      await wal.releaseThrough(rev);
      wal.bytesSinceRelease = Math.max(0, wal.bytesSinceRelease - covered);
      this.lastSnapshotBytes = res.bytes;
      this.written++;
      this.opts.logger?.(
        `store: snapshot at revision ${rev}: ${res.keys} keys, ${res.bytes} bytes in ${Math.round(performance.now() - started)} ms`,
      );
    };
    this.snapshotting = run()
      .catch((e) => {
        this.opts.logger?.(`store: snapshot at revision ${rev} failed: ${String(e)}`);
      })
      .finally(() => {
        this.snapshotting = undefined;
        this.hurry = false;
        if (this.deferredCompact > 0) {
          const rev = this.deferredCompact;
          this.deferredCompact = 0;
          this.compactIndex(rev).catch((e) =>
            this.opts.logger?.(`store: removing history spill files after compaction at ${rev}: ${String(e)}`),
          );
        }
      });
  }
}
