/**
 * The reference's admission webhook metrics (apiserver/pkg/admission/metrics), fed by each
 * webhook call (src/admission/webhook/plugin.ts) and written into /metrics with the others:
 *
 *   apiserver_admission_webhook_admission_duration_seconds{name,operation,rejected,type}
 *   apiserver_admission_webhook_request_total{code,name,operation,rejected,type}
 *   apiserver_admission_webhook_rejection_count{error_type,name,operation,rejection_code,type}
 *   apiserver_admission_webhook_fail_open_count{name,type}
 */
import { histogramLines, labelText } from './metrics';

/** The reference's buckets of the webhook latency histogram. */
const BUCKETS = [0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25];

export interface WebhookCallFigures {
  name: string;
  type: string;
  operation: string;
  rejected: boolean;
  code: number;
  seconds: number;
  rejection?: string;
  rejectionCode?: number;
  failedOpen?: boolean;
}

interface Hist {
  labels: string;
  buckets: number[];
  sum: number;
  count: number;
}

export class WebhookMetrics {
  private readonly durations = new Map<string, Hist>();
  private readonly counters = {
    requests: new Map<string, number>(),
    rejections: new Map<string, number>(),
    failOpen: new Map<string, number>(),
  };

  /** Label texts by their values joined (escaping on every call was ~6 us of each webhook call). */
  private readonly labelTexts = new Map<string, string>();

  private labels(pairs: [string, string][]): string {
    let key = '';
    for (const p of pairs) key += `${p[0]}=${p[1]}\u0000`;
    let t = this.labelTexts.get(key);
    if (t === undefined) {
      t = labelText(pairs);
      // Names and codes are bounded by the configurations; the bound keeps a churn of them in check.
      if (this.labelTexts.size >= 10_000) this.labelTexts.clear();
      this.labelTexts.set(key, t);
    }
    return t;
  }

  observe(c: WebhookCallFigures): void {
    const rejected = c.rejected ? 'true' : 'false';
    const hl = this.labels([
      ['name', c.name],
      ['operation', c.operation],
      ['rejected', rejected],
      ['type', c.type],
    ]);
    let h = this.durations.get(hl);
    if (!h) {
      h = { labels: hl, buckets: new Array(BUCKETS.length).fill(0), sum: 0, count: 0 };
      this.durations.set(hl, h);
    }
    let i = 0;
    while (i < BUCKETS.length && c.seconds > (BUCKETS[i] as number)) i++;
    if (i < BUCKETS.length) h.buckets[i] = (h.buckets[i] as number) + 1;
    h.sum += c.seconds;
    h.count++;
    const add = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
    add(
      this.counters.requests,
      this.labels([
        ['code', String(c.code)],
        ['name', c.name],
        ['operation', c.operation],
        ['rejected', rejected],
        ['type', c.type],
      ]),
    );
    if (c.rejection)
      add(
        this.counters.rejections,
        this.labels([
          ['error_type', c.rejection],
          ['name', c.name],
          ['operation', c.operation],
          ['rejection_code', String(c.rejectionCode ?? 0)],
          ['type', c.type],
        ]),
      );
    if (c.failedOpen)
      add(
        this.counters.failOpen,
        this.labels([
          ['name', c.name],
          ['type', c.type],
        ]),
      );
  }

  write(out: string[]): void {
    if (this.durations.size === 0) return;
    out.push(
      '# HELP apiserver_admission_webhook_admission_duration_seconds [STABLE] Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).',
      '# TYPE apiserver_admission_webhook_admission_duration_seconds histogram',
    );
    for (const h of this.durations.values()) histogramLines(out, 'apiserver_admission_webhook_admission_duration_seconds', h, BUCKETS);
    const counter = (name: string, help: string, m: Map<string, number>) => {
      if (m.size === 0) return;
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
      for (const [labels, n] of m) out.push(`${name}{${labels}} ${n}`);
    };
    counter(
      'apiserver_admission_webhook_request_total',
      '[ALPHA] Admission webhook request total, identified by name and broken out for each admission type (validating or mutating) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.',
      this.counters.requests,
    );
    counter(
      'apiserver_admission_webhook_rejection_count',
      '[ALPHA] Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.',
      this.counters.rejections,
    );
    counter(
      'apiserver_admission_webhook_fail_open_count',
      '[ALPHA] Admission webhook fail open count, identified by name and broken out for each admission type (validating or admit).',
      this.counters.failOpen,
    );
  }
}
