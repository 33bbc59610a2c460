/**
 * Scenario files: YAML with a name, simulated nodes and phases. A phase creates objects at a
 * target rate, deletes them, patches pods (churn), starts informer-like watchers, waits, or
 * applies fault objects (`faults:`, plain API objects such as the FaultInjection kind, applied
 * as they are: the harness knows nothing of their meaning).
 *
 *   name: my-density
 *   nodes: 10                  # simulated nodes (the server's --simulated-nodes, or Nodes created
 *                              # with annotation sim.svc.io/managed: "true" on an external target)
 *   phases:
 *   - name: create
 *     create: { kind: Deployment, count: 10, replicas: 30, namespaces: 2, qps: 20 }
 *   - name: ready
 *     wait: { podsReady: 300, timeout: 120 }
 *   - name: scale
 *     scale: { replicas: 10 }     # every Deployment created so far
 *   - name: cleanup
 *     delete: { kind: Deployment }
 *
 * Custom resources of a CRD the phase declares: see crd.ts (`customResources:`); node lease
 * traffic without nodes: see leases.ts (`leases:`).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type YAMLMap } from 'yaml';
import { type CrdInfo, type CustomResourceStep, firstYamlError, lineOf as lineIn, readCrd } from './crd';
import type { LeaseStep } from './leases';
import { KINDS, type Kind } from './objects';

export interface CreateStep {
  kind: Kind;
  count: number;
  /** pods per Deployment / Job parallelism */
  replicas: number;
  /** objects are spread over this many namespaces (load-0 … load-<n-1>) */
  namespaces: number;
  /** target rate, objects per second (0: as fast as the client limiter allows) */
  qps: number;
  /** clusterloader2's `group` label on the objects and their pods (`latency` pods are the ones PodStartupLatency measures) */
  group?: string;
}
export interface Phase {
  name: string;
  /** line of the phase in the file (for messages) */
  line: number;
  create?: CreateStep;
  /** a built-in kind, or the kind of a CRD an earlier customResources phase declared */
  delete?: { kind: string; qps: number };
  /** scale every Deployment the scenario created (through its scale subresource) */
  scale?: { replicas: number; qps: number };
  /** podsReady: until exactly so many of the scenario's pods are Ready (up or down); rollout: ns/name */
  wait?: { podsReady?: number; rollout?: string; timeout: number };
  watchers?: { count: number; per: 'node' | 'namespace' };
  /** patches of the pods (kind Pod), of an earlier phase's objects of a built-in kind or of its custom resources, while watchers follow */
  churn?: { kind: string; writers: number; watchers: number; patches: number; qps: number };
  sleep?: number;
  faults?: Record<string, unknown>[];
  customResources?: CustomResourceStep;
  leases?: LeaseStep;
}
export interface Scenario {
  name: string;
  nodes: number;
  phases: Phase[];
}

export class ScenarioError extends Error {}

