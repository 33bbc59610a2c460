/**
 * The reference's debug dumps under /debug/api_priority_and_fairness/ (text tables, one row per
 * line, columns comma-separated and aligned as Go's tabwriter writes them):
 *
 *   dump_priority_levels   per level: queues in use, waiting / executing / dispatched / rejected
 *   dump_queues            per queue: waiting and executing requests, seats, virtual time
 *   dump_requests          per waiting request: level, schema, queue, flow, times, seats
 *                          (?includeRequestDetails=1 adds the user and what it asked)
 */
import type { FlowControl, RequestTag } from './flow-control';
import type { QueuedRequest } from './queueset';

/** Rows of cells as `a, b, c` with every column padded to its widest cell. */
function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const r of rows) {
    for (let i = 0; i < r.length; i++) widths[i] = Math.max(widths[i] ?? 0, (r[i] as string).length + (i < r.length - 1 ? 1 : 0));
  }
  return rows
    .map((r) =>
      r
        .map((c, i) => (i < r.length - 1 ? `${c},`.padEnd((widths[i] as number) + 1) : c))
        .join('')
        .trimEnd(),
    )
    .join('\n')
    .concat('\n');
}

const iso = (fc: FlowControl, at: number) => new Date(Date.now() - (fc.clock.now() - at)).toISOString();

export function dumpPriorityLevels(fc: FlowControl): string {
  const rows = [
    [
      'PriorityLevelName',
      'ActiveQueues',
      'IsIdle',
      'IsQuiescing',
      'WaitingRequests',
      'ExecutingRequests',
      'DispatchedRequests',
      'RejectedRequests',
      'TimedoutRequests',
      'CancelledRequests',
    ],
  ];
  const levels = [...fc.priorityLevels.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const pl of levels) {
    const t = pl.qs?.totals;
    const active = pl.qs ? pl.qs.queueList.filter((q) => q.active).length : 0;
    const executing = t ? t.executing : pl.exemptExecuting;
    const waiting = t ? t.waiting : 0;
    rows.push([
      pl.name,
      pl.qs ? String(active) : '<none>',
      String(executing === 0 && waiting === 0),
      'false',
      String(waiting),
      String(executing),
      String(pl.dispatched),
      String(pl.rejected),
      String(pl.timedOut),
      String(pl.cancelled),
    ]);
  }
  return table(rows);
}

export function dumpQueues(fc: FlowControl): string {
  const rows = [
    [
      'PriorityLevelName',
      'Index',
      'PendingRequests',
      'ExecutingRequests',
      'SeatsInUse',
      'NextDispatchR',
      'InitialSeatsSum',
      'MaxSeatsSum',
      'TotalWorkSum',
    ],
  ];
  const levels = [...fc.priorityLevels.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const pl of levels) {
    if (!pl.qs) {
      rows.push([pl.name, '<none>', '<none>', String(pl.exemptExecuting), '<none>', '<none>', '<none>', '<none>', '<none>']);
      continue;
    }
    for (const q of pl.qs.queueList) {
      let initial = 0;
      let work = 0;
      for (const r of q.waiting) {
        initial += r.estimate.initialSeats;
        work += r.work;
      }
      rows.push([
        pl.name,
        String(q.index),
        String(q.waiting.length),
        String(q.executing),
        String(q.seatsInUse),
        `${(q.nextDispatchR / 1000).toFixed(8)}ss`,
        String(initial),
        String(q.waitingSeats),
        `${(work / 1000).toFixed(8)}ss`,
      ]);
    }
  }
  return table(rows);
}

export function dumpRequests(fc: FlowControl, details: boolean): string {
  const head = [
    'PriorityLevelName',
    'FlowSchemaName',
    'QueueIndex',
    'RequestIndexInQueue',
    'FlowDistingsher',
    'ArriveTime',
    'InitialSeats',
    'FinalSeats',
    'AdditionalLatency',
    'StartTime',
  ];
  if (details) head.push('UserName', 'Verb', 'APIPath', 'Namespace', 'Name', 'APIVersion', 'Resource', 'SubResource');
  const rows = [head];
  const levels = [...fc.priorityLevels.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const pl of levels) {
    for (const q of pl.qs?.queueList ?? []) {
      q.waiting.forEach((wr, i) => {
        const r = wr as QueuedRequest<RequestTag>;
        const t = r.tag;
        const row = [
          pl.name,
          t.fs.name,
          String(q.index),
          String(i),
          t.distinguisher,
          iso(fc, r.arrivedAt),
          String(r.estimate.initialSeats),
          String(r.estimate.finalSeats),
          `${r.estimate.additionalLatencyMs}ms`,
          '0001-01-01T00:00:00Z',
        ];
        if (details) {
          const info = t.info;
          row.push(
            t.user.name,
            info.verb,
            info.isResourceRequest ? '' : info.path,
            info.isResourceRequest ? info.namespace : '',
            info.isResourceRequest ? info.name : '',
            info.isResourceRequest ? info.version : '',
            info.isResourceRequest ? info.resource : '',
            info.isResourceRequest ? info.subresource : '',
          );
        }
        rows.push(row);
      });
    }
  }
  return table(rows);
}
