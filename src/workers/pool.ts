/**
 * A small generic worker pool (the CEL pool's and later the codec pool's): a fixed number of
 * Bun workers, pre-started, each running one task at a time from a FIFO queue.
 *
 *   const pool = new WorkerPool<Req, Res>({ script, size: 1, deadlineMs: 1000 });
 *   const res = await pool.run(req);        // rejects with DeadlineError past the deadline
 *
 * Every task has a deadline from the moment a worker takes it: a worker still busy at the
 * deadline is terminated (a synchronous runaway cannot be interrupted any other way), its task
 * rejected with DeadlineError, and a fresh worker takes its place; the other tasks, queued or
 * running elsewhere, are unaffected. A worker that dies (an uncaught error, an exit) is replaced
 * the same way and its task rejected.
 *
 * Worker protocol: the pool posts `{ id, req }`; the worker answers `{ id, ok: true, res }` or
 * `{ id, ok: false, error }`, and posts `{ ready: true }` once loaded.
 */

export class DeadlineError extends Error {
  constructor(readonly deadlineMs: number) {
    super(`evaluation exceeded its deadline of ${deadlineMs} ms`);
    this.name = 'DeadlineError';
  }
}

export class WorkerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkerError';
  }
}

export interface PoolOptions {
  /** The worker's module (a path or file URL). */
  script: string | URL;
  size: number;
  /** Default deadline per task. */
  deadlineMs: number;
}

interface Task<Req, Res> {
  id: number;
  req: Req;
  /** Buffers moved to the worker with the request (not copied). */
  transfer: Bun.Transferable[] | undefined;
  deadlineMs: number;
  resolve: (r: Res) => void;
  reject: (e: Error) => void;
}

interface Slot<Req, Res> {
  worker: Worker;
  task?: Task<Req, Res>;
  timer?: ReturnType<typeof setTimeout>;
  ready: boolean;
}

type Reply<Res> = { ready: true } | { id: number; ok: true; res: Res } | { id: number; ok: false; error: string };

export class WorkerPool<Req, Res> {
  private readonly slots: Slot<Req, Res>[] = [];
  private readonly queue: Task<Req, Res>[] = [];
  private nextId = 1;
  private closed = false;
  /** Workers replaced after a deadline or a death (for tests and /metrics). */
  replaced = 0;
  /** Tasks answered by a worker, with a result or an error (for /metrics). */
  completed = 0;

  constructor(private readonly opts: PoolOptions) {
    if (opts.size < 1) throw new Error('a worker pool needs at least one worker');
    for (let i = 0; i < opts.size; i++) this.slots.push(this.spawn());
  }

  get size(): number {
    return this.slots.length;
  }

  /** Tasks waiting for a worker. */
  get queued(): number {
    return this.queue.length;
  }

  /** Resolves once every worker has loaded its module. */
  async ready(): Promise<void> {
    while (!this.closed && this.slots.some((s) => !s.ready)) await Bun.sleep(5);
  }

  /** Runs `req` in a worker; `transfer` lists buffers of `req` to move rather than copy (they are detached here). */
  run(req: Req, deadlineMs = this.opts.deadlineMs, transfer?: Bun.Transferable[]): Promise<Res> {
    if (this.closed) return Promise.reject(new WorkerError('worker pool closed'));
    return new Promise<Res>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, req, transfer, deadlineMs, resolve, reject });
      this.dispatch();
    });
  }

  close(): void {
    this.closed = true;
    for (const s of this.slots) {
      if (s.timer) clearTimeout(s.timer);
      s.task?.reject(new WorkerError('worker pool closed'));
      s.worker.terminate();
    }
    for (const t of this.queue.splice(0)) t.reject(new WorkerError('worker pool closed'));
  }

  private spawn(): Slot<Req, Res> {
    const worker = new Worker(this.opts.script);
    const slot: Slot<Req, Res> = { worker, ready: false };
    worker.onmessage = (ev: MessageEvent<Reply<Res>>) => this.onReply(slot, ev.data);
    worker.onerror = (ev: ErrorEvent) => this.replace(slot, new WorkerError(`worker failed: ${ev.message}`));
    worker.addEventListener('close', () => {
      if (!this.closed && this.slots.includes(slot)) this.replace(slot, new WorkerError('worker exited'));
    });
    // A pool's workers do not keep the process alive.
    worker.unref();
    return slot;
  }

  private onReply(slot: Slot<Req, Res>, m: Reply<Res>): void {
    if ('ready' in m) {
      slot.ready = true;
      this.dispatch();
      return;
    }
    const t = slot.task;
    if (!t || t.id !== m.id) return;
    if (slot.timer) clearTimeout(slot.timer);
    slot.task = undefined;
    slot.timer = undefined;
    this.completed++;
    if (m.ok) t.resolve(m.res);
    else t.reject(new WorkerError(m.error));
    this.dispatch();
  }

  /** Terminates a slot's worker (past its deadline, or dead) and puts a fresh one in its place. */
  private replace(slot: Slot<Req, Res>, why: Error): void {
    const i = this.slots.indexOf(slot);
    if (i < 0) return;
    if (slot.timer) clearTimeout(slot.timer);
    const t = slot.task;
    slot.task = undefined;
    this.slots.splice(i, 1);
    slot.worker.terminate();
    this.replaced++;
    t?.reject(why);
    if (this.closed) return;
    this.slots.push(this.spawn());
    this.dispatch();
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (slot.task || !slot.ready) continue;
      const t = this.queue.shift() as Task<Req, Res>;
      slot.task = t;
      slot.timer = setTimeout(() => {
        if (slot.task === t) this.replace(slot, new DeadlineError(t.deadlineMs));
      }, t.deadlineMs);
      if (t.transfer) slot.worker.postMessage({ id: t.id, req: t.req }, t.transfer);
      else slot.worker.postMessage({ id: t.id, req: t.req });
    }
  }
}

/**
 * The worker side: answers each `{ id, req }` with `handle(req)` (or its error), and says it is
 * ready. Call once at the top of a worker module. `transferOf` names buffers of an answer to move
 * to the pool's thread rather than copy.
 */
export function serveWorker<Req, Res>(handle: (req: Req) => Res | Promise<Res>, transferOf?: (res: Res) => Bun.Transferable[]): void {
  const scope = globalThis as unknown as {
    onmessage: (ev: MessageEvent) => void;
    postMessage: (m: unknown, transfer?: Bun.Transferable[]) => void;
  };
  scope.onmessage = async (ev: MessageEvent<{ id: number; req: Req }>) => {
    const { id, req } = ev.data;
    try {
      const res = await handle(req);
      scope.postMessage({ id, ok: true, res }, transferOf?.(res));
    } catch (e) {
      scope.postMessage({ id, ok: false, error: e instanceof Error ? e.message : String(e) });
    }
  };
  scope.postMessage({ ready: true });
}
