/**
 * `kubectl api-resources -o wide` against the reference 1.33's list: every resource a default
 * 1.33 cluster serves, with its short names, preferred version, scope, kind, verbs and
 * categories (facts from the reference's discovery, written down here), found under its
 * upstream group spelling; `kubectl get all` lists the kinds of category `all`; `kubectl explain`
 * knows every kind.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { type Server, startServer } from './helpers/server';

const ALL = 'create delete deletecollection get list patch update watch';
const NO_DC = 'create delete get list patch update watch';
const CREATE = 'create';

/** [name, shortNames, apiVersion, namespaced, kind, verbs, categories] as the reference 1.33 lists them. */
const REFERENCE: [string, string, string, boolean, string, string, string][] = [
  ['bindings', '', 'v1', true, 'Binding', CREATE, ''],
  ['componentstatuses', 'cs', 'v1', false, 'ComponentStatus', 'get list', ''],
  ['configmaps', 'cm', 'v1', true, 'ConfigMap', ALL, ''],
  ['endpoints', 'ep', 'v1', true, 'Endpoints', ALL, ''],
  ['events', 'ev', 'v1', true, 'Event', ALL, ''],
  ['limitranges', 'limits', 'v1', true, 'LimitRange', ALL, ''],
  ['namespaces', 'ns', 'v1', false, 'Namespace', NO_DC, ''],
  ['nodes', 'no', 'v1', false, 'Node', ALL, ''],
  ['persistentvolumeclaims', 'pvc', 'v1', true, 'PersistentVolumeClaim', ALL, ''],
  ['persistentvolumes', 'pv', 'v1', false, 'PersistentVolume', ALL, ''],
  ['pods', 'po', 'v1', true, 'Pod', ALL, 'all'],
  ['podtemplates', '', 'v1', true, 'PodTemplate', ALL, ''],
  ['replicationcontrollers', 'rc', 'v1', true, 'ReplicationController', ALL, 'all'],
  ['resourcequotas', 'quota', 'v1', true, 'ResourceQuota', ALL, ''],
  ['secrets', '', 'v1', true, 'Secret', ALL, ''],
  ['serviceaccounts', 'sa', 'v1', true, 'ServiceAccount', ALL, ''],
  ['services', 'svc', 'v1', true, 'Service', ALL, 'all'],
  ['mutatingwebhookconfigurations', '', 'admissionregistration.k8s.io/v1', false, 'MutatingWebhookConfiguration', ALL, 'api-extensions'],
  ['validatingadmissionpolicies', '', 'admissionregistration.k8s.io/v1', false, 'ValidatingAdmissionPolicy', ALL, 'api-extensions'],
  [
    'validatingadmissionpolicybindings',
    '',
    'admissionregistration.k8s.io/v1',
    false,
    'ValidatingAdmissionPolicyBinding',
    ALL,
    'api-extensions',
  ],
  [
    'validatingwebhookconfigurations',
    '',
    'admissionregistration.k8s.io/v1',
    false,
    'ValidatingWebhookConfiguration',
    ALL,
    'api-extensions',
  ],
  ['customresourcedefinitions', 'crd,crds', 'apiextensions.k8s.io/v1', false, 'CustomResourceDefinition', ALL, 'api-extensions'],
  ['apiservices', '', 'apiregistration.k8s.io/v1', false, 'APIService', ALL, 'api-extensions'],
  ['controllerrevisions', '', 'apps/v1', true, 'ControllerRevision', ALL, ''],
  ['daemonsets', 'ds', 'apps/v1', true, 'DaemonSet', ALL, 'all'],
  ['deployments', 'deploy', 'apps/v1', true, 'Deployment', ALL, 'all'],
  ['replicasets', 'rs', 'apps/v1', true, 'ReplicaSet', ALL, 'all'],
  ['statefulsets', 'sts', 'apps/v1', true, 'StatefulSet', ALL, 'all'],
  ['selfsubjectreviews', '', 'authentication.k8s.io/v1', false, 'SelfSubjectReview', CREATE, ''],
  ['tokenreviews', '', 'authentication.k8s.io/v1', false, 'TokenReview', CREATE, ''],
  ['localsubjectaccessreviews', '', 'authorization.k8s.io/v1', true, 'LocalSubjectAccessReview', CREATE, ''],
  ['selfsubjectaccessreviews', '', 'authorization.k8s.io/v1', false, 'SelfSubjectAccessReview', CREATE, ''],
  ['selfsubjectrulesreviews', '', 'authorization.k8s.io/v1', false, 'SelfSubjectRulesReview', CREATE, ''],
  ['subjectaccessreviews', '', 'authorization.k8s.io/v1', false, 'SubjectAccessReview', CREATE, ''],
  ['horizontalpodautoscalers', 'hpa', 'autoscaling/v2', true, 'HorizontalPodAutoscaler', ALL, 'all'],
  ['cronjobs', 'cj', 'batch/v1', true, 'CronJob', ALL, 'all'],
  ['jobs', '', 'batch/v1', true, 'Job', ALL, 'all'],
  ['certificatesigningrequests', 'csr', 'certificates.k8s.io/v1', false, 'CertificateSigningRequest', ALL, ''],
  ['leases', '', 'coordination.k8s.io/v1', true, 'Lease', ALL, ''],
  ['endpointslices', '', 'discovery.k8s.io/v1', true, 'EndpointSlice', ALL, ''],
  ['events', 'ev', 'events.k8s.io/v1', true, 'Event', ALL, ''],
  ['flowschemas', '', 'flowcontrol.apiserver.k8s.io/v1', false, 'FlowSchema', ALL, ''],
  ['prioritylevelconfigurations', '', 'flowcontrol.apiserver.k8s.io/v1', false, 'PriorityLevelConfiguration', ALL, ''],
  ['ingressclasses', '', 'networking.k8s.io/v1', false, 'IngressClass', ALL, ''],
  ['ingresses', 'ing', 'networking.k8s.io/v1', true, 'Ingress', ALL, ''],
  ['ipaddresses', 'ip', 'networking.k8s.io/v1', false, 'IPAddress', ALL, ''],
  ['networkpolicies', 'netpol', 'networking.k8s.io/v1', true, 'NetworkPolicy', ALL, ''],
  ['servicecidrs', '', 'networking.k8s.io/v1', false, 'ServiceCIDR', ALL, ''],
  ['runtimeclasses', '', 'node.k8s.io/v1', false, 'RuntimeClass', ALL, ''],
  ['poddisruptionbudgets', 'pdb', 'policy/v1', true, 'PodDisruptionBudget', ALL, ''],
  ['clusterrolebindings', '', 'rbac.authorization.k8s.io/v1', false, 'ClusterRoleBinding', ALL, ''],
  ['clusterroles', '', 'rbac.authorization.k8s.io/v1', false, 'ClusterRole', ALL, ''],
  ['rolebindings', '', 'rbac.authorization.k8s.io/v1', true, 'RoleBinding', ALL, ''],
  ['roles', '', 'rbac.authorization.k8s.io/v1', true, 'Role', ALL, ''],
  ['priorityclasses', 'pc', 'scheduling.k8s.io/v1', false, 'PriorityClass', ALL, ''],
  ['csidrivers', '', 'storage.k8s.io/v1', false, 'CSIDriver', ALL, ''],
  ['csinodes', '', 'storage.k8s.io/v1', false, 'CSINode', ALL, ''],
  ['csistoragecapacities', '', 'storage.k8s.io/v1', true, 'CSIStorageCapacity', ALL, ''],
  ['storageclasses', 'sc', 'storage.k8s.io/v1', false, 'StorageClass', ALL, ''],
  ['volumeattachments', '', 'storage.k8s.io/v1', false, 'VolumeAttachment', ALL, ''],
];

