/**
 * The load harness (src/load, issue 39) end to end: `bun src/load/main.ts` as a user runs it,
 * against its own child server and against another server through a kubeconfig; the reports it
 * writes, checked against what the test observes; its HTML in headless Chromium.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TokenBucket } from '../src/load/client';
import { parseScenario } from '../src/load/scenario';
import { needs } from './helpers/needs';
import { type Server, startServer } from './helpers/server';

const ROOT = path.resolve(import.meta.dir, '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-load-test-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function load(args: string[]): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const t = performance.now();
  const p = Bun.spawn([process.execPath, path.join(ROOT, 'src/load/main.ts'), ...args], { cwd: tmp, stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr, ms: performance.now() - t };
}

/** A run's exit code with its report's violations (or its stderr when it wrote no report), for a failure that says why. */
function outcome(run: { code: number; stderr: string }, out: string): { code: number; violations: string[] } {
  const file = path.join(out, 'report.json');
  if (!fs.existsSync(file)) return { code: run.code, violations: [run.stderr.slice(-2000)] };
  return { code: run.code, violations: JSON.parse(fs.readFileSync(file, 'utf8')).slo.violations };
}

const item = (r: any, verb: string, resource: string) =>
  r.APIResponsivenessPrometheus.dataItems.find((d: any) => d.labels.Verb === verb && d.labels.Resource === resource);

const density = path.join(tmp, 'density');
let densityRun: Awaited<ReturnType<typeof load>>;
beforeAll(async () => {
  densityRun = await load([
    'density',
    '--nodes=5',
    '--pods-per-node=10',
    '--replicas=10',
    '--create-qps=50',
    '--latency-pods=10',
    '--latency-qps=20',
    `--out=${density}`,
  ]);
}, 60_000);

test('density at 5 nodes × 10 pods and 10 latency pods: exit 0, latencies positive, ordered and within the run', () => {
  expect(densityRun.stderr).toContain('SLOs met');
  expect(densityRun.code).toBe(0);
  // Not a TTY here: plain progress lines, no carriage returns.
  expect(densityRun.stderr).toContain('phase pods-ready: done');
  expect(densityRun.stderr).toContain('phase latency-pods-ready: done');
  expect(densityRun.stderr).not.toContain('\r');
  const r = JSON.parse(fs.readFileSync(path.join(density, 'report.json'), 'utf8'));
  expect(r.pods).toBe(60);
  // As clusterloader2: PodStartupLatency over the 10 latency pods, the 50 saturation pods apart,
  // against pods / 20 + 180 s.
  const counts = (items: any[]) => Object.fromEntries(items.map((d: any) => [d.labels.Metric, Number(d.labels.Count)]));
  expect(counts(r.PodStartupLatency.dataItems).pod_startup).toBe(10);
  expect(counts(r.SaturationPodStartupLatency.dataItems).pod_startup).toBe(50);
  expect(r.SaturationPodStartupLatency.thresholdMs).toBe((50 / 20 + 180) * 1000);
  expect(fs.readdirSync(density).some((f) => f.startsWith('PodStartupLatency_SaturationPodStartupLatency_density_'))).toBe(true);
  expect(r.slo).toEqual({ ok: true, violations: [] });
  const startup = Object.fromEntries(r.PodStartupLatency.dataItems.map((d: any) => [d.labels.Metric, d.data]));
  const e2e = startup.pod_startup;
  expect(e2e.Perc50).toBeGreaterThan(0);
  expect(e2e.Perc50).toBeLessThanOrEqual(e2e.Perc90);
  expect(e2e.Perc90).toBeLessThanOrEqual(e2e.Perc99);
  // A pod started within the run the test timed, and its parts are no longer than the whole.
  expect(e2e.Perc99).toBeLessThan(densityRun.ms);
  expect(startup.create_to_schedule.Perc50).toBeLessThanOrEqual(e2e.Perc99);
  expect(r.durationMs).toBeLessThan(densityRun.ms);
  // 5 Deployments of 10 and 10 of one, created once and deleted once, each call timed.
  const post = item(r, 'POST', 'deployments');
  expect(post.labels).toMatchObject({ Scope: 'namespace', Count: '15', SlowCount: '0' });
  expect(post.data.Perc50).toBeGreaterThan(0);
  expect(item(r, 'DELETE', 'deployments').labels.Count).toBe('15');
  // 5 per-node watchers listed their node's pods first (list then watch).
  expect(item(r, 'LIST', 'pods').labels.Count).toBe('6'); // + the harness's own pod informer
  expect(r.watchers.count).toBe(5);
  expect(r.watchers.events).toBeGreaterThanOrEqual(50);
  const counted = r.APIResponsivenessPrometheus.dataItems.reduce((n: number, d: any) => n + Number(d.labels.Count), 0);
  expect(r.requests.total).toBeGreaterThanOrEqual(counted);
  expect(r.requests.throttled).toBe(0);
  // The child server's CPU and RSS were sampled.
  expect(r.series.some((s: any) => s.rss > 10 * 2 ** 20)).toBe(true);
  expect(r.resources.serverRssMax).toBeGreaterThan(10 * 2 ** 20);
  expect(r.resources.harnessCpuMean).toBeGreaterThan(0);
});