/** Built-in scenarios, sized by flags (--nodes, --pods-per-node, --namespaces, ...). */
export function builtin(name: string, f: Record<string, number>): Scenario | undefined {
  const nodes = f.nodes ?? 5;
  const ppn = f['pods-per-node'] ?? 30;
  const ns = f.namespaces ?? Math.max(1, Math.ceil((nodes * ppn) / 3000));
  const qps = f['create-qps'] ?? 0;
  const timeout = f.timeout ?? 600;
  const pods = nodes * ppn;
  const L = 0;
  switch (name) {
    case 'density': {
      // clusterloader2's density (testing/density/config.yaml): saturation Deployments, one per
      // namespace of 30 pods per node (--replicas: pods per Deployment instead), then latency
      // pods, max(500, nodes) Deployments of one pod each at 5 per second (Uniform5qps), whose
      // startup is what PodStartupLatency measures; the saturation pods' is
      // SaturationPodStartupLatency, against a threshold of pods / 20 + 180 s.
      const replicas = f.replicas ?? Math.ceil(pods / ns);
      const count = Math.ceil(pods / replicas);
      const latency = f['latency-pods'] ?? Math.max(500, nodes);
      const saturated = Math.ceil(pods / count) * count;
      return {
        name,
        nodes,
        phases: [
          { name: 'namespaces', line: L, create: { kind: 'Namespace', count: ns, replicas: 0, namespaces: ns, qps } },
          { name: 'watch-pods', line: L, watchers: { count: Math.min(nodes, f.watchers ?? nodes), per: 'node' } },
          {
            name: 'deployments',
            line: L,
            create: {
              kind: 'Deployment',
              count,
              replicas: saturated / count,
              namespaces: ns,
              qps: f['create-qps'] ?? 5,
              group: 'saturation',
            },
          },
          { name: 'pods-ready', line: L, wait: { podsReady: saturated, timeout } },
          {
            name: 'latency-pods',
            line: L,
            create: { kind: 'Deployment', count: latency, replicas: 1, namespaces: ns, qps: f['latency-qps'] ?? 5, group: 'latency' },
          },
          { name: 'latency-pods-ready', line: L, wait: { podsReady: saturated + latency, timeout } },
          { name: 'delete', line: L, delete: { kind: 'Deployment', qps } },
        ],
      };
    }
    case 'load': {
      const deployments = f.deployments ?? Math.max(1, Math.ceil(pods / 10));
      return {
        name,
        nodes,
        phases: [
          { name: 'namespaces', line: L, create: { kind: 'Namespace', count: ns, replicas: 0, namespaces: ns, qps } },
          { name: 'configmaps', line: L, create: { kind: 'ConfigMap', count: deployments, replicas: 0, namespaces: ns, qps } },
          { name: 'secrets', line: L, create: { kind: 'Secret', count: deployments, replicas: 0, namespaces: ns, qps } },
          { name: 'services', line: L, create: { kind: 'Service', count: deployments, replicas: 0, namespaces: ns, qps } },
          {
            name: 'deployments',
            line: L,
            create: { kind: 'Deployment', count: deployments, replicas: Math.ceil(pods / deployments), namespaces: ns, qps },
          },
          { name: 'pods-ready', line: L, wait: { podsReady: Math.ceil(pods / deployments) * deployments, timeout } },
          { name: 'scale-deployments', line: L, scale: { replicas: Math.max(1, Math.floor(pods / deployments / 2)), qps } },
          {
            name: 'scaled-pods-ready',
            line: L,
            wait: { podsReady: Math.max(1, Math.floor(pods / deployments / 2)) * deployments, timeout },
          },
          { name: 'delete-deployments', line: L, delete: { kind: 'Deployment', qps } },
          { name: 'delete-services', line: L, delete: { kind: 'Service', qps } },
          { name: 'delete-configmaps', line: L, delete: { kind: 'ConfigMap', qps } },
          { name: 'delete-secrets', line: L, delete: { kind: 'Secret', qps } },
        ],
      };
    }
    case 'informers':
      return {
        name,
        nodes,
        phases: [
          { name: 'namespaces', line: L, create: { kind: 'Namespace', count: ns, replicas: 0, namespaces: ns, qps } },
          { name: 'watchers', line: L, watchers: { count: f.watchers ?? nodes, per: 'node' } },
          { name: 'pods', line: L, create: { kind: 'Pod', count: pods, replicas: 0, namespaces: ns, qps } },
          { name: 'pods-ready', line: L, wait: { podsReady: pods, timeout } },
          { name: 'delete', line: L, delete: { kind: 'Pod', qps } },
        ],
      };
    case 'churn':
      return {
        name,
        nodes,
        phases: [
          { name: 'namespaces', line: L, create: { kind: 'Namespace', count: ns, replicas: 0, namespaces: ns, qps } },
          { name: 'pods', line: L, create: { kind: 'Pod', count: pods, replicas: 0, namespaces: ns, qps } },
          { name: 'pods-ready', line: L, wait: { podsReady: pods, timeout } },
          {
            name: 'churn',
            line: L,
            churn: { kind: 'Pod', writers: f.writers ?? 10, watchers: f.watchers ?? 10, patches: f.patches ?? pods, qps },
          },
          { name: 'delete', line: L, delete: { kind: 'Pod', qps } },
        ],
      };
  }
  return undefined;
}

/**
 * Parse and check a scenario file's text; every error names the line it is about (in the CRD's
 * own file for a CRD given by path). `dir`: where CRD paths are relative to.
 */
