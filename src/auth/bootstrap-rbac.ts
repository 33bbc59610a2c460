/**
 * The reference's bootstrap RBAC policy (plugin/pkg/auth/authorizer/rbac/bootstrappolicy), the
 * part this server's kinds and users need, created at start when missing (labelled
 * `kubernetes.io/bootstrapping: rbac-defaults`, annotated `rbac.authorization.kubernetes.io/autoupdate`):
 *
 *   cluster-admin                 everything; bound to the group system:masters
 *   system:discovery              discovery and OpenAPI documents  ┐ bound to
 *   system:basic-user             self subject reviews             ┘ system:authenticated
 *   system:public-info-viewer     health and version; also for system:unauthenticated
 *   admin, edit, view             aggregated from the system:aggregate-to-* roles (and any
 *                                 ClusterRole labelled rbac.authorization.k8s.io/aggregate-to-*)
 *   system:auth-delegator         token and subject access reviews (not bound)
 *   system:node-bootstrapper      certificate signing requests (not bound)
 *   system:certificates.k8s.io:*-approver   `approve` on one kubernetes.io signer each (not bound)
 */
import type { Obj } from '../api/meta';

const LABELS = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
const ANNOTATIONS = { 'rbac.authorization.kubernetes.io/autoupdate': 'true' };
const AGG = 'rbac.authorization.k8s.io/aggregate-to-';

type Rule = { apiGroups?: string[]; resources?: string[]; verbs: string[]; nonResourceURLs?: string[]; resourceNames?: string[] };

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];

function clusterRole(name: string, rules: Rule[], extra: Partial<Obj> = {}, labels: Record<string, string> = {}): Obj {
  return {
    apiVersion: 'rbac.authorization.svc.io/v1',
    kind: 'ClusterRole',
    metadata: { name, labels: { ...LABELS, ...labels }, annotations: ANNOTATIONS },
    rules,
    ...extra,
  } as Obj;
}

function binding(name: string, role: string, groups: string[]): Obj {
  return {
    apiVersion: 'rbac.authorization.svc.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: LABELS, annotations: ANNOTATIONS },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: groups.map((g) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: g })),
  } as Obj;
}

const VIEWABLE: Rule[] = [
  {
    apiGroups: [''],
    resources: [
      'configmaps',
      'endpoints',
      'persistentvolumeclaims',
      'persistentvolumeclaims/status',
      'pods',
      'replicationcontrollers',
      'replicationcontrollers/scale',
      'serviceaccounts',
      'services',
      'services/status',
      'bindings',
      'events',
      'limitranges',
      'namespaces/status',
      'pods/log',
      'pods/status',
      'replicationcontrollers/status',
      'resourcequotas',
      'resourcequotas/status',
      'namespaces',
    ],
    verbs: READ,
  },
  {
    apiGroups: ['apps'],
    resources: [
      'controllerrevisions',
      'daemonsets',
      'daemonsets/status',
      'deployments',
      'deployments/scale',
      'deployments/status',
      'replicasets',
      'replicasets/scale',
      'replicasets/status',
      'statefulsets',
      'statefulsets/scale',
      'statefulsets/status',
    ],
    verbs: READ,
  },
  { apiGroups: ['batch'], resources: ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status'], verbs: READ },
  { apiGroups: ['policy'], resources: ['poddisruptionbudgets', 'poddisruptionbudgets/status'], verbs: READ },
  { apiGroups: ['networking.k8s.io'], resources: ['ingresses', 'ingresses/status', 'networkpolicies'], verbs: READ },
];

const EDITABLE: Rule[] = [
  { apiGroups: [''], resources: ['pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy', 'secrets', 'services/proxy'], verbs: READ },
  { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'] },
  {
    apiGroups: [''],
    resources: [
      'pods',
      'pods/attach',
      'pods/exec',
      'pods/portforward',
      'pods/proxy',
      'configmaps',
      'endpoints',
      'events',
      'persistentvolumeclaims',
      'replicationcontrollers',
      'replicationcontrollers/scale',
      'secrets',
      'serviceaccounts',
      'services',
      'services/proxy',
    ],
    verbs: WRITE,
  },
  { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
  {
    apiGroups: ['apps'],
    resources: [
      'daemonsets',
      'deployments',
      'deployments/rollback',
      'deployments/scale',
      'replicasets',
      'replicasets/scale',
      'statefulsets',
      'statefulsets/scale',
    ],
    verbs: WRITE,
  },
  { apiGroups: ['batch'], resources: ['cronjobs', 'jobs'], verbs: WRITE },
  { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: WRITE },
  { apiGroups: ['networking.k8s.io'], resources: ['ingresses', 'networkpolicies'], verbs: WRITE },
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: [...READ, ...WRITE] },
];

const ADMINISTRABLE: Rule[] = [
  { apiGroups: ['authorization.k8s.io'], resources: ['localsubjectaccessreviews'], verbs: ['create'] },
  { apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings', 'roles'], verbs: [...READ, ...WRITE] },
];

const DISCOVERY_URLS = [
  '/api',
  '/api/*',
  '/apis',
  '/apis/*',
  '/healthz',
  '/livez',
  '/openapi',
  '/openapi/*',
  '/readyz',
  '/version',
  '/version/',
];
const PUBLIC_URLS = ['/healthz', '/livez', '/readyz', '/version', '/version/'];

const aggregated = (to: string) => ({ aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [`${AGG}${to}`]: 'true' } }] } });

