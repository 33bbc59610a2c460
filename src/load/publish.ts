/**
 * The run as the target's dashboard shows it (its "load runs" page): when the target is this
 * server (its discovery lists a group ending in `.svc.io`), the harness keeps one ConfigMap
 * kube-system/load-run-<run id>, labelled load.svc.io/run=true, with the scenario, start time,
 * progress (0..1) and the figures it samples (JSON of named numbers), merge-patched at most every
 * PUBLISH_INTERVAL_MS; at the end finishedAt, outcome and a summary. The server reads these from
 * its ConfigMaps watch cache (src/ui/load-runs.ts). Only the API is used: no side door.
 *
 * Publishing never fails the run: the first failure is logged and publishing stops. The last
 * KEEP_FINISHED finished runs are kept; older ones are deleted.
 */
import type { Client } from './client';

export const RUN_LABEL = 'load.svc.io/run';
export const RUN_NAMESPACE = 'kube-system';
export const PUBLISH_INTERVAL_MS = 2000;
export const KEEP_FINISHED = 20;

export type Outcome = 'passed' | 'failed' | 'stopped';

const CM_PATH = `/api/v1/namespaces/${RUN_NAMESPACE}/configmaps`;
const MERGE = { 'content-type': 'application/merge-patch+json' };

/** Whether the target is this server: a discovery group with the brand suffix. */
export async function isThisServer(client: Client): Promise<boolean> {
  const r = await client.call('GET', '/apis');
  const groups: { name?: string }[] = Array.isArray(r.body?.groups) ? r.body.groups : [];
  return r.status === 200 && groups.some((g) => typeof g.name === 'string' && g.name.endsWith('.svc.io'));
}

const numbers = (o: Record<string, number | undefined>): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(o)) if (typeof v === 'number' && Number.isFinite(v)) out[k] = Math.round(v * 1000) / 1000;
  return out;
};

export class RunPublisher {
  private readonly name: string;
  private failed = false;
  private logged = false;
  private last = Number.NEGATIVE_INFINITY;
  private pending: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: Client,
    readonly runId: string,
    private readonly log: (line: string) => void,
  ) {
    this.name = `load-run-${runId}`.slice(0, 253);
  }

  /** Publishing on for this target? (`undefined` when publishing is off or the target is another cluster.) */
  static async open(client: Client, runId: string, scenario: string, log: (line: string) => void): Promise<RunPublisher | undefined> {
    const ok = await isThisServer(client).catch(() => false);
    if (!ok) return undefined;
    const p = new RunPublisher(client, runId, log);
    await p.send('POST', CM_PATH, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: p.name, namespace: RUN_NAMESPACE, labels: { [RUN_LABEL]: 'true' } },
      data: { scenario, startedAt: new Date().toISOString(), progress: '0', figures: '{}' },
    });
    return p;
  }

  /** The run's progress and figures, sent when the last update is PUBLISH_INTERVAL_MS old. */
  update(progress: number, figures: Record<string, number | undefined>): void {
    const now = performance.now();
    if (this.failed || now - this.last < PUBLISH_INTERVAL_MS) return;
    this.last = now;
    const data = { progress: String(Math.min(1, Math.max(0, progress))), figures: JSON.stringify(numbers(figures)) };
    this.pending = this.pending.then(() => this.send('PATCH', `${CM_PATH}/${this.name}`, { data }, MERGE));
  }

  /** The run's end, then the oldest finished runs past KEEP_FINISHED go. */
  async finish(outcome: Outcome, summary: Record<string, number | undefined>): Promise<void> {
    await this.pending;
    const data = { progress: '1', finishedAt: new Date().toISOString(), outcome, summary: JSON.stringify(numbers(summary)) };
    // The end is sent even after a failed update (the server may be back).
    this.failed = false;
    await this.send('PATCH', `${CM_PATH}/${this.name}`, { data }, MERGE);
    if (this.failed) return;
    await this.prune().catch((e) => this.fail(`pruning old runs: ${(e as Error).message}`));
  }

  private async prune(): Promise<void> {
    const r = await this.client.call('GET', `${CM_PATH}?labelSelector=${encodeURIComponent(`${RUN_LABEL}=true`)}`);
    if (r.status !== 200) throw new Error(`list: ${r.status} ${r.body?.message ?? ''}`);
    const finished = (r.body.items as { metadata: { name: string }; data?: Record<string, string> }[])
      .filter((c) => c.data?.finishedAt)
      .sort((a, b) => (a.data!.finishedAt! < b.data!.finishedAt! ? 1 : -1));
    for (const c of finished.slice(KEEP_FINISHED)) await this.client.call('DELETE', `${CM_PATH}/${c.metadata.name}`);
  }

  private async send(method: string, path: string, body: unknown, headers?: Record<string, string>): Promise<void> {
    if (this.failed) return;
    try {
      const r = await this.client.call(method, path, body, headers);
      if (r.status >= 300) this.fail(`${method} ${path}: ${r.status} ${r.body?.message ?? ''}`);
    } catch (e) {
      this.fail(`${method} ${path}: ${(e as Error).message}`);
    }
  }

  private fail(why: string): void {
    this.failed = true;
    if (this.logged) return;
    this.logged = true;
    this.log(`publishing the run to the dashboard failed (the run goes on): ${why}`);
  }
}
