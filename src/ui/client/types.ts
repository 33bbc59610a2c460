/**
 * The answers of the dashboard's endpoints, as src/ui/sources.ts and objects.ts write them
 * (no DOM here: rates.ts and its test use them outside the browser).
 */
export interface Overview {
  version: { gitVersion: string; platform: string };
  uptimeSeconds: number;
  now: number;
  store: {
    backend: string;
    revision: number;
    compactedRevision: number;
    keys: number;
    walFsyncs: number;
    walRecords: number;
    recordsPerFsync: number;
    snapshots: number | null;
    compactions: number | null;
  };
  process: { rssBytes: number; cpuUserMicros: number; cpuSystemMicros: number };
  kinds: { resource: string; kind: string; objects: number | null }[];
}

export interface RequestSeries {
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  codes: Record<string, number>;
  total: number;
  count: number;
  sum: number;
  buckets: number[];
}

export interface Requests {
  now: number;
  bounds: number[];
  series: RequestSeries[];
}

export interface Apf {
  enabled: boolean;
  now?: number;
  flowSchemas?: number;
  levels: {
    name: string;
    exempt: boolean;
    seatLimit: number | null;
    nominalSeats: number;
    seatsInUse: number;
    executing: number;
    waiting: number;
    queues: number;
    activeQueues: number;
    dispatched: number;
    rejected: number;
    timedOut: number;
  }[];
}

export interface Watches {
  now: number;
  resources: { resource: string; watchers: number; events: number; revision: number; maxQueued: number; maxLagRevisions: number }[];
}

export interface Kind {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
}

/** What the objects page shows of one object. */
export interface ObjectRow {
  namespace: string;
  name: string;
  created: string;
  resourceVersion: string;
}

/** The first `limit` objects in key order, of `total`, at `revision`. */
export interface Objects {
  revision: number;
  total: number;
  limit: number;
  items: ObjectRow[];
}

/** One object's change on the objects page's stream; `deleted` when the change removed it. */
export interface Change extends ObjectRow {
  deleted?: true;
}

/**
 * One message of the objects page's stream (src/ui/change-batches.ts): the selection's state at
 * `revision` (its object count `total`), and the objects that changed since the last message,
 * or `resync` when too many did (read the list again).
 */
export type ObjectsBatch = { revision: number; total: number } & ({ changes: Change[] } | { resync: true });

export interface Nodes {
  nodes: { name: string; ready: string; simulated: boolean; heartbeat: string; pods: number }[];
}

export interface LoadRuns {
  running: { id: string; scenario: string; startedAt: string; progress: number; figures: Record<string, number> } | null;
  past: { id: string; scenario: string; startedAt: string; finishedAt: string; outcome: string; summary: Record<string, number> }[];
}
