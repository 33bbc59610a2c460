/**
 * Fair queuing for server requests: one QueueSet per Limited priority level (the reference's
 * fairqueuing/queueset, written from its design, KEP 1040).
 *
 * A request arrives with a flow hash and a work estimate. Shuffle sharding deals its flow a hand
 * of queues; it joins the one with the least work (seats waiting plus seats in use). Requests
 * leave the queues in the order of their virtual finish time: each queue has a virtual dispatch
 * time `nextDispatchR`, and the head request of queue Q would finish at
 * `Q.nextDispatchR + work(head)`. Virtual time R advances, while requests are active, at
 *
 *     dR/dt = min(seats requested, concurrency limit) / active queues      (seat-ms per ms)
 *
 * so that every active queue is owed the same share of the level's seats: a flow that sends
 * twice as much waits twice as long, others are not disturbed. A request's work is
 * `initialSeats × 3 ms + finalSeats × additionalLatency` (the reference's estimated service
 * time); when it finishes, its queue is credited or charged the difference to what it really
 * took. A queue that was idle restarts at the current R (no credit for idleness).
 *
 * A head request that needs more seats than are free blocks the dispatch (no overtaking: wide
 * requests would starve); one wider than the whole limit runs alone. Queue length is bounded
 * (`queueLengthLimit`: full → rejected); waiting is bounded by the caller's wait limit
 * (→ rejected `time-out`); a level with no queues (limitResponse Reject) refuses at once when
 * its seats are taken (`concurrency-limit`).
 *
 *   start() ─ dispatched now ───────────────────────────────▶ executing ─ finish() ─▶ seats freed
 *      │                                                          ▲        (finalSeats held for
 *      └─ queued ─ dispatchAsMuchAsPossible() (in R order) ───────┘         additionalLatency)
 *             └─ full / timed out / cancelled ─▶ rejected
 */
import type { Clock } from './clock';
import { Dealer, type FlowHash } from './dealer';

/** The reference's estimated service time of a request (queueset.go), in ms. */
export const ESTIMATED_SERVICE_MS = 3;

export interface WorkEstimate {
  initialSeats: number;
  /** Seats held after the handler returned (watch notifications), for additionalLatencyMs. */
  finalSeats: number;
  additionalLatencyMs: number;
}

export const ONE_SEAT: WorkEstimate = Object.freeze({ initialSeats: 1, finalSeats: 0, additionalLatencyMs: 0 });

export type RejectReason = 'queue-full' | 'concurrency-limit' | 'time-out' | 'cancelled';

export interface QueuingConfig {
  /** 0: no queuing, the level refuses what it cannot run at once (limitResponse Reject). */
  queues: number;
  handSize: number;
  queueLengthLimit: number;
}

export class Queue {
  readonly waiting: QueuedRequest<unknown>[] = [];
  /** Virtual time at which this queue's next request may start (seat-ms). */
  nextDispatchR = 0;
  seatsInUse = 0;
  executing = 0;
  waitingSeats = 0;

  constructor(readonly index: number) {}

  get active(): boolean {
    return this.waiting.length > 0 || this.executing > 0;
  }
}

export class QueuedRequest<T> {
  state: 'waiting' | 'executing' | 'finishing' | 'done' | 'rejected' = 'waiting';
  reason: RejectReason | undefined;
  queue: Queue | undefined;
  /** Virtual time when it arrived. */
  arrivalR = 0;
  startedAt = 0;
  /** Seats held while it executes. */
  readonly seats: number;
  /** Its estimated work in seat-ms. */
  readonly work: number;
  /** Settles when a waiting request is dispatched or rejected. */
  decided: Promise<void> | undefined;
  private settle: (() => void) | undefined;
  private cancelTimer: (() => void) | undefined;

  constructor(
    readonly estimate: WorkEstimate,
    readonly arrivedAt: number,
    /** What the caller wants kept with it (classification, for dumps and metrics). */
    readonly tag: T,
  ) {
    this.seats = Math.max(estimate.initialSeats, estimate.finalSeats);
    this.work = estimate.initialSeats * ESTIMATED_SERVICE_MS + estimate.finalSeats * estimate.additionalLatencyMs;
  }

  /** @internal the queue set's side of waiting. */
  park(waitMs: number, clock: Clock, onTimeout: () => void): void {
    this.decided = new Promise<void>((resolve) => {
      this.settle = resolve;
    });
    this.cancelTimer = clock.after(waitMs, onTimeout);
  }

  /** @internal */
  decide(state: 'executing' | 'rejected', reason?: RejectReason): void {
    this.state = state;
    this.reason = reason;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.settle?.();
    this.settle = undefined;
  }
}

export interface QueueSetTotals {
  waiting: number;
  waitingSeats: number;
  executing: number;
  seatsInUse: number;
}

