/**
 * Custom resources in a scenario: the CRD a phase declares (inline, or a YAML file beside the
 * scenario), checked when the scenario is read, installed by the harness, awaited until
 * Established, and the custom resources it then creates from the phase's template.
 *
 *   - name: widgets
 *     customResources:
 *       crd: widget-crd.yaml     # a file (relative to the scenario's folder) or an inline CRD manifest
 *       version: v1              # optional: which served version to write (default: the storage version)
 *       perNamespace: 25         # namespaced CRD: so many in each of `namespaces` (load-0 …)
 *       namespaces: 2
 *       # count: 50              # cluster-scoped CRD: so many in all
 *       qps: 50
 *       template: { spec: { size: 3 } }   # the object's body; the harness sets apiVersion, kind and
 *                                          # metadata.name/namespace and adds its run label
 *
 * Later phases name the custom resources by the CRD's kind: `delete: { kind: Widget }`,
 * `churn: { kind: Widget, patches: 100 }`.
 */
import { type Document, isMap, isSeq, type LineCounter, type Node, type YAMLMap } from 'yaml';
import type { Client } from './client';
import { LABEL } from './objects';

/** What the harness needs of a CRD, read from its manifest. */
export interface CrdInfo {
  /** metadata.name: <plural>.<group> */
  name: string;
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  /** the manifest as written, POSTed as it is */
  manifest: Record<string, unknown>;
  /** where it came from, for messages: a file, or the scenario's line */
  source: string;
}

export interface CustomResourceStep {
  crd: CrdInfo;
  /** objects in total: perNamespace × namespaces, or count for a cluster-scoped CRD */
  count: number;
  namespaces: number;
  qps: number;
  template: Record<string, unknown>;
  /** seconds to wait for the CRD to be Established */
  timeout: number;
}

/** A YAML node's line, and a failure that names it (the scenario's or the CRD file's). */
export type Fail = (node: unknown, msg: string) => never;

/**
 * Check a CRD manifest (a YAML mapping of the scenario or of its own file) and read what the
 * harness needs. `version`: the served version the phase asks for, if any.
 */
export function readCrd(node: unknown, fail: Fail, source: string, version?: { value: string; node: unknown }): CrdInfo {
  if (!isMap(node)) return fail(node, 'crd: a CustomResourceDefinition manifest (a mapping) or the path of a YAML file holding one');
  const m = node as YAMLMap;
  const str = (parent: YAMLMap, key: string, what: string): string => {
    const v = parent.get(key);
    if (typeof v !== 'string' || v === '') fail(parent.get(key, true) ?? parent, `${what}: must be a non-empty string`);
    return v as string;
  };
  const api = m.get('apiVersion');
  if (api !== 'apiextensions.k8s.io/v1')
    fail(m.get('apiVersion', true) ?? m, `crd apiVersion: must be apiextensions.k8s.io/v1 (is ${api ?? 'absent'})`);
  if (m.get('kind') !== 'CustomResourceDefinition') fail(m.get('kind', true) ?? m, 'crd kind: must be CustomResourceDefinition');
  const spec = m.get('spec', true);
  if (!isMap(spec)) return fail(spec ?? m, 'crd spec: must be a mapping');
  const group = str(spec, 'group', 'crd spec.group');
  const names = spec.get('names', true);
  if (!isMap(names)) return fail(names ?? spec, 'crd spec.names: must be a mapping with plural and kind');
  const plural = str(names, 'plural', 'crd spec.names.plural');
  const kind = str(names, 'kind', 'crd spec.names.kind');
  const scope = spec.get('scope');
  if (scope !== 'Namespaced' && scope !== 'Cluster') fail(spec.get('scope', true) ?? spec, 'crd spec.scope: must be Namespaced or Cluster');
  const meta = m.get('metadata', true);
  const name = isMap(meta) ? meta.get('name') : undefined;
  if (name !== `${plural}.${group}`) fail(meta ?? m, `crd metadata.name: must be ${plural}.${group} (<plural>.<group>)`);
  const versions = spec.get('versions', true);
  if (!isSeq(versions) || versions.items.length === 0) return fail(versions ?? spec, 'crd spec.versions: must be a non-empty list');
  const served: string[] = [];
  let storage: string | undefined;
  for (const v of versions.items) {
    if (!isMap(v)) fail(v, 'crd spec.versions[]: must be a mapping with name, served and storage');
    const vm = v as YAMLMap;
    const vn = str(vm, 'name', 'crd spec.versions[].name');
    if (vm.get('served') === true) served.push(vn);
    if (vm.get('storage') === true) storage = vn;
  }
  if (served.length === 0) fail(versions, 'crd spec.versions: no version is served');
  let use = storage && served.includes(storage) ? storage : served[0]!;
  if (version) {
    if (!served.includes(version.value))
      fail(version.node, `version: ${version.value} is not a served version of ${name} (served: ${served.join(', ')})`);
    use = version.value;
  }
  return {
    name: name as string,
    group,
    version: use,
    plural,
    kind,
    namespaced: scope === 'Namespaced',
    manifest: m.toJSON() as Record<string, unknown>,
    source,
  };
}

