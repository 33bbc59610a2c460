/**
 * The load runs page's source. The load harness (src/load/, `npm run load -- <scenario>
 * --kubeconfig=...`) runs in its own process; when its target is this server it keeps one ConfigMap
 * per run, kube-system/load-run-<run id> labelled load.svc.io/run=true (src/load/publish.ts):
 * scenario, startedAt, progress (0..1), figures (JSON of named numbers), and once finished
 * finishedAt, outcome and summary. The dashboard reads those from the ConfigMaps watch cache (never
 * the store): running() is the newest unfinished run, past() the finished ones, newest first.
 */
import type { Obj } from '../api/meta';
import type { ApiRegistry } from '../registry/api-registry';

export interface LoadRunProgress {
  id: string;
  scenario: string;
  startedAt: string;
  /** 0..1 */
  progress: number;
  /** Named figures of the run so far (requests per second, p99 in ms, objects created, ...), plotted live. */
  figures: Record<string, number>;
}

export interface LoadRunReport {
  id: string;
  scenario: string;
  startedAt: string;
  finishedAt: string;
  outcome: 'passed' | 'failed' | 'stopped';
  summary: Record<string, number>;
}

export interface LoadRuns {
  /** Called before the two reads of a request (loads what they read). */
  ready?(): Promise<void>;
  /** The run in progress, if any. */
  running(): LoadRunProgress | undefined;
  /** Finished runs, newest first. */
  past(): LoadRunReport[];
}

/** Must match src/load/publish.ts (the harness does not import the server, nor the server it). */
const RUN_LABEL = 'load.svc.io/run';
const RUN_NAMESPACE = 'kube-system';
const OUTCOMES = new Set(['passed', 'failed', 'stopped']);

/** A JSON object of numbers, or {} (a hand-edited ConfigMap is no reason for the page to fail). */
function figures(text: string | undefined): Record<string, number> {
  if (!text) return {};
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return {};
    const out: Record<string, number> = {};
    for (const [k, n] of Object.entries(v)) if (typeof n === 'number' && Number.isFinite(n)) out[k] = n;
    return out;
  } catch {
    return {};
  }
}

/** The runs the harness published to this server, read from the ConfigMaps watch cache. */
export function cachedLoadRuns(api: ApiRegistry): LoadRuns {
  const store = () => api.lookup('', 'v1', 'configmaps');
  const runs = () => {
    const s = store();
    if (!s?.cache?.started) return [];
    const out: { name: string; data: Record<string, string> }[] = [];
    for (const c of s.cache.list(`${s.prefix}${RUN_NAMESPACE}/`)) {
      const o: Obj = c.obj;
      const labels = (o.metadata.labels ?? {}) as Record<string, string>;
      if (labels[RUN_LABEL] !== 'true') continue;
      const data = (o.data ?? {}) as Record<string, string>;
      if (typeof data.scenario !== 'string' || typeof data.startedAt !== 'string') continue;
      out.push({ name: o.metadata.name as string, data });
    }
    return out;
  };
  const id = (name: string) => name.replace(/^load-run-/, '');
  return {
    async ready() {
      await store()?.cache?.start();
    },
    running() {
      const r = runs()
        .filter((x) => !x.data.finishedAt)
        .sort((a, b) => (a.data.startedAt! < b.data.startedAt! ? 1 : -1))[0];
      if (!r) return undefined;
      const p = Number(r.data.progress);
      return {
        id: id(r.name),
        scenario: r.data.scenario!,
        startedAt: r.data.startedAt!,
        progress: Number.isFinite(p) ? Math.min(1, Math.max(0, p)) : 0,
        figures: figures(r.data.figures),
      };
    },
    past() {
      return runs()
        .filter((x) => x.data.finishedAt)
        .sort((a, b) => (a.data.finishedAt! < b.data.finishedAt! ? 1 : -1))
        .map((r) => ({
          id: id(r.name),
          scenario: r.data.scenario!,
          startedAt: r.data.startedAt!,
          finishedAt: r.data.finishedAt!,
          outcome: (OUTCOMES.has(r.data.outcome ?? '') ? r.data.outcome : 'failed') as LoadRunReport['outcome'],
          summary: figures(r.data.summary),
        }));
    },
  };
}
