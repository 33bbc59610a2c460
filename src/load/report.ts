/**
 * The reports: JSON in clusterloader2's shapes (APIResponsivenessPrometheus, PodStartupLatency)
 * plus the run's time series, and one self-contained HTML page with uPlot charts (its JS and CSS
 * inlined, so the file works offline). The SLOs are the reference's scalability SLOs.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from './client';
import { percentile } from './pods';
import type { RunResult, Sample } from './run';

export interface Perc {
  Perc50: number;
  Perc90: number;
  Perc99: number;
}
export interface DataItem {
  data: Perc;
  unit: 'ms';
  labels: Record<string, string>;
}
export interface Report {
  name: string;
  target: string;
  started: string;
  durationMs: number;
  phases: RunResult['phases'];
  APIResponsivenessPrometheus: { version: 'v1'; dataItems: DataItem[] };
  /** the `latency` group's pods when the run has one (clusterloader2's density), else every pod */
  PodStartupLatency: { version: '1.0'; dataItems: DataItem[] };
  /** the `saturation` group's pods, when the run has one, with its threshold (pods / 20 + 180 s) */
  SaturationPodStartupLatency?: { version: '1.0'; dataItems: DataItem[]; thresholdMs: number };
  WatchLatency: { version: '1.0'; dataItems: DataItem[] };
  requests: { total: number; throttled: number; errors: number };
  watchers: RunResult['watchers'];
  /** node lease traffic the harness made (leases, renewals, conflicts, failures), when it made any */
  leases?: RunResult['leases'];
  /** custom resources created, per CRD name */
  customResources: RunResult['customResources'];
  pods: number;
  /** peaks and means over the run's samples (server figures absent when unknown) */
  resources: { serverCpuMean?: number; serverCpuMax?: number; serverRssMax?: number; harnessCpuMean: number };
  series: Sample[];
  podStartupCdf: number[];
  slo: { ok: boolean; violations: string[] };
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** The reference's API call latency SLO thresholds (ms), by verb and scope. */
export function sloOf(verb: string, scope: string): number | undefined {
  if (MUTATING.has(verb)) return 1000;
  if (verb === 'GET' || scope === 'resource') return 1000;
  if (verb === 'LIST') return scope === 'namespace' ? 5000 : 30000;
  return undefined; // WATCH, CONNECT: not covered
}
/** clusterloader2's pod startup SLO: p99 of create → watched Ready ≤ 5 s. */
export const POD_STARTUP_SLO_MS = 5000;

const perc = (xs: number[]): Perc => {
  const s = [...xs].sort((a, b) => a - b);
  const r = (v: number) => Math.round(v * 1000) / 1000;
  return { Perc50: r(percentile(s, 0.5)), Perc90: r(percentile(s, 0.9)), Perc99: r(percentile(s, 0.99)) };
};

