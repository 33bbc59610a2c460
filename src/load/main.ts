/**
 * npm run load -- <scenario|file.yaml> [flags]      run a scenario, write report.json and report.html
 * npm run load -- --compare a.json b.json [--out=x.html]
 *
 * Exit code: 0 when every SLO held and every phase finished, 1 when not, 2 on a usage or scenario error.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client, readKubeconfig, type Target, TokenBucket } from './client';
import { type Outcome, RunPublisher } from './publish';
import { buildReport, type Report, renderHtml } from './report';
import { runScenario } from './run';
import { builtin, parseScenario, type Scenario, ScenarioError } from './scenario';
import { type ChildServer, metricsSampler, procSampler, startChild } from './target';

const HELP = `usage: npm run load -- <density|load|informers|churn|file.yaml> [flags]
       npm run load -- --compare a.json b.json [--out=compare.html]

Built-in scenarios and their size flags:
  density     clusterloader2 density: per-node watchers; saturation Deployments (one per namespace of 100 nodes)
              of --pods-per-node (30) × --nodes pods, wait Ready; then --latency-pods (max(500, nodes))
              one-pod Deployments at --latency-qps (5)/s, wait Ready; PodStartupLatency measures those
  load        ConfigMaps, Secrets, Services, Deployments (--deployments), wait Ready, delete all
  informers   --watchers (= --nodes) list+watch clients, one per node, while pods are created
  churn       --writers (10) patch pods --patches times while --watchers (10) follow
Size flags: --nodes=5 --pods-per-node=30 --namespaces=N --replicas=N --deployments=N --watchers=N
            --writers=N --patches=N --create-qps=0 (objects/s per phase, 0: as the client allows) --timeout=600 (s per wait)
Target:
  (default)           this server as a child process on a temporary data dir with --simulated-nodes=<nodes>
  --etcd-servers=URL  passed to the child server (instead of the embedded store)
  --server-arg=FLAG   any other flag for the child server (repeatable)
  --kubeconfig=FILE   any cluster: its current context's server, CA, token or client certificate;
                      the harness creates Nodes sim-node-<i> annotated sim.svc.io/managed=true and
                      deletes its namespaces (load-<i>) at the end unless --keep-objects
  --keep-data         keep the child server's data dir
  --keep-objects      with --kubeconfig: leave the run's namespaces, leases and CRDs on the cluster
  --no-publish        with --kubeconfig on this server: do not show the run on its dashboard (by default
                      the run's progress, figures and outcome go to ConfigMap kube-system/load-run-<id>)
Node lease traffic (any scenario, any target; independent of simulated nodes):
  --leases=N          N Leases kube-node-lease/load-node-<i> renewed (PUT) in the background all run long,
  --lease-interval=10 every so many seconds, as kubelets renew theirs (each lease stands for a kubelet
                      with its own client: lease calls are not held by --qps/--burst)
Client (client-go's token bucket; the defaults are clusterloader2-like, not client-go's 5/10):
  --qps=100 --burst=200 --inflight=100 (requests in flight per phase); --qps=0: no client-side limit
Output: --out=DIR (default load-<scenario>-<time>/): report.json (APIResponsivenessPrometheus,
  PodStartupLatency shapes), the same two measurements in files named as clusterloader2 names them
  (APIResponsivenessPrometheus_<name>_<time>.json, PodStartupLatency_PodStartupLatency_<name>_<time>.json),
  report.html (self-contained, uPlot charts). --quiet: no progress lines.`;

function parseArgs(argv: string[]): { pos: string[]; flags: Map<string, string[]> } {
  const pos: string[] = [];
  const flags = new Map<string, string[]>();
  for (const a of argv) {
    if (!a.startsWith('--')) {
      pos.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const k = eq < 0 ? a.slice(2) : a.slice(2, eq);
    const v = eq < 0 ? 'true' : a.slice(eq + 1);
    flags.set(k, [...(flags.get(k) ?? []), v]);
  }
  return { pos, flags };
}

const SIZE_FLAGS = [
  'nodes',
  'pods-per-node',
  'namespaces',
  'replicas',
  'deployments',
  'watchers',
  'writers',
  'patches',
  'create-qps',
  'latency-pods',
  'latency-qps',
  'timeout',
  'leases',
  'lease-interval',
];
const OTHER_FLAGS = [
  'qps',
  'burst',
  'inflight',
  'kubeconfig',
  'etcd-servers',
  'server-arg',
  'out',
  'quiet',
  'compare',
  'help',
  'keep-data',
  'keep-objects',
  'no-publish',
];

export async function main(argv: string[]): Promise<number> {
  const { pos, flags } = parseArgs(argv);
  const one = (k: string) => flags.get(k)?.at(-1);
  if (flags.has('help') || (pos.length === 0 && !flags.has('compare'))) {
    process.stdout.write(`${HELP}\n`);
    return flags.has('help') ? 0 : 2;
  }
  for (const k of flags.keys())
    if (!SIZE_FLAGS.includes(k) && !OTHER_FLAGS.includes(k)) throw new ScenarioError(`unknown flag --${k} (see --help)`);
  if (flags.has('compare')) {
    if (pos.length !== 2) throw new ScenarioError('--compare takes two report.json files');
    const reports = pos.map((f) => JSON.parse(fs.readFileSync(f, 'utf8')) as Report);
    const out = one('out') ?? 'compare.html';
    fs.writeFileSync(out, renderHtml(reports));
    process.stdout.write(`${out}\n`);
    return 0;
  }
  const sizes: Record<string, number> = {};
  for (const k of SIZE_FLAGS) {
    const v = one(k);
    if (v === undefined) continue;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new ScenarioError(`--${k}: not a number: ${v}`);
    sizes[k] = n;
  }
  const name = pos[0]!;
  let sc: Scenario | undefined = builtin(name, sizes);
  if (!sc) {
    if (!fs.existsSync(name))
      throw new ScenarioError(`no built-in scenario ${name} and no file ${name} (built-ins: density, load, informers, churn)`);
    sc = parseScenario(fs.readFileSync(name, 'utf8'), name);
    if (sizes.nodes !== undefined) sc.nodes = sizes.nodes;
  }
  if (sizes['lease-interval'] !== undefined && !(sizes['lease-interval'] > 0))
    throw new ScenarioError('--lease-interval: must be > 0 (seconds)');
  if (sizes.leases) {
    // Renewed from the start of the run to its end, alongside every other phase.
    sc.phases.unshift({ name: 'node-leases', line: 0, leases: { count: sizes.leases, interval: sizes['lease-interval'] ?? 10 } });
  }
  const quiet = flags.has('quiet');
  const tty = process.stderr.isTTY;
  let transientShown = false;
  const log = (line: string, transient = false) => {
    if (quiet) return;
    if (tty && transient) {
      process.stderr.write(`\r\x1b[2K${line}`);
      transientShown = true;
      return;
    }
    if (tty && transientShown) process.stderr.write('\r\x1b[2K');
    transientShown = false;
    process.stderr.write(`${line}\n`);
  };

  let child: ChildServer | undefined;
  let target: Target;
  let targetName: string;
  const kubeconfig = one('kubeconfig');
  if (kubeconfig) {
    target = readKubeconfig(kubeconfig);
    targetName = target.url;
  } else {
    const serverArgs = [...(flags.get('server-arg') ?? [])];
    const etcd = one('etcd-servers');
    if (etcd) serverArgs.push(`--etcd-servers=${etcd}`);
    log(`starting the server with ${sc.nodes} simulated nodes ${serverArgs.join(' ')}`);
    child = await startChild({ nodes: sc.nodes, serverArgs, keepData: flags.has('keep-data') });
    // Interrupted: the child server and its data dir go too.
    const started = child;
    for (const sig of ['SIGINT', 'SIGTERM'] as const)
      process.once(sig, () => {
        log(`${sig}: stopping the server`);
        void started.stop().finally(() => process.exit(130));
      });
    target = child.target;
    targetName = `svc-apiserver (child, ${etcd ? 'etcd' : 'embedded store'})`;
  }
  const runId = `${sc.name}-${Date.now().toString(36)}`
    .replace(/[^a-z0-9-]/gi, '-')
    .toLowerCase()
    .slice(0, 63);
  const client = new Client(target, new TokenBucket(Number(one('qps') ?? 100), Number(one('burst') ?? 200)));
  // The dashboard of the server under test shows the run (a child server goes at the end: not it).
  // Its own client: its calls are not the run's (not in the report, not held by --qps).
  const publisher =
    kubeconfig && !flags.has('no-publish')
      ? await RunPublisher.open(new Client(target, new TokenBucket(0, 0)), runId, sc.name, (l) => log(l))
      : undefined;
  if (publisher)
    for (const sig of ['SIGINT', 'SIGTERM'] as const)
      process.once(sig, () => {
        void publisher.finish('stopped', {}).finally(() => process.exit(130));
      });
  let report: Report;
  try {
    const res = await runScenario(sc, {
      onSample: publisher ? (progress, figures) => publisher.update(progress, figures) : undefined,
      client,
      runId,
      sampleProc: child ? procSampler(child.pid) : metricsSampler(target),
      createNodes: !child,
      // A child server goes with its data dir; another cluster gets its namespaces deleted.
      cleanup: !child && !flags.has('keep-objects'),
      log,
      inflight: Number(one('inflight') ?? 100),
    });
    report = buildReport(sc.name, targetName, client, res);
  } catch (e) {
    await publisher?.finish('failed', {});
    throw e;
  } finally {
    await child?.stop();
  }
  if (publisher) {
    const failedPhase = report.phases.some((p) => p.error !== undefined);
    const outcome: Outcome = report.slo.ok && !failedPhase ? 'passed' : 'failed';
    const e2e = report.PodStartupLatency.dataItems.find((d) => d.labels.Metric === 'pod_startup')?.data;
    await publisher.finish(outcome, {
      'duration s': report.durationMs / 1000,
      requests: report.requests.total,
      'requests throttled': report.requests.throttled,
      'request errors': report.requests.errors,
      'API p99 ms (max)': Math.max(0, ...report.APIResponsivenessPrometheus.dataItems.map((d) => d.data.Perc99)),
      pods: report.pods,
      'pod startup p50 ms': report.pods > 0 ? e2e?.Perc50 : undefined,
      'pod startup p99 ms': report.pods > 0 ? e2e?.Perc99 : undefined,
      'SLO violations': report.slo.violations.length,
      'failed phases': report.phases.filter((p) => p.error !== undefined).length,
    });
  }
  const out = one('out') ?? `load-${sc.name}-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'report.json'), `${JSON.stringify(report, null, 1)}\n`);
  fs.writeFileSync(path.join(out, 'report.html'), renderHtml([report]));
  // Also one file per measurement, named as clusterloader2 names its summaries
  // (<summary>_<test>_<RFC 3339 time>.json), so perfdash-like tooling finds them.
  const stamp = new Date(Date.parse(report.started)).toISOString().replace(/\.\d{3}Z$/, 'Z');
  for (const [summary, body] of [
    ['APIResponsivenessPrometheus', report.APIResponsivenessPrometheus],
    ['PodStartupLatency_PodStartupLatency', report.PodStartupLatency],
    ...(report.SaturationPodStartupLatency
      ? ([['PodStartupLatency_SaturationPodStartupLatency', report.SaturationPodStartupLatency]] as const)
      : []),
  ] as const)
    fs.writeFileSync(path.join(out, `${summary}_${sc.name}_${stamp}.json`), `${JSON.stringify(body, null, 2)}\n`);
  const e2e = report.PodStartupLatency.dataItems.find((d) => d.labels.Metric === 'pod_startup')?.data;
  log(
    `${report.slo.ok ? 'SLOs met' : 'SLOs MISSED'}: ${report.pods} pods, ${report.requests.total} requests (${report.requests.throttled} × 429), pod startup p50/p99 ${report.pods > 0 && e2e ? `${e2e.Perc50.toFixed(0)}/${e2e.Perc99.toFixed(0)} ms` : 'n/a (no pods)'}${report.leases ? `, ${report.leases.renewals} lease renewals` : ''}, in ${(report.durationMs / 1000).toFixed(1)} s`,
  );
  const sat = report.SaturationPodStartupLatency;
  const satE2e = sat?.dataItems.find((d) => d.labels.Metric === 'pod_startup');
  if (sat && satE2e)
    log(
      `  (latency pods: ${satE2e ? report.PodStartupLatency.dataItems.find((d) => d.labels.Metric === 'pod_startup')?.labels.Count : 0}; saturation pods: ${satE2e.labels.Count}, startup p50/p99 ${satE2e.data.Perc50.toFixed(0)}/${satE2e.data.Perc99.toFixed(0)} ms, threshold ${(sat.thresholdMs / 1000).toFixed(0)} s)`,
    );
  for (const v of report.slo.violations) log(`  ${v}`);
  log(`report: ${path.join(out, 'report.json')} ${path.join(out, 'report.html')}`);
  return report.slo.ok ? 0 : 1;
}

/**
 * Bun's fetch runs at most BUN_CONFIG_MAX_HTTP_REQUESTS (256) requests at once, and every watcher
 * holds one for the run: without a higher limit 1,000 per-node watchers would starve the writes.
 * The variable is read at start, so the harness re-runs itself with it set.
 */
async function withFetchLimit(): Promise<number | undefined> {
  if (process.env.BUN_CONFIG_MAX_HTTP_REQUESTS) return undefined;
  const p = Bun.spawn([process.execPath, ...process.argv.slice(1)], {
    env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: '65336' },
    stdio: ['inherit', 'inherit', 'inherit'],
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => p.kill(sig));
  return p.exited;
}

if (import.meta.main) {
  const code = await withFetchLimit();
  if (code !== undefined) process.exit(code);
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      process.stderr.write(`Error: ${e instanceof ScenarioError ? e.message : ((e as Error).stack ?? String(e))}\n`);
      process.exit(2);
    },
  );
}
