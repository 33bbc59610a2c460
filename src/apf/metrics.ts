/**
 * The apiserver_flowcontrol_* metrics (the reference's names and labels), kept per flow schema
 * and priority level pair in place (no label hashing on the request path), written as
 * Prometheus text by /metrics.
 *
 *   per flow schema × level  rejected_requests_total{reason}, dispatched_requests_total,
 *                            current_inqueue_requests, current_executing_requests,
 *                            current_executing_seats, request_wait_duration_seconds{execute},
 *                            request_execution_seconds{type}, work_estimated_seats
 *   per level                nominal_limit_seats, current_limit_seats, lower_limit_seats,
 *                            upper_limit_seats, demand_seats (now), demand_seats_average,
 *                            demand_seats_stdev, demand_seats_high_watermark, demand_seats_smoothed
 */
import type { FlowControl } from './flow-control';
import type { FlowStats } from './flow-stats';

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
const P = 'apiserver_flowcontrol_';

function family(out: string[], name: string, type: string, help: string): void {
  out.push(`# HELP ${P}${name} ${help}`, `# TYPE ${P}${name} ${type}`);
}

export function flowControlMetrics(fc: FlowControl, out: string[]): void {
  const flows = [...fc.flowStats];
  const fl = (f: FlowStats) => `flow_schema="${esc(f.flowSchema)}",priority_level="${esc(f.priorityLevel)}"`;
  family(out, 'rejected_requests_total', 'counter', 'Number of requests rejected by API Priority and Fairness subsystem');
  for (const f of flows) for (const [reason, n] of f.rejected) out.push(`${P}rejected_requests_total{${fl(f)},reason="${reason}"} ${n}`);
  family(out, 'dispatched_requests_total', 'counter', 'Number of requests executed by API Priority and Fairness subsystem');
  for (const f of flows) out.push(`${P}dispatched_requests_total{${fl(f)}} ${f.dispatched}`);
  family(
    out,
    'current_inqueue_requests',
    'gauge',
    'Number of requests currently pending in queues of the API Priority and Fairness subsystem',
  );
  for (const f of flows) out.push(`${P}current_inqueue_requests{${fl(f)}} ${f.inqueue}`);
  family(
    out,
    'current_executing_requests',
    'gauge',
    'Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem',
  );
  for (const f of flows) out.push(`${P}current_executing_requests{${fl(f)}} ${f.executing}`);
  family(
    out,
    'current_executing_seats',
    'gauge',
    'Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem',
  );
  for (const f of flows) out.push(`${P}current_executing_seats{${fl(f)}} ${f.seats}`);
  family(out, 'request_wait_duration_seconds', 'histogram', 'Length of time a request spent waiting in its queue');
  for (const f of flows) {
    if (f.waitExecuted.count > 0) f.waitExecuted.lines(out, `${P}request_wait_duration_seconds`, `execute="true",${fl(f)}`);
    if (f.waitRejected.count > 0) f.waitRejected.lines(out, `${P}request_wait_duration_seconds`, `execute="false",${fl(f)}`);
  }
  family(
    out,
    'request_execution_seconds',
    'histogram',
    'Duration of initial stage (for a WATCH) or any (for a non-WATCH) stage of request execution in the API Priority and Fairness subsystem',
  );
  for (const f of flows) {
    if (f.execRegular.count > 0) f.execRegular.lines(out, `${P}request_execution_seconds`, `${fl(f)},type="regular"`);
    if (f.execWatch.count > 0) f.execWatch.lines(out, `${P}request_execution_seconds`, `${fl(f)},type="watch"`);
  }
  family(
    out,
    'work_estimated_seats',
    'histogram',
    'Number of estimated seats (maximum of initial and final seats) associated with requests in API Priority and Fairness',
  );
  for (const f of flows) {
    if (f.estimatedSeats.count > 0) f.estimatedSeats.lines(out, `${P}work_estimated_seats`, fl(f));
  }
  const levels = [...fc.priorityLevels.values()];
  const gauge = (name: string, help: string, v: (pl: (typeof levels)[number]) => number) => {
    family(out, name, 'gauge', help);
    for (const pl of levels) out.push(`${P}${name}{priority_level="${esc(pl.name)}"} ${v(pl)}`);
  };
  gauge('nominal_limit_seats', 'Nominal number of execution seats configured for each priority level', (pl) => pl.limits.nominal);
  gauge('current_limit_seats', 'current derived number of execution seats available to each priority level', (pl) => pl.current);
  gauge(
    'lower_limit_seats',
    'Configured lower bound on number of execution seats available to each priority level',
    (pl) => pl.limits.lower,
  );
  gauge(
    'upper_limit_seats',
    'Configured upper bound on number of execution seats available to each priority level',
    (pl) => pl.limits.upper,
  );
  gauge('demand_seats', 'Seats in use plus seats waiting, now, for each priority level', (pl) => pl.integrator.current);
  gauge('demand_seats_average', 'Time-weighted average, over last adjustment period, of demand_seats', (pl) => pl.stats.avg);
  gauge('demand_seats_stdev', 'Time-weighted standard deviation, over last adjustment period, of demand_seats', (pl) => pl.stats.stdDev);
  gauge('demand_seats_high_watermark', 'High watermark, over last adjustment period, of demand_seats', (pl) => pl.stats.highWatermark);
  gauge('demand_seats_smoothed', 'Smoothed seat demands', (pl) => pl.stats.smoothed);
}