export class QueueSet {
  private cfg: QueuingConfig;
  private dealer: Dealer | undefined;
  private queues: Queue[] = [];
  private limit: number;
  /** Virtual time (seat-ms) and the real time it was last brought up to. */
  private r = 0;
  private lastRealTime: number;
  private activeQueues = 0;
  private readonly tot: QueueSetTotals = { waiting: 0, waitingSeats: 0, executing: 0, seatsInUse: 0 };
  /**
   * Hands by flow hash, for this dealer: a flow's hash object is kept per flow schema and
   * distinguisher (FlowControl), so a flow's requests find their hand without dealing it again
   * (dealing and hashing were ~15% of a global-default request's APF cost, bench/apf.ts part 1).
   */
  private hands = new WeakMap<FlowHash, number[]>();
  /** The queue of the last arrival (dispatchOne's shortcut when it is the only request waiting). */
  private only: Queue | undefined;

  constructor(
    cfg: QueuingConfig,
    concurrencyLimit: number,
    private readonly clock: Clock,
    /** Told the seat demand (seats in use + seats waiting) whenever it changes. */
    private readonly onDemand: (seats: number) => void = () => {},
  ) {
    this.cfg = cfg;
    this.limit = concurrencyLimit;
    this.lastRealTime = clock.now();
    this.build(cfg);
  }

  get concurrencyLimit(): number {
    return this.limit;
  }

  get config(): QueuingConfig {
    return this.cfg;
  }

  get currentR(): number {
    return this.r;
  }

  get totals(): Readonly<QueueSetTotals> {
    return this.tot;
  }

  get queueList(): readonly Queue[] {
    return this.queues;
  }

  /**
   * A request arrives. It comes back executing (run it, then `finish`), rejected, or waiting
   * (`await r.decided`, then look at `r.state`). `waitLimitMs` bounds its time in a queue.
   */
  start<T>(hash: FlowHash, estimate: WorkEstimate, tag: T, waitLimitMs: number, signal?: AbortSignal): QueuedRequest<T> {
    this.syncTime();
    const r = new QueuedRequest(estimate, this.lastRealTime, tag);
    if (!this.dealer) {
      if (!this.canAccommodate(r.seats)) r.decide('rejected', 'concurrency-limit');
      else this.dispatch(r, undefined);
      return r;
    }
    const q = this.chooseQueue(hash);
    if (q.waiting.length >= this.cfg.queueLengthLimit) {
      r.decide('rejected', 'queue-full');
      return r;
    }
    if (!q.active) {
      q.nextDispatchR = this.r;
      this.activeQueues++;
    }
    r.queue = q;
    r.arrivalR = this.r;
    q.waiting.push(r as QueuedRequest<unknown>);
    this.only = q;
    q.waitingSeats += r.seats;
    this.tot.waiting++;
    this.tot.waitingSeats += r.seats;
    this.dispatchAsMuchAsPossible();
    if (r.state === 'waiting') {
      r.park(waitLimitMs, this.clock, () => this.withdraw(r, 'time-out'));
      if (signal) {
        if (signal.aborted) this.withdraw(r, 'cancelled');
        else signal.addEventListener('abort', () => this.withdraw(r, 'cancelled'), { once: true });
      }
    }
    this.demandChanged();
    return r;
  }

  /** The handler returned: seats are freed now, or after the request's additional latency. */
  finish(r: QueuedRequest<unknown>): void {
    if (r.state !== 'executing') return;
    this.syncTime();
    const now = this.lastRealTime;
    this.tot.executing--;
    const q = r.queue;
    if (q) {
      q.executing--;
      // (A queue dropped by reconfigure() is no longer counted.)
      if (!q.active && this.queues[q.index] === q) this.activeQueues--;
      // Charge or credit the queue what the request really took against the estimate.
      q.nextDispatchR -= r.estimate.initialSeats * (ESTIMATED_SERVICE_MS - (now - r.startedAt));
      this.boundNextDispatch(q);
    }
    if (r.estimate.finalSeats > 0 && r.estimate.additionalLatencyMs > 0) {
      r.state = 'finishing';
      this.clock.after(r.estimate.additionalLatencyMs, () => this.release(r));
    } else {
      this.release(r);
    }
  }

  /** Borrowing moved this level's seats. */
  setConcurrencyLimit(limit: number): void {
    if (limit === this.limit) return;
    this.syncTime();
    this.limit = limit;
    this.dispatchAsMuchAsPossible();
    this.demandChanged();
  }

  /**
   * The priority level's queuing changed. Waiting requests move to the queue of the same index
   * modulo the new count, in order; executing ones finish on their old queue.
   */
  reconfigure(cfg: QueuingConfig): void {
    const same = cfg.queues === this.cfg.queues && cfg.handSize === this.cfg.handSize;
    this.cfg = cfg;
    if (same) return;
    this.syncTime();
    const old = this.queues;
    this.only = undefined;
    this.build(cfg);
    this.activeQueues = 0;
    for (const oq of old) {
      for (const r of oq.waiting) {
        if (!this.dealer) {
          // No queues any more: what waited is refused as a Reject level would.
          this.tot.waiting--;
          this.tot.waitingSeats -= r.seats;
          r.decide('rejected', 'concurrency-limit');
          continue;
        }
        const nq = this.queues[oq.index % this.queues.length] as Queue;
        if (!nq.active) nq.nextDispatchR = this.r;
        r.queue = nq;
        nq.waiting.push(r);
        nq.waitingSeats += r.seats;
      }
    }
    for (const q of this.queues) if (q.active) this.activeQueues++;
    this.dispatchAsMuchAsPossible();
    this.demandChanged();
  }

