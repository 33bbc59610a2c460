/**
 * Command-line flags, named like the reference API server's. `--help` lists them all.
 */
import { parseIPv4Range } from '../api/net';
import { isQuantity } from '../api/quantity';

export interface Config {
  bindAddress: string;
  port: number;
  dataDir: string;
  featureGates: Record<string, boolean>;
  /** The gates --feature-gates named, in order (the deprecated ones are warned about at start). */
  featureGatesSet: string[];
  runtimeConfig: Record<string, boolean>;
  tokenAuthFile: string;
  livezGracePeriodMs: number;
  shutdownDelayMs: number;
  maxRequestsInflight: number;
  maxMutatingRequestsInflight: number;
  requestTimeoutMs: number;
  /** --enable-priority-and-fairness: APF instead of the two in-flight limits. */
  enablePriorityAndFairness: boolean;
  /** --enable-ui: the live dashboard under /ui (src/ui/). */
  enableUi: boolean;
  /** --discovery-group-order: which spelling of a branded group discovery lists first (kubectl maps plain names to it). */
  discoveryGroupOrder: 'upstream-first' | 'svc-first';
  minRequestTimeoutSec: number;
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  /**
   * --proxy-client-cert-file / --proxy-client-key-file: the client certificate this server
   * presents to aggregated API servers (and their availability checks); both or neither.
   */
  proxyClientCertFile: string;
  proxyClientKeyFile: string;
  /**
   * --requestheader-client-ca-file / --requestheader-allowed-names: published in
   * kube-system/extension-apiserver-authentication for aggregated API servers to trust the proxy.
   */
  requestheaderClientCaFile: string;
  requestheaderAllowedNames: string[];
  fsync: 'always' | 'none';
  compactionIntervalMs: number;
  watchHistoryMs: number;
  /** --watch-cache-max-events / --watch-cache-max-bytes: bounds of each resource's history. */
  watchCacheMaxEvents: number;
  watchCacheMaxBytes: number;
  /** --pack-cold-values-after: objects unwritten this long are held compressed (0: never). */
  packColdValuesAfterMs: number;
  /** --own-write-seats: the server's own writes in flight at most (0: no bound). */
  ownWriteSeats: number;
  /** --event-ttl: how long an Event stays after its last write (0: for ever). */
  eventTtlMs: number;
  watchBookmarkIntervalMs: number;
  serviceClusterIPRange: string;
  serviceNodePortRange: [number, number];
  resourceQuotaSyncPeriodMs: number;
  /** The HPA controller's timings and tolerance (kube-controller-manager's --horizontal-pod-autoscaler-*). */
  hpa: {
    syncPeriodMs: number;
    downscaleStabilizationMs: number;
    tolerance: number;
    cpuInitializationPeriodMs: number;
    initialReadinessDelayMs: number;
  };
  /** Workers of the CEL pool (0: every expression inline). */
  celPoolSize: number;
  /** Workers of the codec pool (0: long lists encoded inline). */
  codecPoolSize: number;
  /** Deadline of an expression evaluation in the CEL pool. */
  celEvalDeadlineMs: number;
  /** --authorization-mode: RBAC (default) or AlwaysAllow. */
  authorizationMode: 'RBAC' | 'AlwaysAllow';
  serviceAccountIssuer: string;
  serviceAccountKeyFile: string;
  serviceAccountSigningKeyFile: string;
  auditPolicyFile: string;
  auditLogPath: string;
  auditLogMaxSize: number;
  auditLogMaxBackup: number;
  auditLogMaxAge: number;
  /** --etcd-servers: the etcd backend's endpoints (empty: the embedded store in the data dir). */
  etcdServers: string[];
  etcdPrefix: string;
  etcdCafile: string;
  etcdCertfile: string;
  etcdKeyfile: string;
  /** --leader-elect and its timing (the reference's kube-controller-manager flags). */
  leaderElect: boolean;
  leaderElectLeaseDurationMs: number;
  leaderElectRenewDeadlineMs: number;
  leaderElectRetryPeriodMs: number;
  /** --scheduler: run the built-in scheduler (default-scheduler) with the leader's controllers. */
  scheduler: boolean;
  /** --controllers: kube-controller-manager's list (`*` the default ones, `name` on, `-name` off). */
  controllers: string[];
  /** --simulated-nodes: nodes sim-node-0 … sim-node-<N-1> the server creates and runs (src/simulation). */
  simulatedNodes: number;
  /** --simulated-node-capacity: a simulated node's capacity (and allocatable), resource name → quantity. */
  simulatedNodeCapacity: Record<string, string>;
  simulatedNodeLeaseDurationMs: number;
  simulatedPodProfile: 'fast' | 'realistic';
  /** --job-pod-failure-backoff: the Job controller's back-off base after a failed pod (the reference's 10 s). */
  jobPodFailureBackoffMs: number;
  /** --cronjob-time-scale: the CronJob controller's clock runs this many times faster than real time (tests). */
  cronJobTimeScale: number;
  /** --cluster-cidr: simulated nodes' pod CIDRs are its /24s, in order. */
  clusterCIDR: string;
  /** The pod garbage collector: --terminated-pod-gc-threshold (kube-controller-manager's), its pass period and node quarantine. */
  terminatedPodGcThreshold: number;
  podGcPeriodMs: number;
  podGcQuarantineMs: number;
  /** The node lifecycle controller (kube-controller-manager's flags). */
  nodeMonitorPeriodMs: number;
  nodeMonitorGracePeriodMs: number;
  nodeStartupGracePeriodMs: number;
  nodeEvictionRate: number;
  secondaryNodeEvictionRate: number;
  unhealthyZoneThreshold: number;
  largeClusterSizeThreshold: number;
  /** DefaultTolerationSeconds admission: the tolerations' seconds. */
  defaultNotReadyTolerationSeconds: number;
  defaultUnreachableTolerationSeconds: number;
}

