/**
 * /metrics in the Prometheus text format (prom-client): apiserver_request_total and
 * apiserver_request_duration_seconds with the reference's labels, plus store figures.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface RequestLabels {
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  scope: string;
  component: string;
  code: string;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly total: Counter<keyof RequestLabels>;
  private readonly duration: Histogram<Exclude<keyof RequestLabels, 'code'>>;
  readonly storeGauges: Record<'revision' | 'compacted' | 'keys' | 'wal_fsyncs' | 'wal_records', Gauge>;

  constructor(storeStats: () => { revision: number; compacted: number; keys: number; walFsyncs: number; walRecords: number }) {
    this.total = new Counter({
      name: 'apiserver_request_total',
      help: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'code'],
      registers: [this.registry],
    });
    this.duration = new Histogram({
      name: 'apiserver_request_duration_seconds',
      help: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
      labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
      buckets: [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60],
      registers: [this.registry],
    });
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.set(read());
        },
      });
    this.storeGauges = {
      revision: gauge('svc_store_revision', 'Newest durable revision of the store.', () => storeStats().revision),
      compacted: gauge('svc_store_compacted_revision', 'Compacted revision of the store.', () => storeStats().compacted),
      keys: gauge('svc_store_keys', 'Keys with retained history in the store.', () => storeStats().keys),
      wal_fsyncs: gauge('svc_store_wal_fsyncs_total', 'fdatasync calls of the write-ahead log.', () => storeStats().walFsyncs),
      wal_records: gauge('svc_store_wal_records_total', 'Records appended to the write-ahead log.', () => storeStats().walRecords),
    };
  }

  observe(l: RequestLabels, seconds: number): void {
    this.total.inc(l);
    const { code: _code, ...rest } = l;
    // Watches are long-running; the reference leaves them out of the latency histogram.
    if (l.verb !== 'WATCH') this.duration.observe(rest, seconds);
  }

  async text(): Promise<string> {
    return this.registry.metrics();
  }
}