  private build(cfg: QueuingConfig): void {
    this.dealer = cfg.queues > 0 ? new Dealer(cfg.queues, cfg.handSize) : undefined;
    this.hands = new WeakMap();
    this.queues = Array.from({ length: cfg.queues }, (_, i) => new Queue(i));
  }

  private syncTime(): void {
    const now = this.clock.now();
    const dt = now - this.lastRealTime;
    this.lastRealTime = now;
    if (dt <= 0 || this.activeQueues === 0) return;
    const requested = this.tot.seatsInUse + this.tot.waitingSeats;
    this.r += (dt * Math.min(requested, this.limit)) / this.activeQueues;
  }

  /** The queue of the flow's hand with the least work: seats waiting plus seats in use. */
  private chooseQueue(hash: FlowHash): Queue {
    let hand = this.hands.get(hash);
    if (hand === undefined) {
      hand = (this.dealer as Dealer).deal(hash);
      this.hands.set(hash, hand);
    }
    let best: Queue | undefined;
    let bestSeats = Number.POSITIVE_INFINITY;
    for (const i of hand) {
      const q = this.queues[i] as Queue;
      const seats = q.waitingSeats + q.seatsInUse;
      if (seats < bestSeats) {
        best = q;
        bestSeats = seats;
      }
    }
    return best as Queue;
  }

  private canAccommodate(seats: number): boolean {
    // Wider than the whole limit: runs only alone.
    if (seats > this.limit) return this.tot.executing === 0 && this.tot.seatsInUse === 0;
    return this.tot.seatsInUse + seats <= this.limit;
  }

  private dispatchAsMuchAsPossible(): void {
    while (this.tot.waiting > 0 && this.tot.seatsInUse < this.limit && this.dispatchOne()) {}
    // A request wider than the limit when nothing runs.
    if (this.tot.waiting > 0 && this.tot.seatsInUse === 0 && this.limit === 0) this.dispatchOne();
  }

  /** Dispatch the waiting request with the smallest virtual finish time, if its seats are free. */
  private dispatchOne(): boolean {
    // The common case, a request arriving at an idle set: it is the only one waiting.
    const only = this.only;
    let best = only && this.tot.waiting === 1 && only.waiting.length === 1 ? only : undefined;
    let bestFinish = Number.POSITIVE_INFINITY;
    if (!best)
      for (const q of this.queues) {
        const head = q.waiting[0];
        if (!head) continue;
        const finish = q.nextDispatchR + head.work;
        if (finish < bestFinish) {
          best = q;
          bestFinish = finish;
        }
      }
    this.only = undefined;
    if (!best) return false;
    const r = best.waiting[0] as QueuedRequest<unknown>;
    if (!this.canAccommodate(r.seats)) return false;
    best.waiting.shift();
    best.waitingSeats -= r.seats;
    this.tot.waiting--;
    this.tot.waitingSeats -= r.seats;
    best.nextDispatchR += r.work;
    this.dispatch(r, best);
    this.boundNextDispatch(best);
    return true;
  }

  private dispatch(r: QueuedRequest<unknown>, q: Queue | undefined): void {
    // Every entry point brought the virtual time up to now first.
    r.startedAt = this.lastRealTime;
    this.tot.executing++;
    this.tot.seatsInUse += r.seats;
    if (q) {
      q.executing++;
      q.seatsInUse += r.seats;
    }
    r.decide('executing');
  }

  private release(r: QueuedRequest<unknown>): void {
    this.syncTime();
    r.state = 'done';
    this.tot.seatsInUse -= r.seats;
    const q = r.queue;
    if (q) q.seatsInUse -= r.seats;
    this.dispatchAsMuchAsPossible();
    this.demandChanged();
  }

  /** A waiting request leaves its queue unserved. */
  private withdraw(r: QueuedRequest<unknown>, reason: RejectReason): void {
    if (r.state !== 'waiting') return;
    this.syncTime();
    const q = r.queue as Queue;
    const i = q.waiting.indexOf(r);
    if (i >= 0) q.waiting.splice(i, 1);
    q.waitingSeats -= r.seats;
    this.tot.waiting--;
    this.tot.waitingSeats -= r.seats;
    if (!q.active) this.activeQueues--;
    r.decide('rejected', reason);
    if (i === 0) this.boundNextDispatch(q);
    this.dispatchAsMuchAsPossible();
    this.demandChanged();
  }

  /** A queue's next dispatch is never before its head request arrived (no saved-up credit). */
  private boundNextDispatch(q: Queue): void {
    const head = q.waiting[0];
    if (head && q.nextDispatchR < head.arrivalR) q.nextDispatchR = head.arrivalR;
  }

  private demandChanged(): void {
    this.onDemand(this.tot.seatsInUse + this.tot.waitingSeats);
  }
}
