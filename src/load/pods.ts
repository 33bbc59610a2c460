/**
 * Pod startup as clusterloader2's PodStartupLatency measures it, from one watch the harness runs
 * over the pods it made: created (first seen, or the create request for pods it posts itself)
 * → scheduled (spec.nodeName set) → running (phase Running) → watched Ready. Also watch latency:
 * from a write the harness made to the event that shows it.
 */
import { type Client, informer } from './client';
import { LABEL } from './objects';

interface PodTimes {
  /** its `group` label (clusterloader2's saturation / latency), '' when none */
  group: string;
  created: number;
  scheduled?: number;
  running?: number;
  ready?: number;
}

export class PodTracker {
  readonly pods = new Map<string, PodTimes>();
  /** the pods there now (pods keeps the deleted ones too, for their startup times) */
  readonly live = new Set<string>();
  /** ms at which the harness sent a create for a pod key (ns/name) */
  readonly createSent = new Map<string, number>();
  readonly watchLatencies: number[] = [];
  /** writes awaited by the tracker: ns/name → send time, keyed by an annotation value */
  readonly pendingWrites = new Map<string, number>();
  readyNow = 0;
  private readyKeys = new Set<string>();
  private readonly abort = new AbortController();

  constructor(
    readonly client: Client,
    readonly run: string,
  ) {}

  async start(): Promise<void> {
    const sel = `labelSelector=${encodeURIComponent(`${LABEL}=${this.run}`)}`;
    await informer(this.client, '/api/v1/pods', sel, (type, pod) => this.onEvent(type, pod), this.abort.signal);
  }

  private onEvent(type: string, pod: any): void {
    if (type === 'BOOKMARK' || !pod?.metadata) return;
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    const now = this.client.now();
    if (type === 'DELETED') {
      this.live.delete(key);
      if (this.readyKeys.delete(key)) this.readyNow--;
      return;
    }
    this.live.add(key);
    let t = this.pods.get(key);
    if (!t) {
      t = { group: pod.metadata.labels?.group ?? '', created: this.createSent.get(key) ?? now };
      this.pods.set(key, t);
      if (this.createSent.has(key)) this.watchLatencies.push(now - t.created);
    }
    const mark = pod.metadata.annotations?.['svc-load/write'];
    if (mark !== undefined) {
      const sent = this.pendingWrites.get(`${key}/${mark}`);
      if (sent !== undefined) {
        this.watchLatencies.push(now - sent);
        this.pendingWrites.delete(`${key}/${mark}`);
      }
    }
    if (t.scheduled === undefined && pod.spec?.nodeName) t.scheduled = now;
    if (t.running === undefined && pod.status?.phase === 'Running') t.running = now;
    const ready = (pod.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');
    if (ready && t.ready === undefined) t.ready = now;
    if (ready && !this.readyKeys.has(key)) {
      this.readyKeys.add(key);
      this.readyNow++;
    } else if (!ready && this.readyKeys.delete(key)) this.readyNow--;
  }

  stop(): void {
    this.abort.abort();
  }

  /** Whether some pod carries the `group` label value. */
  hasGroup(group: string): boolean {
    for (const t of this.pods.values()) if (t.group === group) return true;
    return false;
  }

  /** Per transition, the list of durations (ms) over pods that made it (of one `group` when given). */
  transitions(group?: string): Record<string, number[]> {
    const out: Record<string, number[]> = {
      create_to_schedule: [],
      schedule_to_run: [],
      run_to_watch: [],
      schedule_to_watch: [],
      pod_startup: [],
    };
    for (const t of this.pods.values()) {
      if (group !== undefined && t.group !== group) continue;
      if (t.scheduled !== undefined) out.create_to_schedule!.push(t.scheduled - t.created);
      if (t.scheduled !== undefined && t.running !== undefined) out.schedule_to_run!.push(t.running - t.scheduled);
      if (t.running !== undefined && t.ready !== undefined) out.run_to_watch!.push(t.ready - t.running);
      if (t.scheduled !== undefined && t.ready !== undefined) out.schedule_to_watch!.push(t.ready - t.scheduled);
      if (t.ready !== undefined) out.pod_startup!.push(t.ready - t.created);
    }
    return out;
  }

  /** Startup times (ms) sorted, for the CDF plot (of one `group` when given). */
  startupSorted(group?: string): number[] {
    return (this.transitions(group).pod_startup ?? []).sort((a, b) => a - b);
  }
}

export function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}
