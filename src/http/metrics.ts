/**
 * /metrics in the Prometheus text exposition format: apiserver_request_total and
 * apiserver_request_duration_seconds with the reference's labels, plus store figures.
 *
 * Written here rather than with prom-client: its per-call label hashing cost about 10% of a GET
 * on the request path; a series here is found by one string key and updated in place.
 */

export interface RequestLabels {
  verb: string;
  /** 'All' for dry-run requests, else ''. */
  dryRun: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  scope: string;
  component: string;
  code: string;
}

const BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
/** The reference's buckets of apiserver_validating_admission_policy_check_duration_seconds. */
export const POLICY_BUCKETS = [0.0000005, 0.001, 0.01, 0.1, 1.0];

type RequestHistogram = HistSeries & { codes: Map<string, Series> };

interface Series {
  labels: string;
  count: number;
}

export interface HistSeries {
  labels: string;
  /** The request series' own labels, for readers other than the text (the dashboard). */
  of?: { verb: string; group: string; resource: string; subresource: string };
  buckets: number[];
  sum: number;
  count: number;
}

/** The store's figures as the backend reports them (src/store/backend.ts; main passes them in). */
export interface StoreFigures {
  revision: number;
  compacted: number;
  keys: number;
  walFsyncs: number;
  walRecords: number;
}