interface FlagDef {
  name: string;
  help: string;
  default: string;
  apply: (c: Config, v: string) => void;
}

/** Feature gates this server knows, with their defaults (spec 1, "Feature gates"). */
/** The controllers --controllers names (kube-controller-manager's names); all run by default. */
export const KNOWN_CONTROLLERS: readonly string[] = [
  'replicaset-controller',
  'replicationcontroller-controller',
  'deployment-controller',
  'statefulset-controller',
  'daemonset-controller',
  'horizontal-pod-autoscaler-controller',
  'serviceaccount-controller',
  'root-ca-certificate-publisher-controller',
  'job-controller',
  'cronjob-controller',
  'ttl-after-finished-controller',
  'pod-garbage-collector-controller',
  'endpoints-controller',
  'endpointslice-controller',
  'endpointslice-mirroring-controller',
  'persistentvolume-binder-controller',
];

/** The reference's name of a controller: `foo-controller` (the older short names are aliases). */
const canonical = (name: string): string => (name.endsWith('-controller') ? name : `${name}-controller`);

/** Whether --controllers runs `name` (a default-on controller; with or without the `-controller` suffix). */
export function controllerEnabled(c: Pick<Config, 'controllers'>, name: string): boolean {
  const want = canonical(name);
  let on = false;
  for (const entry of c.controllers) {
    if (entry === '*') on = true;
    else if (entry.startsWith('-') && canonical(entry.slice(1)) === want) return false;
    else if (canonical(entry) === want) on = true;
  }
  return on;
}

export const FEATURE_GATES: Record<string, boolean> = {
  APIResponseCompression: true,
  CBORServingAndStorage: false,
  WatchList: false,
  AllowUnsafeMalformedObjectDeletion: false,
  AuthorizeWithSelectors: false,
  ListFromCacheSnapshot: false,
  DeclarativeValidation: true,
  DeclarativeValidationTakeover: false,
  /** testing.svc.io FaultInjection and the engine that applies it (issue 40, src/faults). */
  FaultInjection: false,
  /** Beta in the reference's 1.34, off by default: serves MutatingAdmissionPolicy(Binding) v1beta1 and v1alpha1. */
  MutatingAdmissionPolicy: false,
  /**
   * Beta and on in the reference's 1.34: APF gives a LIST seats by the bytes it holds (objects ×
   * their average size, 100 kB a seat) instead of the objects it processes (100 a seat). On, as
   * the reference (bench/apf.ts APF_WIDTH=bytes compares the two).
   */
  SizeBasedListCostEstimate: true,
  // Beta (on) in 1.33: the aggregator sends the user's UID to aggregated APIs as X-Remote-Uid.
  RemoteRequestHeaderUID: true,
};

/**
 * Gates the reference has deprecated: setting one is warned about at start with component-base's
 * "Setting deprecated feature gate <name>=<value>. It will be removed in a future release."
 */
export const DEPRECATED_FEATURE_GATES: ReadonlySet<string> = new Set(['DeclarativeValidationTakeover']);

/** The start-up warnings for the gates set (component-base featuregate's texts). */
export function featureGateWarnings(c: Pick<Config, 'featureGates' | 'featureGatesSet'>): string[] {
  return c.featureGatesSet
    .filter((k) => DEPRECATED_FEATURE_GATES.has(k))
    .map((k) => `Setting deprecated feature gate ${k}=${c.featureGates[k]}. It will be removed in a future release.`);
}

/** A Go duration ("1m0s", "90s", "1h30m", "500ms") in milliseconds; a bare number is seconds. */
export function parseDuration(s: string): number {
  if (/^\d+$/.test(s)) return Number(s) * 1000;
  const re = /(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)/g;
  let total = 0;
  let consumed = 0;
  for (const m of s.matchAll(re)) {
    const n = Number(m[1]);
    const unit = m[2];
    total += unit === 'h' ? n * 3_600_000 : unit === 'm' ? n * 60_000 : unit === 's' ? n * 1000 : unit === 'ms' ? n : n / 1000;
    consumed += m[0].length;
  }
  if (consumed !== s.length || s.length === 0) throw new Error(`invalid duration "${s}"`);
  return total;
}

/** A comma-separated flag value: its items, trimmed, empty ones left out. */
const commaList = (v: string): string[] =>
  v
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');

function parseBool(v: string, what: string): boolean {
  if (v === 'true' || v === '') return true;
  if (v === 'false') return false;
  throw new Error(`${what}: invalid boolean "${v}"`);
}