test("load, informers and churn at a small size: the counts in their reports are the scenario's", async () => {
  const out = (n: string) => path.join(tmp, n);
  // --timeout=10: a wait that hangs fails its phase, and the report says which (see outcome()).
  const ld = await load(['load', '--nodes=2', '--pods-per-node=10', '--deployments=4', '--timeout=10', '--quiet', `--out=${out('load')}`]);
  expect(outcome(ld, out('load'))).toEqual({ code: 0, violations: [] });
  const l = JSON.parse(fs.readFileSync(path.join(out('load'), 'report.json'), 'utf8'));
  expect(l.pods).toBe(20);
  for (const res of ['deployments', 'services', 'configmaps', 'secrets']) {
    expect(item(l, 'POST', res).labels.Count).toBe('4');
    expect(item(l, 'DELETE', res).labels.Count).toBe('4');
  }
  // Scaled from 5 to 2 replicas each, through the scale subresource.
  expect(item(l, 'PATCH', 'deployments').labels).toMatchObject({ Subresource: 'scale', Count: '4' });
  expect(l.phases.find((p: any) => p.name === 'scaled-pods-ready').error).toBeUndefined();

  const inf = await load(['informers', '--nodes=3', '--pods-per-node=4', '--timeout=10', '--quiet', `--out=${out('informers')}`]);
  expect(outcome(inf, out('informers'))).toEqual({ code: 0, violations: [] });
  const i = JSON.parse(fs.readFileSync(path.join(out('informers'), 'report.json'), 'utf8'));
  expect(i.pods).toBe(12);
  expect(i.watchers.count).toBe(3);
  // Each node's watcher saw its pods bound (ADDED to its selector) and Ready before the deletes
  // (whose events may come after the run stops its watchers): at least 2 events per pod.
  expect(i.watchers.events).toBeGreaterThanOrEqual(24);
  expect(item(i, 'POST', 'pods').labels.Count).toBe('12');

  const ch = await load([
    'churn',
    '--nodes=2',
    '--pods-per-node=5',
    '--patches=40',
    '--writers=4',
    '--watchers=3',
    '--timeout=10',
    '--quiet',
    `--out=${out('churn')}`,
  ]);
  expect(outcome(ch, out('churn'))).toEqual({ code: 0, violations: [] });
  const c = JSON.parse(fs.readFileSync(path.join(out('churn'), 'report.json'), 'utf8'));
  expect(item(c, 'PATCH', 'pods').labels.Count).toBe('40');
  // 10 creates and 40 patches, each seen on the harness's watch.
  expect(c.WatchLatency.dataItems[0].labels.Count).toBe('50');
  expect(c.watchers.count).toBe(3);
  expect(c.watchers.events).toBeGreaterThanOrEqual(3 * 40);
}, 40_000);