export function buildReport(name: string, target: string, client: Client, res: RunResult): Report {
  const byKey = new Map<string, number[]>();
  for (const s of client.samples) {
    const l = byKey.get(s.key);
    if (l) l.push(s.ms);
    else byKey.set(s.key, [s.ms]);
  }
  const violations: string[] = [];
  const api: DataItem[] = [];
  for (const [key, ms] of [...byKey].sort()) {
    const [Resource, Subresource, Verb, Scope] = key.split('|') as [string, string, string, string];
    const data = perc(ms);
    const slo = sloOf(Verb, Scope);
    const slow = slo === undefined ? 0 : ms.filter((m) => m > slo).length;
    api.push({ data, unit: 'ms', labels: { Resource, Subresource, Verb, Scope, Count: String(ms.length), SlowCount: String(slow) } });
    if (slo !== undefined && data.Perc99 > slo)
      violations.push(
        `API call ${Verb} ${Resource}${Subresource ? `/${Subresource}` : ''} (${Scope}) p99 ${data.Perc99.toFixed(0)} ms > ${slo} ms`,
      );
  }
  // As clusterloader2's density: PodStartupLatency over the latency pods (created one by one
  // once the saturation pods run), SaturationPodStartupLatency over the saturation pods.
  const measured = res.tracker.hasGroup('latency') ? 'latency' : undefined;
  const items = (tr: Record<string, number[]>): DataItem[] =>
    Object.entries(tr).map(([Metric, ms]) => ({ data: perc(ms), unit: 'ms', labels: { Metric, Count: String(ms.length) } }));
  const tr = res.tracker.transitions(measured);
  const startup = items(tr);
  const e2e = startup.find((d) => d.labels.Metric === 'pod_startup');
  if (e2e && (tr.pod_startup?.length ?? 0) > 0 && e2e.data.Perc99 > POD_STARTUP_SLO_MS)
    violations.push(`pod startup p99 ${e2e.data.Perc99.toFixed(0)} ms > ${POD_STARTUP_SLO_MS} ms`);
  let saturation: Report['SaturationPodStartupLatency'];
  if (res.tracker.hasGroup('saturation')) {
    const st = res.tracker.transitions('saturation');
    const n = st.pod_startup?.length ?? 0;
    const thresholdMs = (n / 20 + 180) * 1000;
    saturation = { version: '1.0', dataItems: items(st), thresholdMs };
    const p99 = saturation.dataItems.find((d) => d.labels.Metric === 'pod_startup')?.data.Perc99 ?? 0;
    if (n > 0 && p99 > thresholdMs) violations.push(`saturation pod startup p99 ${p99.toFixed(0)} ms > ${thresholdMs.toFixed(0)} ms`);
  }
  for (const p of res.phases) if (p.error) violations.push(`phase ${p.name} failed: ${p.error}`);
  if (res.leases?.failures) violations.push(`${res.leases.failures} lease calls (creates, renewals) failed`);
  let total = 0;
  let throttled = 0;
  let errors = 0;
  for (const c of client.counts.values()) {
    total += c.total;
    throttled += c.throttled;
    errors += c.errors;
  }
  return {
    name,
    target,
    started: res.started,
    durationMs: Math.round(res.durationMs),
    phases: res.phases,
    APIResponsivenessPrometheus: { version: 'v1', dataItems: api },
    PodStartupLatency: { version: '1.0', dataItems: startup },
    SaturationPodStartupLatency: saturation,
    WatchLatency: {
      version: '1.0',
      dataItems: [
        {
          data: perc(res.tracker.watchLatencies),
          unit: 'ms',
          labels: { Metric: 'watch_latency', Count: String(res.tracker.watchLatencies.length) },
        },
      ],
    },
    requests: { total, throttled, errors },
    watchers: res.watchers,
    leases: res.leases,
    customResources: res.customResources,
    pods: res.tracker.pods.size,
    resources: resources(res.series),
    series: res.series,
    podStartupCdf: res.tracker.startupSorted(measured).map((v) => Math.round(v * 10) / 10),
    slo: { ok: violations.length === 0, violations },
  };
}

function resources(series: Sample[]): Report['resources'] {
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : undefined);
  const cpu = series.flatMap((s) => (s.cpu === undefined ? [] : [s.cpu]));
  const rss = series.flatMap((s) => (s.rss === undefined ? [] : [s.rss]));
  return {
    serverCpuMean: mean(cpu),
    serverCpuMax: cpu.length ? Math.max(...cpu) : undefined,
    serverRssMax: rss.length ? Math.max(...rss) : undefined,
    harnessCpuMean: mean(series.map((s) => s.harnessCpu)) ?? 0,
  };
}

function uplotAssets(): { js: string; css: string } {
  const dir = path.dirname(Bun.resolveSync('uplot/package.json', import.meta.dir));
  return {
    js: fs.readFileSync(path.join(dir, 'dist/uPlot.iife.min.js'), 'utf8'),
    css: fs.readFileSync(path.join(dir, 'dist/uPlot.min.css'), 'utf8'),
  };
}

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