export function parseScenario(text: string, file = 'scenario', dir = path.dirname(file)): Scenario {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: true });
  const lineOf = (node: unknown) => lineIn(lc, node);
  const bad = firstYamlError(doc, lc);
  if (bad) throw new ScenarioError(`${file}:${bad.line}: malformed YAML: ${bad.message}`);
  const fail = (node: unknown, msg: string): never => {
    throw new ScenarioError(`${file}:${lineOf(node)}: ${msg}`);
  };
  /** kinds of the CRDs declared so far (delete and churn may name them) */
  const crKinds = new Map<string, CrdInfo>();
  const kindRef = (m: YAMLMap, def: string | undefined, builtins: readonly string[], what: string): string => {
    const n = m.get('kind', true);
    const v = n === undefined ? def : (n as { value?: unknown }).value;
    if (typeof v === 'string' && (builtins.includes(v) || crKinds.has(v))) return v;
    const crs = [...crKinds.keys()];
    return fail(
      n ?? m,
      `${what}.kind: must be one of ${builtins.join(', ')}${crs.length ? `, or a custom resource kind declared earlier (${crs.join(', ')})` : ', or the kind of a CRD declared in an earlier customResources phase'}`,
    );
  };
  const root = doc.contents;
  if (!isMap(root)) return fail(root, 'a scenario is a mapping with name, nodes and phases');
  const num = (m: YAMLMap, key: string, def: number, min = 0): number => {
    const n = m.get(key, true);
    if (n === undefined) return def;
    const v = (n as { value?: unknown }).value;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min) fail(n, `${key}: must be a number >= ${min}`);
    return v as number;
  };
  const kindOf = (m: YAMLMap): Kind => {
    const n = m.get('kind', true);
    const v = (n as { value?: unknown } | undefined)?.value;
    if (!KINDS.includes(v as Kind)) fail(n ?? m, `kind: must be one of ${KINDS.join(', ')}`);
    return v as Kind;
  };
  const known = (m: YAMLMap, keys: string[], what: string) => {
    for (const it of m.items) {
      const k = String((it.key as { value?: unknown }).value);
      if (!keys.includes(k)) fail(it.key, `${what}: unknown field "${k}" (known: ${keys.join(', ')})`);
    }
  };
  known(root, ['name', 'nodes', 'phases', 'description'], 'scenario');
  const phasesNode = root.get('phases', true);
  if (!isSeq(phasesNode)) return fail(phasesNode ?? root, 'phases: must be a list');
  const phases: Phase[] = [];
  for (const [i, pn] of phasesNode.items.entries()) {
    if (!isMap(pn)) fail(pn, `phases[${i}]: must be a mapping`);
    const p = pn as YAMLMap;
    const actions = ['create', 'scale', 'delete', 'wait', 'watchers', 'churn', 'sleep', 'faults', 'customResources', 'leases'];
    known(p, ['name', ...actions], `phases[${i}]`);
    const phase: Phase = { name: String(p.get('name') ?? `phase-${i}`), line: lineOf(p) };
    const sub = (key: string): YAMLMap | undefined => {
      const n = p.get(key, true);
      if (n === undefined) return undefined;
      if (!isMap(n)) fail(n, `phases[${i}].${key}: must be a mapping`);
      return n as unknown as YAMLMap;
    };
    const c = sub('create');
    if (c) {
      known(c, ['kind', 'count', 'replicas', 'namespaces', 'qps', 'group'], `phases[${i}].create`);
      phase.create = {
        kind: kindOf(c),
        count: num(c, 'count', 1, 1),
        replicas: num(c, 'replicas', 1),
        namespaces: num(c, 'namespaces', 1, 1),
        qps: num(c, 'qps', 0),
      };
      const g = c.get('group', true);
      if (g !== undefined) {
        const v = (g as { value?: unknown }).value;
        if (typeof v !== 'string' || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(v)) fail(g, 'group: must be a label value (a-z, 0-9, -)');
        phase.create.group = v as string;
      }
    }
    const d = sub('delete');
    if (d) {
      known(d, ['kind', 'qps'], `phases[${i}].delete`);
      phase.delete = { kind: kindRef(d, undefined, KINDS, `phases[${i}].delete`), qps: num(d, 'qps', 0) };
    }
    const sc = sub('scale');
    if (sc) {
      known(sc, ['replicas', 'qps'], `phases[${i}].scale`);
      phase.scale = { replicas: num(sc, 'replicas', 1), qps: num(sc, 'qps', 0) };
    }
    const w = sub('wait');
    if (w) {
      known(w, ['podsReady', 'rollout', 'timeout'], `phases[${i}].wait`);
      const r = w.get('rollout');
      phase.wait = {
        podsReady: w.has('podsReady') ? num(w, 'podsReady', 0) : undefined,
        rollout: r === undefined ? undefined : String(r),
        timeout: num(w, 'timeout', 300, 1),
      };
    }
    const ws = sub('watchers');
    if (ws) {
      known(ws, ['count', 'per'], `phases[${i}].watchers`);
      const per = ws.get('per') ?? 'node';
      if (per !== 'node' && per !== 'namespace') fail(ws.get('per', true), 'per: must be node or namespace');
      phase.watchers = { count: num(ws, 'count', 1, 1), per: per as 'node' | 'namespace' };
    }
    const ch = sub('churn');
    if (ch) {
      known(ch, ['kind', 'writers', 'watchers', 'patches', 'qps'], `phases[${i}].churn`);
      phase.churn = {
        kind: kindRef(ch, 'Pod', KINDS, `phases[${i}].churn`),
        writers: num(ch, 'writers', 10, 1),
        watchers: num(ch, 'watchers', 10),
        patches: num(ch, 'patches', 1000, 1),
        qps: num(ch, 'qps', 0),
      };
    }
    if (p.has('sleep')) phase.sleep = num(p, 'sleep', 0);
    const fn = p.get('faults', true);
    if (fn !== undefined) {
      if (!isSeq(fn)) fail(fn, `phases[${i}].faults: must be a list of API objects`);
      phase.faults = (fn as unknown as { items: unknown[] }).items.map((it) => {
        if (!isMap(it) || !it.has('apiVersion') || !it.has('kind')) fail(it, 'a fault is an API object with apiVersion and kind');
        return (it as YAMLMap).toJSON() as Record<string, unknown>;
      });
    }
    const cr = sub('customResources');
    if (cr) {
      const what = `phases[${i}].customResources`;
      known(cr, ['crd', 'version', 'perNamespace', 'count', 'namespaces', 'qps', 'template', 'timeout'], what);
      const crd = readCrdRef(cr, fail, dir, what);
      if (crKinds.has(crd.kind) && crKinds.get(crd.kind)!.name !== crd.name)
        fail(cr.get('crd', true), `${what}: kind ${crd.kind} is the kind of another CRD already (${crKinds.get(crd.kind)!.name})`);
      if ((KINDS as readonly string[]).includes(crd.kind))
        fail(cr.get('crd', true), `${what}: the CRD's kind ${crd.kind} is a built-in kind of the harness; give it another kind`);
      let count: number;
      let namespaces = 1;
      if (crd.namespaced) {
        if (cr.has('count'))
          fail(cr.get('count', true), `${what}: ${crd.name} is namespaced: say perNamespace (objects in each namespace)`);
        namespaces = num(cr, 'namespaces', 1, 1);
        count = num(cr, 'perNamespace', 1, 1) * namespaces;
      } else {
        for (const k of ['perNamespace', 'namespaces'])
          if (cr.has(k)) fail(cr.get(k, true), `${what}: ${crd.name} is cluster-scoped: say count (objects in all)`);
        count = num(cr, 'count', 1, 1);
      }
      const tn = cr.get('template', true);
      if (tn !== undefined && !isMap(tn)) fail(tn, `${what}.template: must be a mapping (the object's body, e.g. spec)`);
      phase.customResources = {
        crd,
        count,
        namespaces,
        qps: num(cr, 'qps', 0),
        template: tn === undefined ? {} : ((tn as unknown as YAMLMap).toJSON() as Record<string, unknown>),
        timeout: num(cr, 'timeout', 60, 1),
      };
      crKinds.set(crd.kind, crd);
    }
    const ls = sub('leases');
    if (ls) {
      known(ls, ['count', 'interval', 'duration'], `phases[${i}].leases`);
      const interval = num(ls, 'interval', 10);
      if (interval <= 0) fail(ls.get('interval', true), 'interval: must be a number > 0 (seconds)');
      phase.leases = {
        count: num(ls, 'count', 1, 1),
        interval,
        duration: ls.has('duration') ? num(ls, 'duration', 0, interval) : undefined,
      };
    }
    if (!actions.some((a) => p.has(a))) fail(p, `phases[${i}]: needs one of ${actions.join(', ')}`);
    phases.push(phase);
  }
  return { name: String(root.get('name') ?? file), nodes: num(root, 'nodes', 0), phases };
}

