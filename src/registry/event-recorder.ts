/**
 * Events as the reference's controllers record them (client-go's tools/record): a core/v1 Event
 * per (involved object, type, reason, message), named `<object>.<hex nanoseconds>`, in the
 * object's namespace (`default` for cluster-scoped objects). The same event again within the
 * correlation window is not a new object: its `count` and `lastTimestamp` are patched, as the
 * reference's EventCorrelator aggregates repeats. Writes go through the registry; a failure is
 * logged and dropped (events are best effort, as the reference's broadcaster).
 *
 * At most an EventQueue's limit of events wait to be written (client-go's broadcaster queues
 * 1,000, maxQueuedEvents, and drops the rest with "too many queued events"); the writes are
 * background writes (own-writes.ts), behind the server's other own writes. Unbounded, a
 * 150,000-pod run queued hundreds of thousands of events, each holding its pod, and the server
 * grew by gigabytes. Recorders may share one queue (the simulated kubelets, one per node).
 */
import type { Obj } from '../api/meta';
import { StatusError } from '../api/status';
import type { Resources } from './api-registry';

export type EventType = 'Normal' | 'Warning';

export interface EventSource {
  /** The reporting controller, e.g. `default-scheduler`, `kubelet`, `node-controller`. */
  component: string;
  /** The host (kubelets report their node). */
  host?: string;
}

/** Repeats are aggregated only while their first record is this recent (the reference's 10 minutes). */
const CORRELATION_MS = 10 * 60_000;
/** Distinct events remembered for aggregation (the reference's LRU of 4096). */
const MAX_REMEMBERED = 4096;

/** The reference's maxQueuedEvents: events a broadcaster holds before it drops new ones. */
export const MAX_QUEUED_EVENTS = 1000;

/** Events waiting to be written, shared by the recorders given it, and those dropped. */
export class EventQueue {
  pending = 0;
  dropped = 0;

  constructor(readonly limit = MAX_QUEUED_EVENTS) {}
}

interface Seen {
  name: string;
  namespace: string;
  count: number;
  first: number;
}

/**
 * The correlation key of an event as a number: 53 bits from two 32-bit hashes of its text. The
 * text (source, object, reason, message: ~200 characters) was kept as the map's key, one per
 * event remembered: with a recorder per simulated kubelet, 450,000 of them at 150,000 pods, about
 * 100 MB. Two keys would have to agree in all 53 bits to be taken for one (for 4,096 remembered,
 * a chance of about 1 in 10^9 per new event); the reference's LRU keys by the text itself.
 */
function keyHash(text: string): number {
  return Bun.hash.murmur32v3(text, 0) * 2 ** 21 + (Bun.hash.murmur32v3(text, 1) >>> 11);
}

export class EventRecorder {
  private readonly seen = new Map<number, Seen>();
  private seq = 0;

  constructor(
    private readonly resources: Pick<Resources, 'lookup'>,
    private readonly source: EventSource,
    private readonly log: (msg: string) => void = () => {},
    private readonly clock: () => number = Date.now,
    private readonly queue = new EventQueue(),
  ) {}

  /** Record an event about `obj` (fire and forget; the returned promise never rejects). */
  event(obj: Obj, type: EventType, reason: string, message: string, fieldPath?: string): Promise<void> {
    const q = this.queue;
    if (q.pending >= q.limit) {
      // As the reference logs each one; here the first and then every thousandth, with the count.
      if (q.dropped++ % 1000 === 0) {
        this.log(
          `unable to record event: too many queued events (${q.limit}), dropped event ${reason} on ${obj.kind}/${obj.metadata.name} (${q.dropped} dropped so far)`,
        );
      }
      return Promise.resolve();
    }
    q.pending++;
    return this.write(obj, type, reason, message, fieldPath)
      .catch((e) => this.log(`event ${reason} on ${obj.kind}/${obj.metadata.name}: ${e instanceof Error ? e.message : String(e)}`))
      .finally(() => {
        q.pending--;
      });
  }

  private async write(obj: Obj, type: EventType, reason: string, message: string, fieldPath?: string): Promise<void> {
    const events = this.resources.lookup('', 'v1', 'events');
    if (!events) return;
    const m = obj.metadata;
    const namespace = m.namespace || 'default';
    const now = this.clock();
    const stamp = new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const key = keyHash(
      [
        this.source.component,
        this.source.host ?? '',
        obj.kind,
        m.namespace ?? '',
        m.name,
        m.uid ?? '',
        fieldPath ?? '',
        type,
        reason,
        message,
      ].join('\u0000'),
    );
    const w = {
      dryRun: false,
      fieldValidation: 'Ignore' as const,
      warnings: [] as string[],
      fieldManager: this.source.component,
      background: true,
    };
    const prior = this.seen.get(key);
    if (prior && now - prior.first < CORRELATION_MS) {
      prior.count++;
      try {
        await events.patch(prior.namespace, prior.name, 'merge-patch', { count: prior.count, lastTimestamp: stamp }, w, '', false);
        return;
      } catch (e) {
        if (!(e instanceof StatusError) || e.code !== 404) throw e;
        // The event was deleted (or expired): record it anew.
      }
    }
    // As the reference: the object's name and the time in nanoseconds, in hex (a counter in the
    // sub-millisecond digits keeps names of one millisecond apart).
    this.seq = (this.seq + 1) % 1_000_000;
    const name = `${m.name}.${(BigInt(now) * 1_000_000n + BigInt(this.seq)).toString(16)}`;
    await events.create(
      namespace,
      {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace },
        involvedObject: {
          kind: obj.kind,
          // A cluster-scoped object's (a Node's, a PersistentVolume's) has none.
          ...(m.namespace ? { namespace: m.namespace } : {}),
          name: m.name,
          uid: m.uid,
          apiVersion: obj.apiVersion,
          resourceVersion: m.resourceVersion,
          ...(fieldPath ? { fieldPath } : {}),
        },
        reason,
        message,
        source: { component: this.source.component, ...(this.source.host ? { host: this.source.host } : {}) },
        firstTimestamp: stamp,
        lastTimestamp: stamp,
        count: 1,
        type,
        eventTime: null,
        reportingComponent: this.source.component,
        reportingInstance: this.source.host ?? '',
      },
      w,
    );
    if (this.seen.size >= MAX_REMEMBERED) this.seen.delete(this.seen.keys().next().value as number);
    this.seen.set(key, { name, namespace, count: 1, first: now });
  }
}