function table(reports: Report[]): string {
  const keys = new Map<string, string[]>();
  reports.forEach((r, i) => {
    for (const d of r.APIResponsivenessPrometheus.dataItems) {
      const l = d.labels;
      const k = `${l.Verb} ${l.Resource}${l.Subresource ? `/${l.Subresource}` : ''} ${l.Scope}`;
      const row = keys.get(k) ?? reports.map(() => '<td colspan=4>–</td>');
      const slo = sloOf(l.Verb!, l.Scope!);
      const bad = slo !== undefined && d.data.Perc99 > slo;
      row[i] =
        `<td>${l.Count}</td><td>${d.data.Perc50.toFixed(1)}</td><td>${d.data.Perc90.toFixed(1)}</td><td class="${bad ? 'bad' : ''}">${d.data.Perc99.toFixed(1)}${slo ? ` / ${slo}` : ''}</td>`;
      keys.set(k, row);
    }
  });
  const head = reports.map((r) => `<th colspan=4>${esc(r.name)} (${esc(r.target)})</th>`).join('');
  const sub = reports.map(() => '<th>count</th><th>p50</th><th>p90</th><th>p99 / SLO ms</th>').join('');
  const rows = [...keys]
    .sort()
    .map(([k, cells]) => `<tr><td>${esc(k)}</td>${cells.join('')}</tr>`)
    .join('\n');
  return `<table><tr><th rowspan=2>API call</th>${head}</tr><tr>${sub}</tr>${rows}</table>`;
}

function summary(r: Report): string {
  const pod = r.PodStartupLatency.dataItems
    .map(
      (d) =>
        `<tr><td>${d.labels.Metric}</td><td>${d.data.Perc50.toFixed(1)}</td><td>${d.data.Perc90.toFixed(1)}</td><td>${d.data.Perc99.toFixed(1)}</td></tr>`,
    )
    .join('');
  const w = r.WatchLatency.dataItems[0]!;
  return `<div class="run"><h2>${esc(r.name)} — ${esc(r.target)} <span class="${r.slo.ok ? 'ok' : 'bad'}">${r.slo.ok ? 'SLOs met' : 'SLOs missed'}</span></h2>
<p>started ${esc(r.started)}, ${(r.durationMs / 1000).toFixed(1)} s, ${r.pods} pods, ${r.requests.total} requests (${r.requests.throttled} × 429, ${r.requests.errors} errors), ${r.watchers.count} watchers (${r.watchers.events} events); harness CPU ${(r.resources.harnessCpuMean * 100).toFixed(0)}%${r.resources.serverRssMax ? `, server CPU mean ${((r.resources.serverCpuMean ?? 0) * 100).toFixed(0)}%, RSS max ${(r.resources.serverRssMax / 2 ** 20).toFixed(0)} MiB` : ''}; watch latency p50/p99 ${w.labels.Count === '0' ? 'n/a (no write of the harness watched)' : `${w.data.Perc50.toFixed(1)}/${w.data.Perc99.toFixed(1)} ms`}</p>
${extras(r)}
${r.slo.violations.length ? `<ul class="bad">${r.slo.violations.map((v) => `<li>${esc(v)}</li>`).join('')}</ul>` : ''}
<table><tr><th>pod startup (ms)</th><th>p50</th><th>p90</th><th>p99</th></tr>${pod}</table>
<table><tr><th>phase</th><th>start s</th><th>duration s</th><th>objects</th><th>error</th></tr>${r.phases.map((p) => `<tr><td>${esc(p.name)}</td><td>${(p.startMs / 1000).toFixed(1)}</td><td>${((p.endMs - p.startMs) / 1000).toFixed(1)}</td><td>${p.objects}</td><td class="bad">${esc(p.error ?? '')}</td></tr>`).join('')}</table></div>`;
}