/** The bootstrap ClusterRoles and ClusterRoleBindings, in creation order. */
export function bootstrapPolicy(): { clusterRoles: Obj[]; clusterRoleBindings: Obj[] } {
  return {
    clusterRoles: [
      clusterRole('cluster-admin', [
        { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
        { nonResourceURLs: ['*'], verbs: ['*'] },
      ]),
      clusterRole('system:discovery', [{ nonResourceURLs: DISCOVERY_URLS, verbs: ['get'] }]),
      clusterRole('system:public-info-viewer', [{ nonResourceURLs: PUBLIC_URLS, verbs: ['get'] }]),
      clusterRole('system:basic-user', [
        { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
        { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] },
      ]),
      clusterRole('system:service-account-issuer-discovery', [
        {
          nonResourceURLs: [
            '/.well-known/openid-configuration',
            '/.well-known/openid-configuration/',
            '/openid/v1/jwks',
            '/openid/v1/jwks/',
          ],
          verbs: ['get'],
        },
      ]),
      clusterRole('system:auth-delegator', [
        { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
        { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
      ]),
      clusterRole('system:node-bootstrapper', [
        { apiGroups: ['certificates.k8s.io'], resources: ['certificatesigningrequests'], verbs: ['create', 'get', 'list', 'watch'] },
      ]),
      ...(
        [
          ['kube-apiserver-client-approver', 'kubernetes.io/kube-apiserver-client'],
          ['kube-apiserver-client-kubelet-approver', 'kubernetes.io/kube-apiserver-client-kubelet'],
          ['kubelet-serving-approver', 'kubernetes.io/kubelet-serving'],
          ['legacy-unknown-approver', 'kubernetes.io/legacy-unknown'],
        ] as const
      ).map(([role, signer]) =>
        clusterRole(`system:certificates.k8s.io:${role}`, [
          { apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: [signer], verbs: ['approve'] },
        ]),
      ),
      clusterRole('admin', [], aggregated('admin')),
      clusterRole('edit', [], aggregated('edit'), { [`${AGG}admin`]: 'true' }),
      clusterRole('view', [], aggregated('view'), { [`${AGG}edit`]: 'true' }),
      clusterRole('system:aggregate-to-admin', ADMINISTRABLE, {}, { [`${AGG}admin`]: 'true' }),
      clusterRole('system:aggregate-to-edit', EDITABLE, {}, { [`${AGG}edit`]: 'true' }),
      clusterRole('system:aggregate-to-view', VIEWABLE, {}, { [`${AGG}view`]: 'true' }),
    ],
    clusterRoleBindings: [
      binding('cluster-admin', 'cluster-admin', ['system:masters']),
      binding('system:discovery', 'system:discovery', ['system:authenticated']),
      binding('system:basic-user', 'system:basic-user', ['system:authenticated']),
      binding('system:public-info-viewer', 'system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
      binding('system:service-account-issuer-discovery', 'system:service-account-issuer-discovery', ['system:serviceaccounts']),
    ],
  };
}