/** The line of a YAML node in its document. */
export function lineOf(lc: LineCounter, node: unknown): number {
  const r = (node as Node | undefined)?.range;
  return r ? lc.linePos(r[0]).line : 1;
}

/** The first error of a parsed document, with its line, or undefined. */
export function firstYamlError(doc: Document, lc: LineCounter): { line: number; message: string } | undefined {
  const e = doc.errors[0];
  if (!e) return undefined;
  return { line: e.linePos?.[0]?.line ?? lc.linePos(e.pos[0]).line, message: e.message.split('\n')[0]! };
}

/** Collection path of a CRD's objects in a namespace ('' for cluster-scoped or across namespaces). */
export function crPath(crd: CrdInfo, ns: string): string {
  return `/apis/${crd.group}/${crd.version}${ns && crd.namespaced ? `/namespaces/${ns}` : ''}/${crd.plural}`;
}

/** A custom resource from the phase's template: its body, with the harness's name, namespace and run label. */
export function crManifest(step: CustomResourceStep, name: string, ns: string, run: string): Record<string, unknown> {
  const t = structuredClone(step.template) as { metadata?: Record<string, any> } & Record<string, unknown>;
  const meta = t.metadata ?? {};
  return {
    ...t,
    apiVersion: `${step.crd.group}/${step.crd.version}`,
    kind: step.crd.kind,
    metadata: {
      ...meta,
      name,
      ...(step.crd.namespaced ? { namespace: ns } : {}),
      labels: { ...(meta.labels ?? {}), [LABEL]: run },
    },
  };
}

/**
 * Install a CRD and wait until it is Established and its objects are served (one list). One there
 * already (an earlier run on the same cluster) is used as it is. Returns whether the harness created it.
 */
export async function installCrd(client: Client, crd: CrdInfo, timeoutS: number): Promise<boolean> {
  const base = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  const r = await client.call('POST', base, crd.manifest);
  if (r.status >= 300 && r.status !== 409) throw new Error(`CRD ${crd.name} (${crd.source}): ${r.status} ${r.body?.message ?? ''}`);
  const until = client.now() + timeoutS * 1000;
  for (;;) {
    const g = await client.call('GET', `${base}/${crd.name}`);
    const conds: { type?: string; status?: string; message?: string }[] = g.body?.status?.conditions ?? [];
    if (g.status === 200 && conds.some((c) => c.type === 'Established' && c.status === 'True')) break;
    if (client.now() > until) {
      const why = conds.find((c) => c.type === 'NamesAccepted' && c.status === 'False')?.message;
      throw new Error(`CRD ${crd.name} not Established within ${timeoutS}s${why ? `: ${why}` : ''}`);
    }
    await Bun.sleep(100);
  }
  // Established says the names are accepted; a server may take a moment more to serve them
  // (the reference's HA servers wait up to 5 s). Until a list of the objects answers.
  for (;;) {
    const l = await client.call('GET', `${crPath(crd, '')}?limit=1`);
    if (l.status === 200) break;
    if (l.status !== 404 || client.now() > until)
      throw new Error(`CRD ${crd.name}: its objects are not served: ${l.status} ${l.body?.message ?? ''}`);
    await Bun.sleep(100);
  }
  return r.status < 300;
}
