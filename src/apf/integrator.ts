/**
 * Time integral of a piecewise-constant value (a priority level's seat demand: seats in use plus
 * seats waiting), read and restarted once per borrowing period: average, standard deviation and
 * high watermark over the period (the reference's fairqueuing Integrator).
 */
import type { Clock } from './clock';

export interface IntegratorResults {
  /** Milliseconds covered. */
  durationMs: number;
  average: number;
  deviation: number;
  max: number;
  min: number;
}

export class Integrator {
  private value = 0;
  private since: number;
  private start: number;
  private sum = 0;
  private sumSq = 0;
  private max = 0;
  private min = 0;

  constructor(private readonly clock: Clock) {
    this.since = this.start = clock.now();
  }

  set(v: number): void {
    if (v === this.value) return;
    this.accumulate();
    this.value = v;
    if (v > this.max) this.max = v;
    if (v < this.min) this.min = v;
  }

  get current(): number {
    return this.value;
  }

  /** The figures since the last reset; starts a new period at the current value. */
  reset(): IntegratorResults {
    this.accumulate();
    const durationMs = this.since - this.start;
    const average = durationMs > 0 ? this.sum / durationMs : this.value;
    const variance = durationMs > 0 ? this.sumSq / durationMs - average * average : 0;
    const r: IntegratorResults = {
      durationMs,
      average,
      deviation: Math.sqrt(Math.max(0, variance)),
      max: this.max,
      min: this.min,
    };
    this.start = this.since;
    this.sum = 0;
    this.sumSq = 0;
    this.max = this.min = this.value;
    return r;
  }

  private accumulate(): void {
    const now = this.clock.now();
    const dt = now - this.since;
    if (dt > 0) {
      this.sum += this.value * dt;
      this.sumSq += this.value * this.value * dt;
    }
    this.since = now;
  }
}
