/**
 * Time for API Priority and Fairness, injected so that every algorithm here runs on a fake clock
 * in tests (no real clock in APF tests).
 */

/** Milliseconds on some monotonic scale (only differences matter). */
export interface Clock {
  now(): number;
  /** Run `fn` once after `ms`; returns a cancel function. */
  after(ms: number, fn: () => void): () => void;
  /** Run `fn` every `ms`; returns a cancel function. The process does not stay alive for it. */
  every(ms: number, fn: () => void): () => void;
}

export const realClock: Clock = {
  now: () => performance.now(),
  after(ms, fn) {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return () => clearTimeout(t);
  },
  every(ms, fn) {
    const t = setInterval(fn, ms);
    t.unref?.();
    return () => clearInterval(t);
  },
};

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
  period: number;
  cancelled: boolean;
}

/** A clock that moves only when told to; timers fire, in time order, inside `advance`. */
export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: Timer[] = [];

  constructor(start = 1_000_000) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  after(ms: number, fn: () => void): () => void {
    return this.add(ms, fn, 0);
  }

  every(ms: number, fn: () => void): () => void {
    if (ms <= 0) throw new Error('bug: a periodic timer needs a positive period');
    return this.add(ms, fn, ms);
  }

  /** Move time forward by `ms`, firing every timer that falls due on the way. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const next = this.timers.filter((x) => !x.cancelled && x.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!next) break;
      this.t = Math.max(this.t, next.at);
      if (next.period > 0) next.at += next.period;
      else next.cancelled = true;
      next.fn();
    }
    this.t = end;
    this.timers = this.timers.filter((x) => !x.cancelled);
  }

  /** Timers not yet fired or cancelled. */
  get pending(): number {
    return this.timers.filter((x) => !x.cancelled).length;
  }

  private add(ms: number, fn: () => void, period: number): () => void {
    const timer: Timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn, period, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }
}
