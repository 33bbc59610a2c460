/**
 * One timer for many deadlines: 5,000 nodes renewing their Leases every 10 s and every pod's
 * next kubelet step share one `setTimeout`, armed for the earliest deadline. Deadlines are kept in
 * a binary min-heap (push and pop O(log n)); a key has at most one deadline (scheduling it again
 * replaces the old one, which is skipped lazily when it comes up). Callbacks run in deadline
 * order; one that throws is reported and does not stop the others.
 *
 *   schedule('lease/a', t+10_000, renew)   heap: [a@10000]         timer armed for 10 s
 *   schedule('pod/x',   t+20,     step)    heap: [x@20, a@10000]   timer re-armed for 20 ms
 *   schedule('pod/x',   t+50,     step)    heap: [x@20(stale), x@50, a@10000] (x@20 skipped)
 */

export interface TimerQueueOptions {
  clock?: () => number;
  onError?: (key: string, e: unknown) => void;
}

interface Entry {
  key: string;
  due: number;
  seq: number;
  run: () => void;
}

export class TimerQueue {
  private heap: Entry[] = [];
  /** The live entry of each key (entries in the heap not here are stale). */
  private readonly live = new Map<string, Entry>();
  private seq = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private armedFor = Number.POSITIVE_INFINITY;
  private stopped = false;
  private readonly clock: () => number;

  constructor(private readonly opts: TimerQueueOptions = {}) {
    this.clock = opts.clock ?? Date.now;
  }

  get size(): number {
    return this.live.size;
  }

  has(key: string): boolean {
    return this.live.has(key);
  }

  /** When `key` is due next, or undefined. */
  dueOf(key: string): number | undefined {
    return this.live.get(key)?.due;
  }

  /** Run `run` at `due` (ms since the epoch); replaces the key's earlier deadline. */
  schedule(key: string, due: number, run: () => void): void {
    if (this.stopped) return;
    const e: Entry = { key, due, seq: this.seq++, run };
    this.live.set(key, e);
    // Replaced and cancelled entries are skipped lazily; past twice the live ones, rebuild.
    if (this.heap.length > 2 * this.live.size + 1024) {
      this.heap = [];
      for (const x of this.live.values()) if (x !== e) this.push(x);
    }
    this.push(e);
    if (due < this.armedFor) this.arm(due);
  }

  cancel(key: string): void {
    this.live.delete(key);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.heap = [];
    this.live.clear();
  }

  private arm(due: number): void {
    clearTimeout(this.timer);
    this.armedFor = due;
    this.timer = setTimeout(() => this.fire(), Math.max(0, due - this.clock()));
    this.timer.unref?.();
  }

  private fire(): void {
    this.armedFor = Number.POSITIVE_INFINITY;
    this.timer = undefined;
    const now = this.clock();
    for (;;) {
      const top = this.heap[0];
      if (!top || this.stopped) return;
      if (this.live.get(top.key) !== top) {
        this.pop();
        continue;
      }
      if (top.due > now) break;
      this.pop();
      this.live.delete(top.key);
      try {
        top.run();
      } catch (e) {
        this.opts.onError?.(top.key, e);
      }
    }
    const next = this.heap[0];
    if (next) this.arm(next.due);
  }

  private less(a: Entry, b: Entry): boolean {
    return a.due < b.due || (a.due === b.due && a.seq < b.seq);
  }

  private push(e: Entry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i] as Entry, h[p] as Entry)) break;
      [h[i], h[p]] = [h[p] as Entry, h[i] as Entry];
      i = p;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop() as Entry;
    if (h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.less(h[l] as Entry, h[m] as Entry)) m = l;
      if (r < h.length && this.less(h[r] as Entry, h[m] as Entry)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m] as Entry, h[i] as Entry];
      i = m;
    }
  }
}