let external: Server;
const externalOut = path.join(tmp, 'external');
test('a scenario file against another server through its kubeconfig', async () => {
  external = await startServer({ args: ['--simulated-nodes=0'] });
  try {
    const file = path.join(tmp, 'pods.yaml');
    fs.writeFileSync(
      file,
      `name: pods-ext
nodes: 2
phases:
- name: ns
  create: { kind: Namespace, count: 1 }
- name: configmaps
  create: { kind: ConfigMap, count: 4, qps: 50 }
- name: churn-configmaps
  churn: { kind: ConfigMap, writers: 2, watchers: 1, patches: 8 }
- name: a-fault
  faults:
  - apiVersion: rbac.authorization.k8s.io/v1
    kind: ClusterRole
    metadata: { name: svc-load-fault-marker, annotations: { applied: "yes" } }
    rules: []
- name: pods
  create: { kind: Pod, count: 6, qps: 100 }
- name: ready
  wait: { podsReady: 6, timeout: 30 }
- name: churn
  churn: { writers: 2, watchers: 1, patches: 12 }
- name: delete-pods
  delete: { kind: Pod }
`,
    );
    const run = await load([file, `--kubeconfig=${external.kubeconfig}`, '--qps=50', '--burst=10', `--out=${externalOut}`]);
    expect(run.stderr).toContain('SLOs met');
    expect(run.code).toBe(0);
    const r = JSON.parse(fs.readFileSync(path.join(externalOut, 'report.json'), 'utf8'));
    expect(r.target).toBe(external.url);
    expect(r.pods).toBe(6);
    // What the report says it did is on the server: the simulated nodes it made, the ConfigMaps.
    const nodes = await external.json('GET', '/api/v1/nodes');
    expect(nodes.body.items.map((n: any) => n.metadata.name).sort()).toEqual(['sim-node-0', 'sim-node-1']);
    expect(nodes.body.items[0].metadata.annotations['sim.svc.io/managed']).toBe('true');
    expect(item(r, 'POST', 'configmaps').labels.Count).toBe('4');
    // The faults of a phase are applied as they are, their resource found through discovery.
    const marker = await external.json('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/svc-load-fault-marker');
    expect(marker.body.metadata.annotations).toEqual({ applied: 'yes' });
    // On another cluster the harness deletes the namespaces it made when it ends.
    const ns = await external.json('GET', '/api/v1/namespaces/load-0');
    expect(ns.status === 404 || ns.body.status.phase === 'Terminating').toBe(true);
    expect(item(r, 'DELETE', 'namespaces').labels.Count).toBe('1');
    expect(item(r, 'PATCH', 'pods').labels).toMatchObject({ Count: '12', Scope: 'resource' });
    // A built-in kind's churn patches the objects an earlier phase made, watched like the pods.
    expect(item(r, 'PATCH', 'configmaps').labels).toMatchObject({ Count: '8', Scope: 'resource' });
    // Each patch and each pod create was seen on the harness's watch.
    const w = r.WatchLatency.dataItems[0];
    expect(Number(w.labels.Count)).toBe(18 + 8);
    expect(w.data.Perc50).toBeGreaterThan(0);
    // No CPU/RSS for a server that is not the harness's child.
    expect(r.series.every((s: any) => s.rss === undefined || s.rss === null)).toBe(true);
  } finally {
    await external.stop();
  }
}, 40_000);