setDefaultTimeout(120_000);
let srv: Server;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  await srv?.stop();
});

/** kubectl's tab-aligned table read by the header's column offsets. */
function table(out: string): Record<string, string>[] {
  const lines = out.split('\n').filter((l) => l.trim() !== '');
  const header = lines[0] ?? '';
  const cols = [...header.matchAll(/\S+/g)].map((m) => ({ name: m[0], at: m.index ?? 0 }));
  return lines.slice(1).map((l) => {
    const row: Record<string, string> = {};
    cols.forEach((c, i) => {
      row[c.name] = l.slice(c.at, cols[i + 1]?.at ?? l.length).trim();
    });
    return row;
  });
}

describe('kubectl api-resources', () => {
  test('every resource of the reference 1.33, as it lists them', () => {
    const r = srv.kubectl(['api-resources', '-o', 'wide']);
    expect(r.code).toBe(0);
    const rows = new Map(table(r.stdout).map((row) => [`${row.APIVERSION}/${row.NAME}`, row]));
    const missing: string[] = [];
    for (const [name, shortNames, apiVersion, namespaced, kind, verbs, categories] of REFERENCE) {
      const row = rows.get(`${apiVersion}/${name}`);
      if (!row) {
        missing.push(`${apiVersion}/${name}`);
        continue;
      }
      expect([apiVersion, name, row.SHORTNAMES, row.NAMESPACED, row.KIND, row.VERBS, row.CATEGORIES]).toEqual([
        apiVersion,
        name,
        shortNames,
        String(namespaced),
        kind,
        verbs.split(' ').join(','),
        categories,
      ]);
    }
    expect(missing).toEqual([]);
  });

  test('the svc.io spelling of every branded group lists the same resources', () => {
    const r = srv.kubectl(['api-resources', '--no-headers', '-o', 'name']);
    const names = new Set(r.stdout.split('\n').filter(Boolean));
    const missing: string[] = [];
    for (const [name, , apiVersion] of REFERENCE) {
      const group = apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
      if (!group.endsWith('.k8s.io')) continue;
      const svc = `${name}.${group.replace(/\.k8s\.io$/, '.svc.io')}`;
      if (!names.has(svc)) missing.push(svc);
    }
    expect(missing).toEqual([]);
  });

  test('kubectl explain knows every kind', () => {
    for (const [name, , apiVersion] of REFERENCE) {
      if (['bindings', 'componentstatuses'].includes(name)) continue;
      const r = srv.kubectl(['explain', name, `--api-version=${apiVersion}`]);
      expect([name, r.code, r.stderr]).toEqual([name, 0, '']);
      expect(r.stdout).toContain('FIELDS:');
    }
  });

  test('kubectl get all lists what the reference lists', async () => {
    expect(
      (await srv.json('POST', '/api/v1/namespaces/default/services', { metadata: { name: 'allsvc' }, spec: { ports: [{ port: 80 }] } }))
        .status,
    ).toBe(201);
    const r = srv.kubectl(['get', 'all', '-n', 'default']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('service/allsvc');
    const shown = srv.kubectl(['api-resources', '--categories=all', '-o', 'name']);
    const kinds = shown.stdout
      .split('\n')
      .filter(Boolean)
      .map((n) => n.split('.')[0]);
    const want = REFERENCE.filter((x) => x[6] === 'all').map((x) => x[0]);
    for (const k of want) expect(kinds).toContain(k);
  });
});
