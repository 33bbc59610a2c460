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
 *
 * Background writes (events, best effort) wait in a lane of their own: a freed seat goes to the
 * other writes first, and to a background write only every BACKGROUND_TURN-th time while both
 * wait. In one queue, the events of a burst of pods starting (three per pod) sat in front of
 * the status writes that start the next pods: 39,000 of them waited at the end of a 20,000-pod
 * run, and create-to-Ready took 12 s at the median.
 */

/** While both lanes wait, every this many freed seats one goes to a background write. */
const BACKGROUND_TURN = 4;

/** A FIFO of waiters that drops its consumed head in chunks. */
class Lane {
  private readonly waiting: (() => void)[] = [];
  private head = 0;

  get length(): number {
    return this.waiting.length - this.head;
  }

  push(f: () => void): void {
    this.waiting.push(f);
  }

  shift(): (() => void) | undefined {
    if (this.head >= this.waiting.length) return undefined;
    const next = this.waiting[this.head++] as () => void;
    if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
    return next;
  }
}

export class OwnWriteSeats {
  private inUse = 0;
  private readonly first = new Lane();
  private readonly background = new Lane();
  private handoffs = 0;
  /** Writes that had to wait for a seat (the dashboard's and /metrics' figure). */
  waited = 0;

  constructor(readonly seats: number) {}

  /** Runs `f` in a seat (at once when one is free); `background`: in the background lane. */
  async run<T>(f: () => Promise<T>, background = false): Promise<T> {
    if (this.inUse >= this.seats) {
      this.waited++;
      const lane = background ? this.background : this.first;
      await new Promise<void>((resolve) => lane.push(resolve));
    } else this.inUse++;
    try {
      return await f();
    } finally {
      this.release();
    }
  }

  /** Writes waiting for a seat now. */
  get queued(): number {
    return this.first.length + this.background.length;
  }

  get busy(): number {
    return this.inUse;
  }

  private release(): void {
    // The seat passes to the next waiter (inUse unchanged).
    const turn = ++this.handoffs % BACKGROUND_TURN === 0;
    const next = (turn && this.background.shift()) || this.first.shift() || this.background.shift();
    if (next) next();
    else this.inUse--;
  }
}
