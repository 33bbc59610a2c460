/**
 * A watch cache's cold objects packed: each object not written again for `afterMs` is held
 * compressed (store/packed.ts) by the cache and, through KV.adoptPacked, by an embedded store
 * holding the very same bytes, so that the raw bytes (and, once every value in it is cold, their
 * slab) are freed. A read inflates the bytes again; an object written again is held raw until it
 * is cold again. So is an object clients read twice within `afterMs` (CachedObject.served): the
 * cache holds it raw again and keeps its packed form here (the store still holds it), which it
 * is held as again once `afterMs` has passed (another two reads make it hot again). At most
 * ValuePacker.warm.limit bytes (64 MiB for the process) are held raw again so at a time: a
 * client listing 150,000 pods twice would otherwise undo the packing of all of them. Measured
 * (bench/apf.ts, 2026-11-28): a flood of LISTs of 100 packed ConfigMaps spent 59% of the server's
 * thread inflating them.
 *
 * The cache reports each object it stores (written); the due ones are packed in slices of at
 * most SLICE_MS, the event loop served between slices, oldest first. The queue is three arrays
 * (key, revision, time): an object per entry would cost more than the packing saves on small
 * objects.
 */

import type { PackedValue } from '../store/packed';
import { type ValuePacker, valuePacker } from '../store/packed';
import type { KV, Revision } from '../store/types';
import type { CachedObject, ColdReads } from './events';

/** Most time one slice packs for before the event loop gets a turn (~10 us a value). */
const SLICE_MS = 4;

export class ColdValues implements ColdReads {
  private keys: string[] = [];
  private rvs: Revision[] = [];
  private ats: number[] = [];
  private head = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running = false;
  private stopped = false;
  /** Values this cache packed (tests and the debug heap line). */
  packed = 0;
  /** The packed form of each object held raw again by clients' reads, until it is cold again. */
  private warm = new Map<string, { rv: Revision; packed: PackedValue; length: number }>();

  constructor(
    private readonly afterMs: number,
    /** The resource's key prefix: its values share a dictionary. */
    private readonly prefix: string,
    private readonly objects: { get(key: string): CachedObject | undefined },
    private readonly kv: KV,
    private readonly clock: () => number,
    private readonly packer: ValuePacker = valuePacker,
  ) {}

  get windowMs(): number {
    return this.afterMs;
  }

  now(): number {
    return this.clock();
  }

  /** ColdReads.reheated: queued to be packed again, with the packed form it had. */
  reheated(key: string, rv: Revision, packed: PackedValue, length: number): boolean {
    // A reader may hold a version written over since (a list made before the write).
    if (this.stopped || this.objects.get(key)?.rv !== rv) return false;
    const budget = this.packer.warm;
    if (budget.bytes + length > budget.limit) return false;
    this.forget(this.warm.get(key));
    budget.bytes += length;
    this.packer.stats.reheated++;
    this.warm.set(key, { rv, packed, length });
    this.written(key, rv, this.clock());
    return true;
  }

  /** A held-raw-again object's bytes off the budget. */
  private forget(w: { length: number } | undefined): void {
    if (w !== undefined) this.packer.warm.bytes -= w.length;
  }

  /** The cache stored `key`'s version `rv` at `at`. */
  written(key: string, rv: Revision, at: number): void {
    if (this.stopped) return;
    this.keys.push(key);
    this.rvs.push(rv);
    this.ats.push(at);
    this.arm();
  }

  /** Forget every queued object (the cache loads its state again). */
  clear(): void {
    this.keys = [];
    this.rvs = [];
    this.ats = [];
    this.head = 0;
    for (const w of this.warm.values()) this.forget(w);
    this.warm.clear();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.clear();
  }

  private arm(): void {
    if (this.timer !== undefined || this.running || this.stopped || this.head >= this.keys.length) return;
    const wait = Math.max(0, (this.ats[this.head] as number) + this.afterMs - this.clock());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.run();
    }, wait + 10);
    this.timer.unref?.();
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      let sliceStart = performance.now();
      while (!this.stopped && this.head < this.keys.length) {
        if ((this.ats[this.head] as number) + this.afterMs > this.clock()) break;
        const i = this.head++;
        this.packOne(this.keys[i] as string, this.rvs[i] as Revision);
        if (performance.now() - sliceStart >= SLICE_MS) {
          this.trim();
          await new Promise<void>((resolve) => setImmediate(resolve));
          sliceStart = performance.now();
        }
      }
      this.trim();
    } finally {
      this.running = false;
      this.arm();
    }
  }

  private packOne(key: string, rv: Revision): void {
    // Queued in order of time: the first entry of a key after it was made hot again is the one
    // its reheat queued (or an older version's, which drops the packed form: packed anew).
    const warm = this.warm.get(key);
    if (warm !== undefined) {
      this.warm.delete(key);
      this.forget(warm);
    }
    const c = this.objects.get(key);
    // Written again (a newer entry comes later), deleted, or packed already.
    if (c === undefined || c.rv !== rv) return;
    const raw = c.rawIfHeld;
    if (raw === undefined) return;
    if (warm !== undefined && warm.rv === rv) {
      // The store holds this packed form already.
      c.pack(warm.packed);
      return;
    }
    const p = this.packer.pack(this.prefix, raw);
    if (p === undefined) return;
    c.pack(p);
    this.packed++;
    this.kv.adoptPacked?.(key, rv, raw, p);
  }

  /** Drop the consumed part of the queue once it is most of it. */
  private trim(): void {
    if (this.head < 4096 || this.head * 2 < this.keys.length) return;
    this.keys = this.keys.slice(this.head);
    this.rvs = this.rvs.slice(this.head);
    this.ats = this.ats.slice(this.head);
    this.head = 0;
  }
}
