/**
 * The load harness's custom resource and node lease phases (src/load/crd.ts, leases.ts), end to
 * end: `bun src/load/main.ts` against a second server through its kubeconfig, the report's counts
 * checked against what the test lists and watches on that server; and the scenario errors of
 * those phases, each naming its line.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseScenario } from '../src/load/scenario';
import { type Server, startServer } from './helpers/server';
import { openWatch, type WatchReader } from './helpers/watch';

const ROOT = path.resolve(import.meta.dir, '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-load-crd-'));
let srv: Server;
beforeAll(async () => {
  srv = await startServer({ args: ['--simulated-nodes=0'] });
});
afterAll(async () => {
  await srv?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.load.example.com
spec:
  group: load.example.com
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget, listKind: WidgetList }
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: { type: integer }
`;

async function load(args: string[]): Promise<{ code: number; stderr: string }> {
  const p = Bun.spawn([process.execPath, path.join(ROOT, 'src/load/main.ts'), ...args], { cwd: tmp, stdout: 'pipe', stderr: 'pipe' });
  const [stderr, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
  return { code, stderr };
}

const item = (r: any, verb: string, resource: string) =>
  r.APIResponsivenessPrometheus.dataItems.find((d: any) => d.labels.Verb === verb && d.labels.Resource === resource);

test('50 custom resources of a CRD from a file and 20 leases renewed every second for 3 s: the report counts what the server holds', async () => {
  fs.writeFileSync(path.join(tmp, 'widget-crd.yaml'), CRD);
  const file = path.join(tmp, 'crs.yaml');
  fs.writeFileSync(
    file,
    `name: crs-and-leases
phases:
- name: ns
  create: { kind: Namespace, count: 2 }
- name: widgets
  customResources:
    crd: widget-crd.yaml
    perNamespace: 25
    namespaces: 2
    qps: 200
    template: { metadata: { labels: { tier: gold } }, spec: { size: 3 } }
- name: churn-widgets
  churn: { kind: Widget, writers: 2, watchers: 1, patches: 20 }
- name: node-leases
  leases: { count: 20, interval: 1, duration: 3 }
`,
  );
  // The test's own watch of the lease namespace, open before the harness starts.
  const w: WatchReader = await openWatch(srv, '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases?watch=1');
  const out = path.join(tmp, 'out');
  // The client's limit of 10 requests/s holds the creates and patches, not the leases (they stand
  // for kubelets with clients of their own): 20 renewals a second would be twice its limit.
  const run = await load([file, `--kubeconfig=${srv.kubeconfig}`, '--qps=10', '--burst=10', '--keep-objects', '--quiet', `--out=${out}`]);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  const r = JSON.parse(fs.readFileSync(path.join(out, 'report.json'), 'utf8'));
  // The measurements also stand alone, in files named as clusterloader2 names its summaries.
  const files = fs.readdirSync(out).sort();
  const api = files.find((f) => /^APIResponsivenessPrometheus_crs-and-leases_\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\.json$/.test(f));
  const pod = files.find((f) => /^PodStartupLatency_PodStartupLatency_crs-and-leases_.*Z\.json$/.test(f));
  expect(api && JSON.parse(fs.readFileSync(path.join(out, api), 'utf8'))).toEqual(r.APIResponsivenessPrometheus);
  expect(pod && JSON.parse(fs.readFileSync(path.join(out, pod), 'utf8'))).toEqual(r.PodStartupLatency);

  // The CRD is installed and Established; the custom resources the report counts are on the server.
  const crd = await srv.json('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.load.example.com');
  expect(crd.body.status.conditions.find((c: any) => c.type === 'Established').status).toBe('True');
  const list = await srv.json('GET', '/apis/load.example.com/v1/widgets');
  const widgets = list.body.items;
  expect(widgets.length).toBe(50);
  expect(item(r, 'POST', 'widgets').labels).toMatchObject({ Count: String(widgets.length), Scope: 'namespace' });
  expect(item(r, 'POST', 'customresourcedefinitions').labels.Count).toBe('1');
  expect(r.customResources).toEqual({ 'widgets.load.example.com': 50 });
  expect(new Set(widgets.map((x: any) => x.metadata.namespace))).toEqual(new Set(['load-0', 'load-1']));
  // The template's body and labels, plus the run's label (the harness lists by it).
  for (const x of widgets) {
    expect(x.spec).toEqual({ size: 3 });
    expect(x.metadata.labels.tier).toBe('gold');
    expect(x.metadata.labels['svc-load']).toStartWith('crs-and-leases-');
  }
  // 20 patches spread over the widgets: 20 of them carry the harness's write mark, each seen on its watch.
  const patched = widgets.filter((x: any) => x.metadata.annotations?.['svc-load/write'] !== undefined);
  expect(patched.length).toBe(20);
  expect(item(r, 'PATCH', 'widgets').labels).toMatchObject({ Count: '20', Scope: 'resource' });
  expect(r.WatchLatency.dataItems[0].labels.Count).toBe('20');
  expect(r.watchers.count).toBe(1);
  expect(r.watchers.events).toBeGreaterThanOrEqual(50 + 20);
  // The creates kept to the client's 10 requests/s (a burst of 10, then 10 a second).
  const widgetsPhase = r.phases.find((p: any) => p.name === 'widgets');
  expect(widgetsPhase.endMs - widgetsPhase.startMs).toBeGreaterThan(((50 - 10) / 10) * 1000 - 200);

  // Leases: created once (POST) and renewed 3 times each (PUT), every renewal a MODIFIED event
  // on the test's watch, with renewTime moving forward.
  const events = (await w.drain(300)).filter((e) => e.object?.metadata?.name?.startsWith('load-node-'));
  await w.close();
  const added = events.filter((e) => e.type === 'ADDED');
  const modified = events.filter((e) => e.type === 'MODIFIED');
  expect(added.length).toBe(20);
  expect(item(r, 'POST', 'leases').labels).toMatchObject({ Count: String(added.length), Scope: 'namespace' });
  expect(modified.length).toBe(60);
  expect(item(r, 'PUT', 'leases').labels).toMatchObject({ Count: String(modified.length), Scope: 'resource', SlowCount: '0' });
  expect(r.leases).toEqual({ leases: 20, renewals: 60, conflicts: 0, failures: 0 });
  const times = new Map<string, string[]>();
  for (const e of [...added, ...modified]) {
    const name = e.object.metadata.name as string;
    times.set(name, [...(times.get(name) ?? []), e.object.spec.renewTime as string]);
    expect(e.object.spec).toMatchObject({ holderIdentity: name, leaseDurationSeconds: 40 });
  }
  expect(times.size).toBe(20);
  for (const ts of times.values()) {
    expect(ts.length).toBe(4);
    const ms = ts.map((t) => Date.parse(t));
    // Due 1 s apart each (from the create): a late one may shorten the next gap, never to nothing.
    for (let i = 1; i < ms.length; i++) expect(ms[i]! - ms[i - 1]!).toBeGreaterThan(400);
    expect(ms[3]! - ms[0]!).toBeGreaterThan(2700);
    expect(ms[3]! - ms[0]!).toBeLessThan(4500);
  }
  // The creates spread over the first second, then 3 renewals a second apart: 3 s and most of one more.
  const ph = r.phases.find((p: any) => p.name === 'node-leases');
  expect(ph.endMs - ph.startMs).toBeGreaterThanOrEqual(3900);
  expect(ph.endMs - ph.startMs).toBeLessThan(5500);
  // --keep-objects: the namespaces, leases and CRD stay on the cluster.
  expect((await srv.json('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/load-node-0')).status).toBe(200);
}, 40_000);

test('--leases: background renewals all run long; without --keep-objects the run removes its leases and CRD', async () => {
  const file = path.join(tmp, 'bg.yaml');
  fs.writeFileSync(
    file,
    `name: bg
phases:
- name: ns
  create: { kind: Namespace, count: 1 }
- name: gadgets
  customResources:
    crd:
      apiVersion: apiextensions.k8s.io/v1
      kind: CustomResourceDefinition
      metadata: { name: gadgets.load.example.com }
      spec:
        group: load.example.com
        scope: Cluster
        names: { plural: gadgets, kind: Gadget }
        versions: [{ name: v1, served: true, storage: true, schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } } }]
    count: 5
- name: pause
  sleep: 1.6
- name: delete-gadgets
  delete: { kind: Gadget }
`,
  );
  const out = path.join(tmp, 'bg-out');
  const run = await load([file, `--kubeconfig=${srv.kubeconfig}`, '--leases=4', '--lease-interval=0.5', '--quiet', `--out=${out}`]);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  const r = JSON.parse(fs.readFileSync(path.join(out, 'report.json'), 'utf8'));
  expect(item(r, 'POST', 'gadgets').labels).toMatchObject({ Count: '5', Scope: 'cluster' });
  expect(item(r, 'DELETE', 'gadgets').labels.Count).toBe('5');
  // 4 leases renewed twice a second over the whole run: the 1.6 s pause holds at least 2 rounds
  // after the creates' spread of half a second.
  expect(r.leases.leases).toBe(4);
  expect(r.leases.renewals).toBeGreaterThanOrEqual(4 * 2);
  expect(item(r, 'PUT', 'leases').labels.Count).toBe(String(r.leases.renewals));
  // The leases of the first test (load-node-0 …) were there: adopted, not created, so not deleted.
  expect((await srv.json('GET', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/load-node-0')).status).toBe(200);
  // The CRD it created is gone (deleted at the end), and so are its objects.
  const crd = await srv.json('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.load.example.com');
  expect(crd.status === 404 || crd.body.metadata.deletionTimestamp !== undefined).toBe(true);
}, 30_000);

test('scenario errors of the CRD and lease phases name their line (in the CRD file for a CRD given by path)', () => {
  const dir = fs.mkdtempSync(path.join(tmp, 'errs-'));
  const parse = (text: string) => () => parseScenario(text, 'f.yaml', dir);
  const head = 'name: x\nphases:\n- name: a\n';
  expect(parse(`${head}  customResources:\n    crd: nope.yaml\n    perNamespace: 2\n`)).toThrow(
    'f.yaml:5: phases[0].customResources.crd: cannot read nope.yaml (ENOENT)',
  );
  fs.writeFileSync(path.join(dir, 'bad.yaml'), 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: [\n');
  expect(parse(`${head}  customResources: { crd: bad.yaml }\n`)).toThrow(/^bad\.yaml:[34]: malformed YAML/);
  fs.writeFileSync(path.join(dir, 'noplural.yaml'), CRD.replace('plural: widgets, ', ''));
  expect(parse(`${head}  customResources: { crd: noplural.yaml }\n`)).toThrow(
    'noplural.yaml:8: crd spec.names.plural: must be a non-empty string',
  );
  fs.writeFileSync(path.join(dir, 'w.yaml'), CRD);
  expect(parse(`${head}  customResources:\n    crd: w.yaml\n    count: 5\n`)).toThrow(
    'f.yaml:6: phases[0].customResources: widgets.load.example.com is namespaced: say perNamespace',
  );
  expect(parse(`${head}  customResources:\n    crd: w.yaml\n    version: v2\n`)).toThrow('f.yaml:6: version: v2 is not a served version');
  expect(parse(`${head}  customResources:\n    crd:\n      apiVersion: v1\n      kind: ConfigMap\n`)).toThrow(
    'f.yaml:6: crd apiVersion: must be apiextensions.k8s.io/v1',
  );
  expect(parse(`${head}  customResources:\n    crd: w.yaml\n    template: [1]\n`)).toThrow(
    'f.yaml:6: phases[0].customResources.template: must be a mapping',
  );
  // A custom resource kind is known to later phases only.
  expect(parse(`${head}  delete: { kind: Widget }\n- name: b\n  customResources: { crd: w.yaml }\n`)).toThrow(
    'f.yaml:4: phases[0].delete.kind: must be one of Namespace, Deployment, Service, ConfigMap, Secret, Job, Pod, or the kind of a CRD declared in an earlier customResources phase',
  );
  const ok = parseScenario(
    `${head}  customResources: { crd: w.yaml, perNamespace: 3, namespaces: 2 }\n- name: b\n  churn: { kind: Widget, patches: 5 }\n- name: c\n  delete: { kind: Widget }\n- name: d\n  leases: { count: 3 }\n`,
    'f.yaml',
    dir,
  );
  expect(ok.phases[0]!.customResources).toMatchObject({
    count: 6,
    namespaces: 2,
    crd: { kind: 'Widget', version: 'v1', namespaced: true },
  });
  expect(ok.phases[1]!.churn!.kind).toBe('Widget');
  expect(ok.phases[3]!.leases).toEqual({ count: 3, interval: 10, duration: undefined });
  expect(parse(`${head}  churn: { kind: ConfigMap }\n`)).not.toThrow();
  expect(parse(`${head}  churn: { kind: Gadget }\n`)).toThrow(
    'f.yaml:4: phases[0].churn.kind: must be one of Namespace, Deployment, Service, ConfigMap, Secret, Job, Pod, or the kind of a CRD',
  );
  expect(parse(`${head}  leases: { count: 3, interval: 0 }\n`)).toThrow('f.yaml:4: interval: must be a number > 0');
  expect(parse(`${head}  leases: { count: 3, interval: 2, duration: 1 }\n`)).toThrow('f.yaml:4: duration: must be a number >= 2');
});
