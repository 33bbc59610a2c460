/**
 * What the flow control counts per flow schema and priority level pair, in place on the request
 * path (no label hashing): dispatches, rejections by reason, queued and executing requests and
 * seats, the wait and execution time histograms and the estimated seats. ./metrics.ts writes them as Prometheus text.
 */

/** The reference's buckets for queue wait and execution times. */
const BUCKETS = [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30];

/** The reference's buckets for the seats a request is estimated to take. */
const SEAT_BUCKETS = [1, 2, 4, 10];

class Histogram {
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(private readonly buckets: readonly number[] = BUCKETS) {
    this.counts = new Array<number>(buckets.length).fill(0);
  }

  observe(v: number): void {
    const b = this.buckets;
    let i = 0;
    while (i < b.length && v > (b[i] as number)) i++;
    if (i < b.length) this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += v;
    this.count++;
  }

  lines(out: string[], name: string, labels: string): void {
    let cum = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      cum += this.counts[i] as number;
      out.push(`${name}_bucket{${labels},le="${this.buckets[i]}"} ${cum}`);
    }
    out.push(
      `${name}_bucket{${labels},le="+Inf"} ${this.count}`,
      `${name}_sum{${labels}} ${this.sum}`,
      `${name}_count{${labels}} ${this.count}`,
    );
  }
}

export class FlowStats {
  dispatched = 0;
  inqueue = 0;
  executing = 0;
  seats = 0;
  readonly rejected = new Map<string, number>();
  readonly waitExecuted = new Histogram();
  readonly waitRejected = new Histogram();
  readonly execRegular = new Histogram();
  readonly execWatch = new Histogram();
  /** The seats each request was estimated to take (the most of its initial and final seats). */
  readonly estimatedSeats = new Histogram(SEAT_BUCKETS);

  constructor(
    readonly flowSchema: string,
    readonly priorityLevel: string,
  ) {}

  dispatch(seats: number, waitedSeconds: number, exempt: boolean): void {
    this.dispatched++;
    this.executing++;
    this.seats += seats;
    if (!exempt) this.waitExecuted.observe(waitedSeconds);
  }

  done(seats: number, seconds: number, watch: boolean): void {
    this.executing--;
    this.seats -= seats;
    (watch ? this.execWatch : this.execRegular).observe(seconds);
  }

  reject(reason: string, waitedSeconds: number): void {
    this.rejected.set(reason, (this.rejected.get(reason) ?? 0) + 1);
    this.waitRejected.observe(waitedSeconds);
  }
}