/** Lease traffic and custom resources, when the run made any (older reports have neither). */
function extras(r: Report): string {
  const parts: string[] = [];
  if (r.leases)
    parts.push(
      `node leases: ${r.leases.leases} leases, ${r.leases.renewals} renewals (${r.leases.conflicts} conflicts, ${r.leases.failures} failures)`,
    );
  const crs = Object.entries(r.customResources ?? {});
  if (crs.length) parts.push(`custom resources: ${crs.map(([crd, n]) => `${n} ${esc(crd)}`).join(', ')}`);
  return parts.length ? `<p>${parts.join('; ')}</p>` : '';
}

/** One self-contained HTML page for one run, or two side by side (--compare). */
export function renderHtml(reports: Report[]): string {
  const { js, css } = uplotAssets();
  const data = JSON.stringify(reports.map((r) => ({ name: r.name, series: r.series, cdf: r.podStartupCdf }))).replace(/</g, '\\u003c');
  return `<!doctype html><html><head><meta charset="utf-8"><title>svc load report: ${esc(reports.map((r) => r.name).join(' vs '))}</title>
<style>${css}
body{font:14px system-ui,sans-serif;margin:1em 2em}table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td:first-child{text-align:left}
.bad{color:#b00}.ok{color:#070}.runs{display:flex;gap:2em;flex-wrap:wrap}.charts{display:flex;flex-wrap:wrap;gap:1em}
</style></head><body>
<h1>Load report${reports.length > 1 ? ' (compare)' : ''}</h1>
<div class="runs">${reports.map(summary).join('')}</div>
<h2>API call latency</h2>${table(reports)}
<h2>Over time</h2><div class="charts" id="charts"></div>
<script>${js}</script>
<script>
const runs = ${data};
const colors = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd'];
function chart(title, yLabel, pick, xKey) {
  const el = document.createElement('div');
  el.className = 'chart';
  document.getElementById('charts').appendChild(el);
  // uPlot wants one shared x: merge the runs' x values, null where a run has no point.
  const xs = [...new Set(runs.flatMap((r) => pick(r).x))].sort((a, b) => a - b);
  const cols = [xs];
  const series = [{ label: xKey }];
  runs.forEach((r, i) => {
    const p = pick(r);
    for (const [j, [name, ys]] of Object.entries(p.ys).entries()) {
      const at = new Map(p.x.map((x, k) => [x, ys[k]]));
      cols.push(xs.map((x) => (at.has(x) ? at.get(x) : null)));
      series.push({ label: (runs.length > 1 ? r.name + ' ' : '') + name, stroke: colors[(i * 2 + j) % colors.length], dash: j ? [5, 3] : undefined, spanGaps: true, width: 1.5 });
    }
  });
  new uPlot({ title, width: 560, height: 260, scales: { x: { time: false } }, axes: [{ label: xKey }, { label: yLabel }], series }, cols, el);
}
const s = (r, f) => r.series.map(f);
chart('API call latency (all calls, per second)', 'ms', (r) => ({ x: s(r, (p) => p.t), ys: { p50: s(r, (p) => p.p50), p99: s(r, (p) => p.p99) } }), 's');
chart('Throughput', 'requests/s', (r) => ({ x: s(r, (p) => p.t), ys: { 'req/s': s(r, (p) => p.requests) } }), 's');
chart('Pods Ready', 'pods', (r) => ({ x: s(r, (p) => p.t), ys: { ready: s(r, (p) => p.podsReady) } }), 's');
chart('CPU', '% of a core', (r) => ({ x: s(r, (p) => p.t), ys: { server: s(r, (p) => (p.cpu == null ? null : p.cpu * 100)), harness: s(r, (p) => (p.harnessCpu == null ? null : p.harnessCpu * 100)) } }), 's');
chart('Server RSS', 'MiB', (r) => ({ x: s(r, (p) => p.t), ys: { rss: s(r, (p) => (p.rss == null ? null : p.rss / 1048576)) } }), 's');
chart('Pod startup CDF', 'fraction of pods', (r) => ({ x: r.cdf, ys: { cdf: r.cdf.map((_, i) => (i + 1) / r.cdf.length) } }), 'ms');
</script></body></html>
`;
}