test('a malformed scenario names its line; so does a field error', async () => {
  const bad = path.join(tmp, 'bad.yaml');
  fs.writeFileSync(bad, 'name: x\nphases:\n  - name: a\n    create: { kind: Pod, count: 2\n  - name: b\n');
  const r = await load([bad]);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/bad\.yaml:[45]: malformed YAML/);
  expect(() => parseScenario('name: x\nphases:\n- name: a\n  create:\n    kind: Potato\n', 'f.yaml')).toThrow(
    'f.yaml:5: kind: must be one of',
  );
  expect(() => parseScenario('name: x\nphases:\n- name: a\n  sleep: 1\n  crate: {}\n', 'f.yaml')).toThrow(
    'f.yaml:5: phases[0]: unknown field "crate"',
  );
  expect(() => parseScenario('name: x\nphases:\n- name: a\n  faults:\n  - { name: no-kind }\n', 'f.yaml')).toThrow(
    'f.yaml:5: a fault is an API object',
  );
  const ok = parseScenario(
    'name: x\nphases:\n- name: f\n  faults:\n  - apiVersion: faults.svc.io/v1alpha1\n    kind: FaultInjection\n    metadata: { name: f1 }\n',
  );
  expect(ok.phases[0]!.faults![0]).toMatchObject({ kind: 'FaultInjection', metadata: { name: 'f1' } });
  // The example shipped with the harness parses, every action in it.
  const exFile = path.join(ROOT, 'src/load/scenarios/example.yaml');
  const ex = parseScenario(fs.readFileSync(exFile, 'utf8'), exFile);
  expect(ex.nodes).toBe(4);
  expect(ex.phases.map((p) => Object.keys(p).find((k) => !['name', 'line'].includes(k)))).toEqual([
    'create',
    'watchers',
    'leases',
    'create',
    'customResources',
    'create',
    'create',
    'wait',
    'wait',
    'scale',
    'wait',
    'churn',
    'churn',
    'sleep',
    'delete',
    'delete',
    'delete',
    'delete',
  ]);
  expect(ex.phases[4]!.customResources).toMatchObject({ count: 10, crd: { name: 'widgets.load.svc.io', kind: 'Widget' } });
  const unknown = await load(['nonesuch']);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain('no built-in scenario nonesuch');
});

test('a missed SLO or a failed phase: exit code 1, and the report says which', async () => {
  const file = path.join(tmp, 'timeout.yaml');
  fs.writeFileSync(file, 'name: never-ready\nnodes: 1\nphases:\n- name: wait\n  wait: { podsReady: 3, timeout: 1 }\n');
  const out = path.join(tmp, 'timeout');
  const r = await load([file, '--quiet', `--out=${out}`]);
  expect(r.code).toBe(1);
  const rep = JSON.parse(fs.readFileSync(path.join(out, 'report.json'), 'utf8'));
  expect(rep.slo.ok).toBe(false);
  expect(rep.slo.violations).toEqual(['phase wait failed: timed out after 1s: 0 of 3 pods Ready']);
}, 20_000);

test("the token bucket: burst at once, then qps per second (client-go's limiter)", async () => {
  const b = new TokenBucket(100, 5);
  const t = performance.now();
  for (let i = 0; i < 5; i++) await b.take();
  expect(performance.now() - t).toBeLessThan(20);
  for (let i = 0; i < 10; i++) await b.take();
  expect(performance.now() - t).toBeGreaterThanOrEqual(90);
});

function chromium(file: string): { dom: string; log: string } {
  const p = Bun.spawnSync(
    [
      '/usr/bin/chromium',
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--enable-logging=stderr',
      '--virtual-time-budget=5000',
      '--dump-dom',
      `file://${file}`,
    ],
    { stdout: 'pipe', stderr: 'pipe', timeout: 30_000 },
  );
  return { dom: p.stdout.toString(), log: p.stderr.toString() };
}

needs('chromium').test(
  'the HTML reports render their uPlot charts in headless Chromium, without script errors',
  async () => {
    const one = chromium(path.join(density, 'report.html'));
    expect(one.log).not.toMatch(/Uncaught|CONSOLE.*Error/);
    expect((one.dom.match(/class="u-wrap"/g) ?? []).length).toBe(6);
    expect((one.dom.match(/<canvas/g) ?? []).length).toBe(6);
    expect(one.dom).toContain('Pod startup CDF');
    const cmp = await load([
      '--compare',
      path.join(density, 'report.json'),
      path.join(externalOut, 'report.json'),
      `--out=${path.join(tmp, 'cmp.html')}`,
    ]);
    expect(cmp.code).toBe(0);
    const two = chromium(path.join(tmp, 'cmp.html'));
    expect(two.log).not.toMatch(/Uncaught|CONSOLE.*Error/);
    expect((two.dom.match(/<canvas/g) ?? []).length).toBe(6);
    expect(two.dom).toContain('density');
    expect(two.dom).toContain('pods-ext');
  },
  60_000,
);
