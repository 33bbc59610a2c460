/**
 * The reference's API Priority and Fairness bootstrap configuration
 * (k8s.io/apiserver pkg/apis/flowcontrol/bootstrap/default.go, flowcontrol v1, as of
 * kubernetes/apiserver cd728bc91b40 = kubernetes/kubernetes 2800c16c8b97, April 2025, plus the
 * endpoint-controller and workload-leader-election schemas and the endpoints/configmaps
 * leader-election rule that releases up to 1.32 still create and issue 10 asks for). Every object carries
 * `apf.kubernetes.io/autoupdate-spec: "true"`, as the reference's constructors set it.
 *
 *   priority level    shares  lendable  queues  hand  queue length
 *   exempt (Exempt)        0         0
 *   catch-all              5         0  (Reject)
 *   system                30        33      64     6            50
 *   node-high             40        25      64     6            50
 *   leader-election       10         0      16     4            50
 *   workload-high         40        50     128     6            50
 *   workload-low         100        90     128     6            50
 *   global-default        20        50     128     6            50
 *
 *   flow schema                   precedence  priority level   distinguisher  who, what
 *   exempt                                 1  exempt           -              system:masters, everything
 *   probes                                 2  exempt           -              everyone, GET /healthz /readyz /livez
 *   system-leader-election               100  leader-election  ByUser         controller-manager, scheduler, kube-system SAs; leases
 *   endpoint-controller                  150  workload-high    ByUser         controller-manager, endpoint SAs; endpoints
 *   workload-leader-election             200  leader-election  ByUser         kube-system SAs; leases, endpoints, configmaps
 *   system-node-high                     400  node-high        ByUser         system:nodes; nodes, nodes/status, leases
 *   system-nodes                         500  system           ByUser         system:nodes, everything
 *   kube-controller-manager              800  workload-high    ByNamespace    system:kube-controller-manager, everything
 *   kube-scheduler                       800  workload-high    ByNamespace    system:kube-scheduler, everything
 *   kube-system-service-accounts         900  workload-high    ByNamespace    kube-system SAs, everything
 *   service-accounts                    9000  workload-low     ByUser         system:serviceaccounts, everything
 *   global-default                      9900  global-default   ByUser         everyone, everything
 *   catch-all                          10000  catch-all        ByUser         everyone, everything
 *
 * The reference keeps the mandatory objects (exempt, catch-all) as here, and brings the suggested
 * ones back to this only while their autoupdate annotation allows it.
 */
import type { Obj } from '../api/meta';

export interface BootstrapConfig {
  mandatory: { priorityLevels: Obj[]; flowSchemas: Obj[] };
  suggested: { priorityLevels: Obj[]; flowSchemas: Obj[] };
}

const API_VERSION = 'flowcontrol.apiserver.svc.io/v1';
const AUTO_UPDATE = 'apf.kubernetes.io/autoupdate-spec';

const MASTERS = 'system:masters';
const NODES = 'system:nodes';
const AUTHENTICATED = 'system:authenticated';
const UNAUTHENTICATED = 'system:unauthenticated';
const SERVICE_ACCOUNTS = 'system:serviceaccounts';
const CONTROLLER_MANAGER = 'system:kube-controller-manager';
const SCHEDULER = 'system:kube-scheduler';
const CORE = '';
const COORDINATION = 'coordination.k8s.io';
const LEADER_VERBS = ['get', 'create', 'update'];

type Subject =
  | { kind: 'User'; user: { name: string } }
  | { kind: 'Group'; group: { name: string } }
  | { kind: 'ServiceAccount'; serviceAccount: { namespace: string; name: string } };
type ResourceRule = { verbs: string[]; apiGroups: string[]; resources: string[]; clusterScope?: true; namespaces: string[] };
type NonResourceRule = { verbs: string[]; nonResourceURLs: string[] };
type PolicyRule = { subjects: Subject[]; resourceRules?: ResourceRule[]; nonResourceRules?: NonResourceRule[] };
type Distinguisher = 'ByUser' | 'ByNamespace' | undefined;

function meta(name: string) {
  return { name, annotations: { [AUTO_UPDATE]: 'true' } };
}

function plc(name: string, spec: Record<string, unknown>): Obj {
  return { apiVersion: API_VERSION, kind: 'PriorityLevelConfiguration', metadata: meta(name), spec };
}

/** A Limited spec: queuing as [queues, handSize, queueLengthLimit], or none to reject. */
function limited(shares: number, lendable: number, queuing?: [number, number, number]): Record<string, unknown> {
  const limitResponse = queuing
    ? { type: 'Queue', queuing: { queues: queuing[0], handSize: queuing[1], queueLengthLimit: queuing[2] } }
    : { type: 'Reject' };
  return { type: 'Limited', limited: { nominalConcurrencyShares: shares, limitResponse, lendablePercent: lendable } };
}

function fs(name: string, plName: string, precedence: number, distinguisher: Distinguisher, ...rules: PolicyRule[]): Obj {
  return {
    apiVersion: API_VERSION,
    kind: 'FlowSchema',
    metadata: meta(name),
    spec: {
      priorityLevelConfiguration: { name: plName },
      matchingPrecedence: precedence,
      ...(distinguisher ? { distinguisherMethod: { type: distinguisher } } : {}),
      rules,
    },
  };
}

