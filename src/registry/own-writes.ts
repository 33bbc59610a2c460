/**
 * The server's own writes (controllers, the scheduler, the simulated kubelets, their events) in
 * a priority level of their own: at most `seats` of them in flight, the rest waiting in order.
 *
 * They run on the event loop that serves the clients. Unbounded, a burst of them (a ReplicaSet
 * controller creating 500 pods, a thousand kubelet steps due at once, five events per pod) put
 * hundreds of writes' continuations behind each group commit, and a client's request waited for
 * all of them: POST of a Deployment had a median of 80-120 ms in the density scenario. Bounded,
 * a client's request waits for at most `seats` writes' worth of work, as the reference's
 * controller-manager traffic is held to its own APF priority level, while the group commit still
 * gets enough concurrent writes to fill each fsync.
 */

export class OwnWriteSeats {
  private inUse = 0;
  private readonly waiting: (() => void)[] = [];
  private head = 0;
  /** Writes that had to wait for a seat (the dashboard's and /metrics' figure). */
  waited = 0;

  constructor(readonly seats: number) {}

  /** Runs `f` in a seat (at once when one is free). */
  async run<T>(f: () => Promise<T>): Promise<T> {
    if (this.inUse >= this.seats) {
      this.waited++;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.inUse++;
    try {
      return await f();
    } finally {
      this.release();
    }
  }

  /** Writes waiting for a seat now. */
  get queued(): number {
    return this.waiting.length - this.head;
  }

  get busy(): number {
    return this.inUse;
  }

  private release(): void {
    if (this.head < this.waiting.length) {
      // The seat passes to the next waiter (inUse unchanged).
      const next = this.waiting[this.head++] as () => void;
      if (this.head > 1024 && this.head * 2 > this.waiting.length) {
        this.waiting.splice(0, this.head);
        this.head = 0;
      }
      next();
    } else this.inUse--;
  }
}
