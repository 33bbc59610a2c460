/**
 * The reference's MutatingAdmissionPolicy metrics, one observation per mutation (its dispatcher's
 * ObserveAdmission and ObserveRejection), written after the built-in families (Metrics.sources):
 *
 *   apiserver_mutating_admission_policy_check_total{error_type,policy,policy_binding}
 *   apiserver_mutating_admission_policy_check_duration_seconds{error_type,policy,policy_binding}
 *
 * error_type: no_error, compile_error (the expression did not compile), invalid_error.
 */
import { type HistSeries, histogramLines, labelText, POLICY_BUCKETS } from './metrics';

export interface MutationCheck {
  policy: string;
  binding: string;
  errorType: 'no_error' | 'compile_error' | 'invalid_error';
  seconds: number;
}

export class MutatingPolicyMetrics {
  private readonly checks = new Map<string, HistSeries>();

  observe(c: MutationCheck): void {
    const key = `${c.policy}|${c.binding}|${c.errorType}`;
    let h = this.checks.get(key);
    if (!h) {
      const labels = labelText([
        ['error_type', c.errorType],
        ['policy', c.policy],
        ['policy_binding', c.binding],
      ]);
      h = { labels, buckets: new Array(POLICY_BUCKETS.length).fill(0), sum: 0, count: 0 };
      this.checks.set(key, h);
    }
    let i = 0;
    while (i < POLICY_BUCKETS.length && c.seconds > (POLICY_BUCKETS[i] as number)) i++;
    if (i < POLICY_BUCKETS.length) h.buckets[i] = (h.buckets[i] as number) + 1;
    h.sum += c.seconds;
    h.count++;
  }

  write(out: string[]): void {
    if (this.checks.size === 0) return;
    out.push(
      '# HELP apiserver_mutating_admission_policy_check_total [ALPHA] Mutation admission policy check total, labeled by policy and further identified by binding.',
      '# TYPE apiserver_mutating_admission_policy_check_total counter',
    );
    for (const h of this.checks.values()) out.push(`apiserver_mutating_admission_policy_check_total{${h.labels}} ${h.count}`);
    out.push(
      '# HELP apiserver_mutating_admission_policy_check_duration_seconds [ALPHA] Mutation admission latency for individual mutation expressions in seconds, labeled by policy and binding.',
      '# TYPE apiserver_mutating_admission_policy_check_duration_seconds histogram',
    );
    for (const h of this.checks.values())
      histogramLines(out, 'apiserver_mutating_admission_policy_check_duration_seconds', h, POLICY_BUCKETS);
  }
}