function users(...names: string[]): Subject[] {
  return names.map((name) => ({ kind: 'User', user: { name } }));
}

function groups(...names: string[]): Subject[] {
  return names.map((name) => ({ kind: 'Group', group: { name } }));
}

function sa(namespace: string, name: string): Subject {
  return { kind: 'ServiceAccount', serviceAccount: { namespace, name } };
}

function resourceRule(
  verbs: string[],
  apiGroups: string[],
  resources: string[],
  namespaces: string[],
  clusterScope: boolean,
): ResourceRule {
  // clusterScope: false is left out, as the reference's JSON (omitempty) leaves it out.
  return {
    verbs: [...verbs],
    apiGroups: [...apiGroups],
    resources: [...resources],
    ...(clusterScope ? { clusterScope } : {}),
    namespaces: [...namespaces],
  };
}

function nonResourceRule(verbs: string[], nonResourceURLs: string[]): NonResourceRule {
  return { verbs: [...verbs], nonResourceURLs: [...nonResourceURLs] };
}

/** Every verb on every resource (cluster-scoped or in any namespace) and every non-resource URL. */
function everything(subjects: Subject[]): PolicyRule {
  return {
    subjects,
    resourceRules: [resourceRule(['*'], ['*'], ['*'], ['*'], true)],
    nonResourceRules: [nonResourceRule(['*'], ['*'])],
  };
}

/** Fresh objects on every call (callers may mutate them). */
export function bootstrapConfig(): BootstrapConfig {
  const everyone = () => groups(UNAUTHENTICATED, AUTHENTICATED);
  const kubeSystemAll = () => [sa('kube-system', '*')];
  return {
    mandatory: {
      priorityLevels: [
        plc('catch-all', limited(5, 0)),
        plc('exempt', { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } }),
      ],
      flowSchemas: [
        fs('exempt', 'exempt', 1, undefined, everything(groups(MASTERS))),
        fs('catch-all', 'catch-all', 10000, 'ByUser', everything(everyone())),
      ],
    },
    suggested: {
      priorityLevels: [
        plc('system', limited(30, 33, [64, 6, 50])),
        plc('node-high', limited(40, 25, [64, 6, 50])),
        plc('leader-election', limited(10, 0, [16, 4, 50])),
        plc('workload-high', limited(40, 50, [128, 6, 50])),
        plc('workload-low', limited(100, 90, [128, 6, 50])),
        plc('global-default', limited(20, 50, [128, 6, 50])),
      ],
      flowSchemas: [
        fs('system-nodes', 'system', 500, 'ByUser', everything(groups(NODES))),
        fs('system-node-high', 'node-high', 400, 'ByUser', {
          subjects: groups(NODES),
          resourceRules: [
            resourceRule(['*'], [CORE], ['nodes', 'nodes/status'], ['*'], true),
            resourceRule(['*'], [COORDINATION], ['leases'], ['*'], false),
          ],
        }),
        fs('probes', 'exempt', 2, undefined, {
          subjects: everyone(),
          nonResourceRules: [nonResourceRule(['get'], ['/healthz', '/readyz', '/livez'])],
        }),
        fs('system-leader-election', 'leader-election', 100, 'ByUser', {
          subjects: [...users(CONTROLLER_MANAGER, SCHEDULER), ...kubeSystemAll()],
          resourceRules: [
            resourceRule(LEADER_VERBS, [CORE], ['endpoints', 'configmaps'], ['*'], false),
            resourceRule(LEADER_VERBS, [COORDINATION], ['leases'], ['*'], false),
          ],
        }),
        fs('workload-leader-election', 'leader-election', 200, 'ByUser', {
          subjects: kubeSystemAll(),
          resourceRules: [
            resourceRule(LEADER_VERBS, [CORE], ['endpoints', 'configmaps'], ['*'], false),
            resourceRule(LEADER_VERBS, [COORDINATION], ['leases'], ['*'], false),
          ],
        }),
        fs('endpoint-controller', 'workload-high', 150, 'ByUser', {
          subjects: [
            ...users(CONTROLLER_MANAGER),
            sa('kube-system', 'endpoint-controller'),
            sa('kube-system', 'endpointslicemirroring-controller'),
          ],
          resourceRules: [resourceRule(LEADER_VERBS, [CORE], ['endpoints'], ['*'], false)],
        }),
        fs('kube-controller-manager', 'workload-high', 800, 'ByNamespace', everything(users(CONTROLLER_MANAGER))),
        fs('kube-scheduler', 'workload-high', 800, 'ByNamespace', everything(users(SCHEDULER))),
        fs('kube-system-service-accounts', 'workload-high', 900, 'ByNamespace', everything(kubeSystemAll())),
        fs('service-accounts', 'workload-low', 9000, 'ByUser', everything(groups(SERVICE_ACCOUNTS))),
        fs('global-default', 'global-default', 9900, 'ByUser', everything(everyone())),
      ],
    },
  };
}