function parseMapFlag(v: string, what: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of v.split(',')) {
    const p = part.trim();
    if (!p) continue;
    const eq = p.indexOf('=');
    const k = eq < 0 ? p : p.slice(0, eq);
    if (!k) throw new Error(`${what}: empty key in "${v}"`);
    out[k] = eq < 0 ? '' : p.slice(eq + 1);
  }
  return out;
}

function float(v: string, name: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0) throw new Error(`--${name}: invalid number "${v}"`);
  return n;
}

/** `cpu=32,memory=256Gi,pods=110` → resource name → quantity (each checked). */
export function parseCapacity(v: string): Record<string, string> {
  const out = parseMapFlag(v, 'capacity');
  for (const [k, q] of Object.entries(out)) if (!isQuantity(q)) throw new Error(`${k}: invalid quantity "${q}"`);
  return out;
}

function int(v: string, name: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name}: invalid number "${v}"`);
  return n;
}

const FLAGS: FlagDef[] = [
  {
    name: 'bind-address',
    default: '127.0.0.1',
    help: 'The IP address on which to listen for the --port port.',
    apply: (c, v) => {
      c.bindAddress = v;
    },
  },
  {
    name: 'port',
    default: '6443',
    help: 'The port on which to serve HTTPS (alias: --secure-port).',
    apply: (c, v) => {
      c.port = int(v, 'port');
    },
  },
  {
    name: 'secure-port',
    default: '',
    help: 'Alias of --port.',
    apply: (c, v) => {
      c.port = int(v, 'secure-port');
    },
  },
  {
    name: 'data-dir',
    default: './data',
    help: 'Directory of the embedded store, certificates, the admin token and kubeconfig.',
    apply: (c, v) => {
      c.dataDir = v;
    },
  },
  {
    name: 'feature-gates',
    default: '',
    help: `A set of key=value pairs for alpha/experimental features. Known gates: ${Object.entries(FEATURE_GATES)
      .map(([k, d]) => `${k}=true|false (default ${d})`)
      .join(', ')}.`,
    apply: (c, v) => {
      for (const [k, val] of Object.entries(parseMapFlag(v, '--feature-gates'))) {
        if (!(k in FEATURE_GATES)) throw new Error(`--feature-gates: unrecognized feature gate: ${k}`);
        c.featureGates[k] = parseBool(val, `--feature-gates ${k}`);
        if (!c.featureGatesSet.includes(k)) c.featureGatesSet.push(k);
      }
    },
  },
  {
    name: 'runtime-config',
    default: '',
    help: 'A set of key=value pairs that enable or disable built-in APIs: <group>/<version>, <group>/<version>/<resource>, api/all; a missing value means true.',
    apply: (c, v) => {
      for (const [k, val] of Object.entries(parseMapFlag(v, '--runtime-config')))
        c.runtimeConfig[k] = parseBool(val, `--runtime-config ${k}`);
    },
  },
  {
    name: 'token-auth-file',
    default: '',
    help: 'A CSV file of bearer tokens: token,user,uid,"group1,group2".',
    apply: (c, v) => {
      c.tokenAuthFile = v;
    },
  },
  {
    name: 'livez-grace-period',
    default: '0s',
    help: 'How long /livez assumes unfinished post-start hooks will complete successfully.',
    apply: (c, v) => {
      c.livezGracePeriodMs = parseDuration(v);
    },
  },
  {
    name: 'shutdown-delay-duration',
    default: '0s',
    help: 'On SIGTERM, how long to keep serving (with /readyz failing) before stopping to accept requests.',
    apply: (c, v) => {
      c.shutdownDelayMs = parseDuration(v);
    },
  },
  {
    name: 'max-requests-inflight',
    default: '400',
    help: 'Maximum non-mutating requests in flight; over it, 429. 0: no limit.',
    apply: (c, v) => {
      c.maxRequestsInflight = int(v, 'max-requests-inflight');
    },
  },
  {
    name: 'max-mutating-requests-inflight',
    default: '200',
    help: 'Maximum mutating requests in flight; over it, 429. 0: no limit.',
    apply: (c, v) => {
      c.maxMutatingRequestsInflight = int(v, 'max-mutating-requests-inflight');
    },
  },
  {
    name: 'enable-priority-and-fairness',
    default: 'true',
    help: 'API Priority and Fairness: classify requests by FlowSchema and share --max-requests-inflight + --max-mutating-requests-inflight seats among priority levels with fair queuing. false: the two in-flight limits alone.',
    apply: (c, v) => {
      c.enablePriorityAndFairness = parseBool(v, 'enable-priority-and-fairness');
    },
  },
  {
    name: 'enable-ui',
    default: 'true',
    help: 'Serve the live dashboard under /ui (read-only; log in with a bearer token; authorized by RBAC as the non-resource URL /ui/*, which only cluster-admin holds by default). Costs nothing while no one has it open.',
    apply: (c, v) => {
      c.enableUi = parseBool(v, 'enable-ui');
    },
  },
  {
    name: 'discovery-group-order',
    default: 'upstream-first',
    help: 'Which spelling of each *.svc.io group discovery lists first, with the short names and categories: upstream-first (the *.k8s.io names, so that kubectl maps plain resource names to groups it has types for and its typed commands work: set subject, create token, drain, auth reconcile, ...) or svc-first. Both spellings are always served.',
    apply: (c, v) => {
      if (v !== 'upstream-first' && v !== 'svc-first') throw new Error('must be upstream-first or svc-first');
      c.discoveryGroupOrder = v;
    },
  },
  {
    name: 'request-timeout',
    default: '1m0s',
    help: 'Timeout of non-long-running requests.',
    apply: (c, v) => {
      c.requestTimeoutMs = parseDuration(v);
    },
  },
  {
    name: 'audit-policy-file',
    default: '',
    help: 'Path to the audit policy (audit.k8s.io/v1 Policy); with --audit-log-path, requests are audited.',
    apply: (c, v) => {
      c.auditPolicyFile = v;
    },
  },
  {
    name: 'audit-log-path',
    default: '',
    help: 'Audit events are written to this file as JSON lines ("-" for standard output).',
    apply: (c, v) => {
      c.auditLogPath = v;
    },
  },
  {
    name: 'audit-log-maxsize',
    default: '0',
    help: 'Megabytes an audit log file may reach before it is rotated (0: no rotation).',
    apply: (c, v) => {
      c.auditLogMaxSize = int(v, 'audit-log-maxsize');
    },
  },
  {
    name: 'audit-log-maxbackup',
    default: '0',
    help: 'Rotated audit log files to keep (0: all).',
    apply: (c, v) => {
      c.auditLogMaxBackup = int(v, 'audit-log-maxbackup');
    },
  },
  {
    name: 'audit-log-maxage',
    default: '0',
    help: 'Days to keep rotated audit log files (0: no limit).',
    apply: (c, v) => {
      c.auditLogMaxAge = int(v, 'audit-log-maxage');
    },
  },
  {
    name: 'service-account-issuer',
    default: 'https://kubernetes.default.svc.cluster.local',
    help: 'Issuer (iss) of service account tokens, and the audience they must name.',
    apply: (c, v) => {
      c.serviceAccountIssuer = v;
    },
  },
  {
    name: 'service-account-key-file',
    default: '',
    help: 'PEM public key verifying service account tokens (default: <data-dir>/sa.pub, made on first start).',
    apply: (c, v) => {
      c.serviceAccountKeyFile = v;
    },
  },
  {
    name: 'service-account-signing-key-file',
    default: '',
    help: 'PEM (PKCS#8) private key signing service account tokens (default: <data-dir>/sa.key, made on first start).',
    apply: (c, v) => {
      c.serviceAccountSigningKeyFile = v;
    },
  },
  {
    name: 'authorization-mode',
    default: 'RBAC',
    help: 'Ordered list of authorizers: RBAC, AlwaysAllow (Node is accepted and has no effect here).',
    apply: (c, v) => {
      const modes = v.split(',').map((m) => m.trim());
      for (const m of modes)
        if (!['RBAC', 'AlwaysAllow', 'Node'].includes(m))
          throw new Error(`authorization-mode "${m}" is not a valid mode (RBAC, AlwaysAllow, Node)`);
      c.authorizationMode =
        modes.includes('AlwaysAllow') && !modes.includes('RBAC') ? 'AlwaysAllow' : modes.includes('RBAC') ? 'RBAC' : 'AlwaysAllow';
    },
  },
  {
    name: 'cel-pool-size',
    default: '1',
    help: 'Worker threads for CEL evaluations whose worst case is large (each runs with a deadline); 0 evaluates everything inline.',
    apply: (c, v) => {
      c.celPoolSize = int(v, 'cel-pool-size');
    },
  },
  {
    name: 'codec-pool-size',
    default: '1',
    help: 'Worker threads that encode and compress the chunks of long lists (JSON, protobuf, CBOR); 0 encodes them inline (still streamed).',
    apply: (c, v) => {
      c.codecPoolSize = int(v, 'codec-pool-size');
    },
  },
  {
    name: 'cel-eval-deadline',
    default: '1s',
    help: 'Deadline of a CEL evaluation in the pool; past it the worker is replaced and the evaluation is an error under the failure policy.',
    apply: (c, v) => {
      c.celEvalDeadlineMs = parseDuration(v);
    },
  },
  {
    name: 'min-request-timeout',
    default: '1800',
    help: 'Seconds; a watch without timeoutSeconds ends after a random time between this and twice this.',
    apply: (c, v) => {
      c.minRequestTimeoutSec = int(v, 'min-request-timeout');
    },
  },
  {
    name: 'tls-cert-file',
    default: '',
    help: 'Serving certificate (PEM). Without it one is generated in the data dir.',
    apply: (c, v) => {
      c.tlsCertFile = v;
    },
  },
  {
    name: 'tls-private-key-file',
    default: '',
    help: 'Private key of --tls-cert-file (PEM).',
    apply: (c, v) => {
      c.tlsPrivateKeyFile = v;
    },
  },
  {
    name: 'proxy-client-cert-file',
    default: '',
    help: 'Client certificate (PEM) presented to aggregated API servers when proxying to them; they trust it through their --requestheader-client-ca-file. With --proxy-client-key-file.',
    apply: (c, v) => {
      c.proxyClientCertFile = v;
    },
  },
  {
    name: 'proxy-client-key-file',
    default: '',
    help: 'Private key (PEM) of --proxy-client-cert-file.',
    apply: (c, v) => {
      c.proxyClientKeyFile = v;
    },
  },
  {
    name: 'requestheader-client-ca-file',
    default: '',
    help: 'CA (PEM) that signs --proxy-client-cert-file; published in kube-system/extension-apiserver-authentication, where aggregated API servers learn to trust the X-Remote-* headers of requests presenting it.',
    apply: (c, v) => {
      c.requestheaderClientCaFile = v;
    },
  },
  {
    name: 'requestheader-allowed-names',
    default: '',
    help: 'Comma-separated common names the front proxy client certificate may have (published with --requestheader-client-ca-file; empty: any).',
    apply: (c, v) => {
      c.requestheaderAllowedNames = commaList(v);
    },
  },
  {
    name: 'fsync',
    default: 'always',
    help: "'always': a write is acknowledged once durable. 'none': no fdatasync (throwaway benchmark runs only).",
    apply: (c, v) => {
      if (v !== 'always' && v !== 'none') throw new Error(`--fsync: must be always or none, not "${v}"`);
      c.fsync = v;
    },
  },
  {
    name: 'etcd-servers',
    default: '',
    help: 'Comma-separated etcd client URLs (http:// or https://). Set: the store is etcd (several replicas may share it); unset: the embedded store in --data-dir.',
    apply: (c, v) => {
      c.etcdServers = commaList(v);
    },
  },
  {
    name: 'etcd-prefix',
    default: '/registry',
    help: 'The prefix of every key in etcd.',
    apply: (c, v) => {
      c.etcdPrefix = v;
    },
  },
  {
    name: 'etcd-cafile',
    default: '',
    help: 'SSL Certificate Authority file used to secure etcd communication.',
    apply: (c, v) => {
      c.etcdCafile = v;
    },
  },
  {
    name: 'etcd-certfile',
    default: '',
    help: 'SSL certification file used to secure etcd communication.',
    apply: (c, v) => {
      c.etcdCertfile = v;
    },
  },
  {
    name: 'etcd-keyfile',
    default: '',
    help: 'SSL key file used to secure etcd communication.',
    apply: (c, v) => {
      c.etcdKeyfile = v;
    },
  },
  {
    name: 'leader-elect',
    default: 'true',
    help: 'On etcd, elect one replica (Lease kube-system/svc-apiserver-controllers) to run the controllers that write for the cluster. false: this replica runs them without a Lease (only one replica may then run).',
    apply: (c, v) => {
      c.leaderElect = parseBool(v, 'leader-elect');
    },
  },
  {
    name: 'scheduler',
    default: 'true',
    help: 'Run the built-in scheduler: pods of schedulerName default-scheduler (or none) are bound to nodes as kube-scheduler binds them, once the cluster has a Node. false: pods stay Pending for an external scheduler.',
    apply: (c, v) => {
      c.scheduler = parseBool(v, 'scheduler');
    },
  },
  {
    name: 'controllers',
    default: '*',
    help: `The controllers to run, as kube-controller-manager's --controllers: '*' runs the default ones, 'foo' enables foo, '-foo' disables it. Known: ${KNOWN_CONTROLLERS.join(', ')}.`,
    apply: (c, v) => {
      const list = v
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x.length > 0);
      for (const x of list) {
        const name = x.replace(/^-/, '');
        if (name !== '*' && !KNOWN_CONTROLLERS.includes(canonical(name))) throw new Error(`--controllers: unknown controller "${name}"`);
      }
      c.controllers = list;
    },
  },
  {
    name: 'leader-elect-lease-duration',
    default: '15s',
    help: 'How long non-leaders wait after the last observed renewal before taking the Lease.',
    apply: (c, v) => {
      c.leaderElectLeaseDurationMs = parseDuration(v);
    },
  },
  {
    name: 'leader-elect-renew-deadline',
    default: '10s',
    help: 'How long the leader keeps leading without a successful renewal.',
    apply: (c, v) => {
      c.leaderElectRenewDeadlineMs = parseDuration(v);
    },
  },
  {
    name: 'leader-elect-retry-period',
    default: '2s',
    help: 'How often candidates try to acquire or renew the Lease.',
    apply: (c, v) => {
      c.leaderElectRetryPeriodMs = parseDuration(v);
    },
  },
  {
    name: 'simulated-nodes',
    default: '0',
    help: 'Simulated nodes sim-node-0 … sim-node-<N-1>, created at start if missing and run by the server (status, Lease, the kubelet of their pods). Nodes annotated sim.svc.io/managed=true are run too.',
    apply: (c, v) => {
      c.simulatedNodes = int(v, 'simulated-nodes');
    },
  },
  {
    name: 'simulated-node-capacity',
    default: 'cpu=32,memory=256Gi,pods=110',
    help: "A simulated node's capacity and allocatable (a node's annotation sim.svc.io/capacity overrides it, in the same form).",
    apply: (c, v) => {
      c.simulatedNodeCapacity = parseCapacity(v);
    },
  },
  {
    name: 'simulated-node-lease-duration',
    default: '40s',
    help: "A simulated node's Lease duration; renewed every quarter of it with 4% jitter, as the kubelet.",
    apply: (c, v) => {
      c.simulatedNodeLeaseDurationMs = parseDuration(v);
      if (c.simulatedNodeLeaseDurationMs < 1000) throw new Error('must be at least 1s');
    },
  },
  {
    name: 'simulated-pod-profile',
    default: 'fast',
    help: "Delays of a simulated kubelet's steps: fast (none) or realistic (about 1 s per step, jitter up to 5 s).",
    apply: (c, v) => {
      if (v !== 'fast' && v !== 'realistic') throw new Error('must be fast or realistic');
      c.simulatedPodProfile = v;
    },
  },
  {
    name: 'job-pod-failure-backoff',
    default: '10s',
    help: "The Job controller's delay before replacing a failed pod: this doubled per failure since the last success, at most 60 times it (the reference's 10s; a test aid).",
    apply: (c, v) => {
      c.jobPodFailureBackoffMs = parseDuration(v);
    },
  },
  {
    name: 'cronjob-time-scale',
    default: '1',
    help: "The CronJob controller's clock runs this many times as fast as real time from the server's start (a test aid: 60 makes `* * * * *` fire every second).",
    apply: (c, v) => {
      const n = Number(v);
      if (!Number.isFinite(n) || n < 1) throw new Error('must be a number >= 1');
      c.cronJobTimeScale = n;
    },
  },
  {
    name: 'terminated-pod-gc-threshold',
    default: '12500',
    help: 'Terminated pods (phase Succeeded or Failed) kept at most: the pod garbage collector deletes the rest, evicted and oldest first. 0 keeps them all.',
    apply: (c, v) => {
      c.terminatedPodGcThreshold = int(v, 'terminated-pod-gc-threshold');
    },
  },
  {
    name: 'pod-gc-period',
    default: '20s',
    help: "How often the pod garbage collector passes over the pods (the reference's fixed gcCheckPeriod; shorter for tests).",
    apply: (c, v) => {
      const ms = parseDuration(v);
      if (ms <= 0) throw new Error('must be positive');
      c.podGcPeriodMs = ms;
    },
  },
  {
    name: 'pod-gc-quarantine',
    default: '40s',
    help: "How long a node that pods are bound to may be missing before the pod garbage collector reads it from the store and, when it is gone, deletes its pods (the reference's fixed quarantineTime).",
    apply: (c, v) => {
      c.podGcQuarantineMs = parseDuration(v);
    },
  },
  {
    name: 'cluster-cidr',
    default: '10.64.0.0/10',
    help: "IPv4 CIDR of pods: each simulated node's spec.podCIDR is one of its /24s (16,384 of them by default).",
    apply: (c, v) => {
      const r = parseIPv4Range(v);
      if (r.size < 256) throw new Error('must hold at least one /24');
      c.clusterCIDR = v;
    },
  },
  {
    name: 'node-monitor-period',
    default: '5s',
    help: 'How often the node lifecycle controller checks the nodes.',
    apply: (c, v) => {
      c.nodeMonitorPeriodMs = parseDuration(v);
    },
  },
  {
    name: 'node-monitor-grace-period',
    default: '50s',
    help: 'How long a node may go without renewing its Lease (or posting status) before it is marked unhealthy (Ready=Unknown) and tainted unreachable.',
    apply: (c, v) => {
      c.nodeMonitorGracePeriodMs = parseDuration(v);
    },
  },
  {
    name: 'node-startup-grace-period',
    default: '1m0s',
    help: 'How long a node that never posted status may stay so before it is marked unhealthy.',
    apply: (c, v) => {
      c.nodeStartupGracePeriodMs = parseDuration(v);
    },
  },
  {
    name: 'node-eviction-rate',
    default: '0.1',
    help: 'Nodes per second tainted NoExecute (their pods evicted) in a healthy zone.',
    apply: (c, v) => {
      c.nodeEvictionRate = float(v, 'node-eviction-rate');
    },
  },
  {
    name: 'secondary-node-eviction-rate',
    default: '0.01',
    help: 'Nodes per second tainted NoExecute in a partially disrupted zone (0 in zones of at most --large-cluster-size-threshold nodes).',
    apply: (c, v) => {
      c.secondaryNodeEvictionRate = float(v, 'secondary-node-eviction-rate');
    },
  },
  {
    name: 'unhealthy-zone-threshold',
    default: '0.55',
    help: 'Share of not-Ready nodes (at least 3) that makes a zone partially disrupted.',
    apply: (c, v) => {
      c.unhealthyZoneThreshold = float(v, 'unhealthy-zone-threshold');
    },
  },
  {
    name: 'large-cluster-size-threshold',
    default: '50',
    help: 'Zones of more nodes than this are evicted at the secondary rate when partially disrupted.',
    apply: (c, v) => {
      c.largeClusterSizeThreshold = int(v, 'large-cluster-size-threshold');
    },
  },
  {
    name: 'default-not-ready-toleration-seconds',
    default: '300',
    help: 'tolerationSeconds of the node.kubernetes.io/not-ready:NoExecute toleration DefaultTolerationSeconds admission adds to pods without one.',
    apply: (c, v) => {
      c.defaultNotReadyTolerationSeconds = int(v, 'default-not-ready-toleration-seconds');
    },
  },
  {
    name: 'default-unreachable-toleration-seconds',
    default: '300',
    help: 'tolerationSeconds of the node.kubernetes.io/unreachable:NoExecute toleration DefaultTolerationSeconds admission adds to pods without one.',
    apply: (c, v) => {
      c.defaultUnreachableTolerationSeconds = int(v, 'default-unreachable-toleration-seconds');
    },
  },
  {
    name: 'etcd-compaction-interval',
    default: '5m0s',
    help: 'Interval of store compaction; history (watch resumption, continue tokens) is kept at least this long. 0 turns compaction off.',
    apply: (c, v) => {
      c.compactionIntervalMs = parseDuration(v);
    },
  },
  {
    name: 'watch-history-window',
    default: '5m0s',
    help: 'How long the watch cache keeps events; a watch from an older resourceVersion gets 410 Gone.',
    apply: (c, v) => {
      c.watchHistoryMs = parseDuration(v);
    },
  },
  {
    name: 'event-ttl',
    default: '1h0m0s',
    help: 'Amount of time to retain events (after their last write; 0 keeps them), as the reference.',
    apply: (c, v) => {
      c.eventTtlMs = parseDuration(v);
    },
  },
  {
    name: 'own-write-seats',
    default: '32',
    help: "The server's own writes (controllers, scheduler, simulated kubelets, their events) in flight at most; the rest wait their turn, so that clients' requests are not queued behind a burst of them (0: no bound).",
    apply: (c, v) => {
      c.ownWriteSeats = int(v, 'own-write-seats');
    },
  },
  {
    name: 'watch-cache-max-events',
    default: '102400',
    help: "Most events each resource's watch cache keeps (newest first) whatever their age (the reference's upper bound, 100 x 1024); a watch from an evicted resourceVersion gets 410 Gone.",
    apply: (c, v) => {
      c.watchCacheMaxEvents = int(v, 'watch-cache-max-events');
    },
  },
  {
    name: 'watch-cache-max-bytes',
    default: '67108864',
    help: "Most bytes of stored values each resource's watch cache keeps for its events (64 MiB: the store's own history is on disk, so this is what churn costs the heap, and about 3x that in RSS as the events are spread over the allocator's blocks); a watch from an evicted resourceVersion gets 410 Gone.",
    apply: (c, v) => {
      c.watchCacheMaxBytes = int(v, 'watch-cache-max-bytes');
    },
  },
  {
    name: 'pack-cold-values-after',
    default: '30s',
    help: "Objects not written for this long are held compressed in memory (zstd, or deflate where libzstd is missing, with a dictionary per resource: a Ready pod's 4 KB to ~0.2-0.3 KB, an Event's 1 KB to ~0.2 KB), and inflated when read; 0 keeps every value as written. The largest part of the server's memory at scale.",
    apply: (c, v) => {
      c.packColdValuesAfterMs = parseDuration(v);
    },
  },
  {
    name: 'watch-bookmark-interval',
    default: '1m0s',
    help: 'Interval of BOOKMARK events on watches that allow them.',
    apply: (c, v) => {
      c.watchBookmarkIntervalMs = parseDuration(v);
    },
  },
  {
    name: 'horizontal-pod-autoscaler-sync-period',
    default: '15s',
    help: 'How often the HorizontalPodAutoscaler controller reconciles each autoscaler.',
    apply: (c, v) => {
      c.hpa.syncPeriodMs = parseDuration(v);
    },
  },
  {
    name: 'horizontal-pod-autoscaler-downscale-stabilization',
    default: '5m0s',
    help: 'The scale-down stabilization window of autoscalers that do not set one: the highest recommendation within it is applied.',
    apply: (c, v) => {
      c.hpa.downscaleStabilizationMs = parseDuration(v);
    },
  },
  {
    name: 'horizontal-pod-autoscaler-tolerance',
    default: '0.1',
    help: 'The minimum change (from 1.0) of the desired to actual metric ratio for the autoscaler to scale.',
    apply: (c, v) => {
      const n = Number(v);
      if (!Number.isFinite(n) || n < 0) throw new Error(`--horizontal-pod-autoscaler-tolerance: invalid value "${v}"`);
      c.hpa.tolerance = n;
    },
  },
  {
    name: 'horizontal-pod-autoscaler-cpu-initialization-period',
    default: '5m0s',
    help: 'After a pod starts, the period in which its CPU samples may be skipped (pods that became ready within the metric window).',
    apply: (c, v) => {
      c.hpa.cpuInitializationPeriodMs = parseDuration(v);
    },
  },
  {
    name: 'horizontal-pod-autoscaler-initial-readiness-delay',
    default: '30s',
    help: 'After a pod starts, the period in which its readiness changes are taken as initial readiness.',
    apply: (c, v) => {
      c.hpa.initialReadinessDelayMs = parseDuration(v);
    },
  },
  {
    name: 'resource-quota-sync-period',
    default: '5m0s',
    help: 'Period of the full recomputation of every ResourceQuota status (changes are picked up at once).',
    apply: (c, v) => {
      c.resourceQuotaSyncPeriodMs = parseDuration(v);
    },
  },
  {
    name: 'service-cluster-ip-range',
    default: '10.0.0.0/24',
    help: 'IPv4 CIDR of Service cluster IPs (its first address is the kubernetes Service).',
    apply: (c, v) => {
      parseIPv4Range(v);
      c.serviceClusterIPRange = v;
    },
  },
  {
    name: 'service-node-port-range',
    default: '30000-32767',
    help: 'Port range of Services of type NodePort and LoadBalancer (inclusive).',
    apply: (c, v) => {
      const m = /^(\d+)-(\d+)$/.exec(v);
      const lo = Number(m?.[1]);
      const hi = Number(m?.[2]);
      if (!m || lo < 1 || hi > 65535 || lo > hi) throw new Error(`--service-node-port-range: "${v}" is not a port range like 30000-32767`);
      c.serviceNodePortRange = [lo, hi];
    },
  },
];