/** The `crd:` of a customResources phase: an inline manifest, or a YAML file (relative to `dir`). */
function readCrdRef(cr: YAMLMap, fail: (node: unknown, msg: string) => never, dir: string, what: string): CrdInfo {
  const ref = cr.get('crd', true);
  if (ref === undefined) return fail(cr, `${what}.crd: required (a CustomResourceDefinition manifest, or the path of a YAML file)`);
  const vn = cr.get('version', true);
  const version = vn === undefined ? undefined : { value: String((vn as { value?: unknown }).value), node: vn };
  if (!isScalar(ref)) return readCrd(ref, fail, `${what}.crd`, version);
  if (typeof ref.value !== 'string') return fail(ref, `${what}.crd: a CustomResourceDefinition manifest, or the path of a YAML file`);
  const file = path.resolve(dir, ref.value);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    return fail(ref, `${what}.crd: cannot read ${ref.value} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  // Errors inside the CRD's file name its lines; a version the file does not serve names the scenario's.
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: true });
  const bad = firstYamlError(doc, lc);
  if (bad) throw new ScenarioError(`${ref.value}:${bad.line}: malformed YAML: ${bad.message}`);
  const failIn = (node: unknown, msg: string): never => {
    if (node === vn) return fail(node, msg);
    throw new ScenarioError(`${ref.value}:${lineIn(lc, node)}: ${msg}`);
  };
  return readCrd(doc.contents, failIn, ref.value, version);
}
