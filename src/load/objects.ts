/** The objects a scenario creates: manifests and API paths per kind, all labelled svc-load=<run>. */

/** The built-in kinds a scenario creates (custom resources come from a CRD a phase declares: crd.ts). */
export const KINDS = ['Namespace', 'Deployment', 'Service', 'ConfigMap', 'Secret', 'Job', 'Pod'] as const;
export type Kind = (typeof KINDS)[number];

export const LABEL = 'svc-load';

export function nsName(i: number): string {
  return `load-${i}`;
}

/** Collection path of a kind in a namespace. */
export function collectionPath(kind: Kind, ns: string): string {
  switch (kind) {
    case 'Namespace':
      return '/api/v1/namespaces';
    case 'Deployment':
      return `/apis/apps/v1/namespaces/${ns}/deployments`;
    case 'Job':
      return `/apis/batch/v1/namespaces/${ns}/jobs`;
    default:
      return `/api/v1/namespaces/${ns}/${kind.toLowerCase()}s`;
  }
}

/** The path of a kind's objects in every namespace (a watch over all of them). */
export function allPath(kind: Kind): string {
  switch (kind) {
    case 'Deployment':
      return '/apis/apps/v1/deployments';
    case 'Job':
      return '/apis/batch/v1/jobs';
    default:
      return `/api/v1/${kind.toLowerCase()}s`;
  }
}

function podSpec(): Record<string, unknown> {
  return {
    containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '1m', memory: '1Mi' } } }],
    terminationGracePeriodSeconds: 0,
  };
}

/**
 * `group`: clusterloader2's `group` label (saturation, latency), on the object and its pods: the
 * pod startup measurements select by it.
 */
export function manifest(kind: Kind, name: string, ns: string, replicas: number, run: string, group?: string): Record<string, unknown> {
  const labels: Record<string, string> = { [LABEL]: run, app: name };
  if (group) labels.group = group;
  const meta = { name, namespace: ns, labels };
  switch (kind) {
    case 'Namespace':
      return { apiVersion: 'v1', kind, metadata: { name, labels: { [LABEL]: run } } };
    case 'Deployment':
      return {
        apiVersion: 'apps/v1',
        kind,
        metadata: meta,
        spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels }, spec: podSpec() } },
      };
    case 'Job':
      return {
        apiVersion: 'batch/v1',
        kind,
        metadata: meta,
        spec: {
          parallelism: replicas,
          completions: replicas,
          template: { metadata: { labels }, spec: { ...podSpec(), restartPolicy: 'Never' } },
        },
      };
    case 'Service':
      return { apiVersion: 'v1', kind, metadata: meta, spec: { selector: { app: name }, ports: [{ port: 80, targetPort: 8080 }] } };
    case 'ConfigMap':
      return { apiVersion: 'v1', kind, metadata: meta, data: { key: 'x'.repeat(64) } };
    case 'Secret':
      return { apiVersion: 'v1', kind, metadata: meta, stringData: { key: 'x'.repeat(64) } };
    case 'Pod':
      return { apiVersion: 'v1', kind, metadata: meta, spec: podSpec() };
  }
}