function esc(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

export function labelText(pairs: [string, string][]): string {
  return pairs.map(([k, v]) => `${k}="${esc(v)}"`).join(',');
}

/** The labels both request series share (apiserver_request_total adds `code`), sorted. */
function seriesLabels(l: RequestLabels): [string, string][] {
  return [
    ['component', l.component],
    ['dry_run', l.dryRun],
    ['group', l.group],
    ['resource', l.resource],
    ['scope', l.scope],
    ['subresource', l.subresource],
    ['verb', l.verb],
    ['version', l.version],
  ];
}

/** The text lines of one histogram series: cumulative buckets, +Inf, sum and count. */
export function histogramLines(out: string[], name: string, h: HistSeries, buckets: readonly number[]): void {
  let cum = 0;
  for (let i = 0; i < buckets.length; i++) {
    cum += h.buckets[i] as number;
    out.push(`${name}_bucket{${h.labels},le="${buckets[i]}"} ${cum}`);
  }
  out.push(
    `${name}_bucket{${h.labels},le="+Inf"} ${h.count}`,
    `${name}_sum{${h.labels}} ${h.sum}`,
    `${name}_count{${h.labels}} ${h.count}`,
  );
}

/** One request series as Metrics.requestSeries reads it. */
export interface RequestSeries {
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  /** Requests answered, by HTTP code, and their sum. */
  codes: Record<string, number>;
  total: number;
  /** The latency histogram (watches are not in it): count, sum in seconds, per-bucket counts. */
  count: number;
  sum: number;
  buckets: number[];
}

export class Metrics {
  /** One entry per label set without `code`: its histogram and its counters by code. */
  private readonly series = new Map<string, RequestHistogram>();
  /** The last observe()'s labels and where they counted. */
  private lastObserved: { l: RequestLabels; h: RequestHistogram; t: Series } | undefined;

  /** ValidatingAdmissionPolicy checks by policy, binding, error type and action. */
  private readonly policyChecks = new Map<string, HistSeries>();

  /** Deprecated group/version/resource/subresource requested since start. */
  private readonly deprecated = new Set<string>();

  /** More families, written after the built-in ones (API Priority and Fairness). */
  readonly sources: ((out: string[]) => void)[] = [];

  constructor(
    private readonly storeFigures: () => StoreFigures,
    /** The audit log's counts (apiserver_audit_event_total, apiserver_audit_error_total), when there is one. */
    private readonly auditFigures?: () => { events: number; errors: number },
  ) {}

  /** A request to a deprecated version (apiserver_requested_deprecated_apis, a gauge of 1 per API). */
  observeDeprecated(l: { group: string; version: string; resource: string; subresource: string; removedRelease: string }): void {
    this.deprecated.add(
      labelText([
        ['group', l.group],
        ['removed_release', l.removedRelease],
        ['resource', l.resource],
        ['subresource', l.subresource],
        ['version', l.version],
      ]),
    );
  }

  /** One policy check (the reference's apiserver_validating_admission_policy_check_* metrics). */
  observePolicyCheck(c: { policy: string; binding: string; errorType: string; enforcementAction: string; seconds: number }): void {
    const key = `${c.policy}|${c.binding}|${c.errorType}|${c.enforcementAction}`;
    let h = this.policyChecks.get(key);
    if (!h) {
      const labels = labelText([
        ['enforcement_action', c.enforcementAction],
        ['error_type', c.errorType],
        ['policy', c.policy],
        ['policy_binding', c.binding],
      ]);
      h = { labels, buckets: new Array(POLICY_BUCKETS.length).fill(0), sum: 0, count: 0 };
      this.policyChecks.set(key, h);
    }
    let i = 0;
    while (i < POLICY_BUCKETS.length && c.seconds > (POLICY_BUCKETS[i] as number)) i++;
    if (i < POLICY_BUCKETS.length) h.buckets[i] = (h.buckets[i] as number) + 1;
    h.sum += c.seconds;
    h.count++;
  }

  observe(l: RequestLabels, seconds: number): void {
    // The last request's series first (a client's loop): no key built and hashed.
    const last = this.lastObserved;
    let h: RequestHistogram;
    let t: Series | undefined;
    if (
      last !== undefined &&
      last.l.resource === l.resource &&
      last.l.code === l.code &&
      last.l.verb === l.verb &&
      last.l.group === l.group &&
      last.l.version === l.version &&
      last.l.subresource === l.subresource &&
      last.l.dryRun === l.dryRun &&
      last.l.scope === l.scope
    ) {
      h = last.h;
      t = last.t;
    } else {
      h = this.seriesOf(l);
      t = h.codes.get(l.code);
      if (!t) {
        t = { labels: labelText([['code', l.code], ...seriesLabels(l)]), count: 0 };
        h.codes.set(l.code, t);
      }
      this.lastObserved = { l, h, t };
    }
    t.count++;
    // Watches are long-running; the reference leaves them out of the latency histogram.
    if (l.verb === 'WATCH') return;
    // Counted in the first bucket that holds it; cumulated when the text is written.
    let i = 0;
    while (i < BUCKETS.length && seconds > (BUCKETS[i] as number)) i++;
    if (i < BUCKETS.length) h.buckets[i] = (h.buckets[i] as number) + 1;
    h.sum += seconds;
    h.count++;
  }

  private seriesOf(l: RequestLabels): RequestHistogram {
    const key = `${l.verb}|${l.dryRun}|${l.group}|${l.version}|${l.resource}|${l.subresource}|${l.scope}`;
    let h = this.series.get(key);
    if (!h) {
      h = {
        labels: labelText(seriesLabels(l)),
        of: { verb: l.verb, group: l.group, resource: l.resource, subresource: l.subresource },
        buckets: new Array(BUCKETS.length).fill(0),
        sum: 0,
        count: 0,
        codes: new Map(),
      };
      this.series.set(key, h);
    }
    return h;
  }

  /**
   * The request series as they stand, cumulative since start (the histogram's buckets are not
   * cumulated: bucket i counts requests in (BUCKETS[i-1], BUCKETS[i]]). The dashboard takes
   * differences between two reads for rates and percentiles: nothing is kept for it here.
   */
  requestSeries(): { bounds: readonly number[]; series: RequestSeries[] } {
    const series: RequestSeries[] = [];
    for (const h of this.series.values()) {
      const codes: Record<string, number> = {};
      let total = 0;
      for (const [code, c] of h.codes) {
        codes[code] = c.count;
        total += c.count;
      }
      const of = h.of ?? { verb: '', group: '', resource: '', subresource: '' };
      series.push({ ...of, total, codes, count: h.count, sum: h.sum, buckets: [...h.buckets] });
    }
    return { bounds: BUCKETS, series };
  }

  text(): string {
    const out: string[] = [
      '# HELP apiserver_request_total Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      '# TYPE apiserver_request_total counter',
    ];
    for (const h of this.series.values()) for (const c of h.codes.values()) out.push(`apiserver_request_total{${c.labels}} ${c.count}`);
    out.push(
      '# HELP apiserver_request_duration_seconds Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
      '# TYPE apiserver_request_duration_seconds histogram',
    );
    for (const h of this.series.values()) if (h.count > 0) histogramLines(out, 'apiserver_request_duration_seconds', h, BUCKETS);
    if (this.policyChecks.size > 0) {
      out.push(
        '# HELP apiserver_validating_admission_policy_check_total Validation admission policy check total, labeled by policy and further identified by binding and enforcement action taken.',
        '# TYPE apiserver_validating_admission_policy_check_total counter',
      );
      for (const h of this.policyChecks.values()) out.push(`apiserver_validating_admission_policy_check_total{${h.labels}} ${h.count}`);
      out.push(
        '# HELP apiserver_validating_admission_policy_check_duration_seconds Validation admission latency for individual validation expressions in seconds, labeled by policy and further including binding and enforcement action taken.',
        '# TYPE apiserver_validating_admission_policy_check_duration_seconds histogram',
      );
      for (const h of this.policyChecks.values())
        histogramLines(out, 'apiserver_validating_admission_policy_check_duration_seconds', h, POLICY_BUCKETS);
    }
    out.push(
      '# HELP apiserver_requested_deprecated_apis Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.',
      '# TYPE apiserver_requested_deprecated_apis gauge',
    );
    for (const l of this.deprecated) out.push(`apiserver_requested_deprecated_apis{${l}} 1`);
    // Registered as the reference registers them (BETA). Every rule here is handwritten, so
    // there is nothing declarative to disagree with it: both stay 0.
    out.push(
      '# HELP apiserver_validation_declarative_validation_mismatch_total [BETA] Number of times declarative validation results differed from handwritten validation results for core types.',
      '# TYPE apiserver_validation_declarative_validation_mismatch_total counter',
      'apiserver_validation_declarative_validation_mismatch_total 0',
      '# HELP apiserver_validation_declarative_validation_panic_total [BETA] Number of times declarative validation has panicked during validation.',
      '# TYPE apiserver_validation_declarative_validation_panic_total counter',
      'apiserver_validation_declarative_validation_panic_total 0',
    );
    const audit = this.auditFigures?.();
    if (audit) {
      out.push(
        '# HELP apiserver_audit_event_total Counter of audit events generated and sent to the audit backend.',
        '# TYPE apiserver_audit_event_total counter',
        `apiserver_audit_event_total ${audit.events}`,
        '# HELP apiserver_audit_error_total Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.',
        '# TYPE apiserver_audit_error_total counter',
        `apiserver_audit_error_total{plugin="log"} ${audit.errors}`,
      );
    }
    for (const source of this.sources) source(out);
    const s = this.storeFigures();
    const gauge = (name: string, help: string, type: string, v: number) =>
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${v}`);
    gauge('svc_store_revision', 'Newest durable revision of the store.', 'gauge', s.revision);
    gauge('svc_store_compacted_revision', 'Compacted revision of the store.', 'gauge', s.compacted);
    gauge('svc_store_keys', 'Keys with retained history in the store.', 'gauge', s.keys);
    gauge('svc_store_wal_fsyncs_total', 'fdatasync calls of the write-ahead log.', 'counter', s.walFsyncs);
    gauge('svc_store_wal_records_total', 'Records appended to the write-ahead log.', 'counter', s.walRecords);
    return `${out.join('\n')}\n`;
  }
}
