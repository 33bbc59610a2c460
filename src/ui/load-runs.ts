/**
 * The load runs page's source. The load harness (a scenario runner inside the server, issue 41's
 * "load runs") does not exist yet: until it does, the dashboard is given NO_LOAD_RUNS and the page
 * says so. The harness plugs in here by implementing LoadRuns and passing it to createUi
 * (src/ui/builder.ts, `loadRuns`); the page already shows whatever these two return.
 */

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
  /** The run in progress, if any. */
  running(): LoadRunProgress | undefined;
  /** Finished runs, newest first. */
  past(): LoadRunReport[];
}

export const NO_LOAD_RUNS: LoadRuns = { running: () => undefined, past: () => [] };