export function helpText(): string {
  const lines = ['Usage: svc-apiserver [flags]', '', 'Flags:'];
  for (const f of FLAGS)
    lines.push(`      --${f.name}${f.default ? ` (default ${JSON.stringify(f.default)})` : ''}`, `            ${f.help}`);
  lines.push('  -h, --help', '            Show this help.');
  return `${lines.join('\n')}\n`;
}

/** Parse argv (without the program); returns undefined for --help. Throws on a bad flag. */
export function parseFlags(argv: string[]): Config | undefined {
  const c: Config = {
    bindAddress: '',
    port: 0,
    dataDir: '',
    featureGates: { ...FEATURE_GATES },
    featureGatesSet: [],
    runtimeConfig: {},
    tokenAuthFile: '',
    livezGracePeriodMs: 0,
    shutdownDelayMs: 0,
    maxRequestsInflight: 0,
    maxMutatingRequestsInflight: 0,
    requestTimeoutMs: 0,
    enablePriorityAndFairness: true,
    enableUi: true,
    discoveryGroupOrder: 'upstream-first',
    etcdServers: [],
    etcdPrefix: '',
    etcdCafile: '',
    etcdCertfile: '',
    etcdKeyfile: '',
    leaderElect: true,
    controllers: ['*'],
    scheduler: true,
    leaderElectLeaseDurationMs: 0,
    leaderElectRenewDeadlineMs: 0,
    leaderElectRetryPeriodMs: 0,
    minRequestTimeoutSec: 0,
    tlsCertFile: '',
    tlsPrivateKeyFile: '',
    proxyClientCertFile: '',
    proxyClientKeyFile: '',
    requestheaderClientCaFile: '',
    requestheaderAllowedNames: [],
    fsync: 'always',
    compactionIntervalMs: 0,
    watchHistoryMs: 0,
    watchCacheMaxEvents: 0,
    watchCacheMaxBytes: 0,
    packColdValuesAfterMs: 0,
    ownWriteSeats: 0,
    eventTtlMs: 0,
    watchBookmarkIntervalMs: 0,
    serviceClusterIPRange: '',
    serviceNodePortRange: [0, 0],
    resourceQuotaSyncPeriodMs: 0,
    hpa: { syncPeriodMs: 0, downscaleStabilizationMs: 0, tolerance: 0, cpuInitializationPeriodMs: 0, initialReadinessDelayMs: 0 },
    celPoolSize: 0,
    codecPoolSize: 0,
    celEvalDeadlineMs: 0,
    authorizationMode: 'RBAC',
    serviceAccountIssuer: '',
    serviceAccountKeyFile: '',
    serviceAccountSigningKeyFile: '',
    auditPolicyFile: '',
    auditLogPath: '',
    auditLogMaxSize: 0,
    auditLogMaxBackup: 0,
    auditLogMaxAge: 0,
    simulatedNodes: 0,
    simulatedNodeCapacity: {},
    simulatedNodeLeaseDurationMs: 0,
    simulatedPodProfile: 'fast',
    jobPodFailureBackoffMs: 0,
    cronJobTimeScale: 1,
    clusterCIDR: '',
    terminatedPodGcThreshold: 0,
    podGcPeriodMs: 0,
    podGcQuarantineMs: 0,
    nodeMonitorPeriodMs: 0,
    nodeMonitorGracePeriodMs: 0,
    nodeStartupGracePeriodMs: 0,
    nodeEvictionRate: 0,
    secondaryNodeEvictionRate: 0,
    unhealthyZoneThreshold: 0,
    largeClusterSizeThreshold: 0,
    defaultNotReadyTolerationSeconds: 0,
    defaultUnreachableTolerationSeconds: 0,
  };
  for (const f of FLAGS) if (f.default !== '') f.apply(c, f.default);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '-h' || a === '--help') return undefined;
    const m = /^--([a-z0-9-]+)(?:=(.*))?$/s.exec(a);
    if (!m) throw new Error(`unknown argument "${a}" (see --help)`);
    const f = FLAGS.find((x) => x.name === m[1]);
    if (!f) throw new Error(`unknown flag: --${m[1]} (see --help)`);
    let v = m[2];
    if (v === undefined) {
      v = argv[++i];
      if (v === undefined) throw new Error(`flag needs an argument: --${f.name}`);
    }
    try {
      f.apply(c, v);
    } catch (e) {
      // As pflag: name the flag and the argument.
      const why = (e as Error).message.replace(new RegExp(`^--${f.name}:? `), '');
      throw new Error(`invalid argument ${JSON.stringify(v)} for "--${f.name}" flag: ${why}`);
    }
  }
  if ((c.proxyClientCertFile === '') !== (c.proxyClientKeyFile === ''))
    throw new Error('--proxy-client-cert-file and --proxy-client-key-file must be given together');
  return c;
}
