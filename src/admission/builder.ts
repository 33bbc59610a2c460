/**
 * The admission chain as the server builds it: its plugins in one list, in the reference's order
 * (its RecommendedPluginOrder: LimitRanger, ServiceAccount, Priority, DefaultTolerationSeconds, DefaultStorageClass,
 * StorageObjectInUseProtection, DefaultIngressClass, CertificateApproval, CertificateSigning, CertificateSubjectRestriction,
 * ..., ValidatingAdmissionPolicy, ..., ResourceQuota
 * last, so that a request refused by an earlier plugin reserves no quota), each with the kinds it
 * applies to. Built-in and custom kinds get their chains from the same list. The plugins reach
 * other resources through the registry they are built with (the reference's loopback client):
 * their stores and caches are resolved when first used.
 */
import type { Obj } from '../api/meta';
import { StatusError } from '../api/status';
import type { Authorizer } from '../auth/authz';
import type { RbacIndex } from '../auth/rbac';
import { decodeStored } from '../codec/stored';
import { ServiceResolver as Services } from '../kinds/service-resolver';
import { AdmissionChain, type Plugin } from '../registry/admission';
import type { Resources } from '../registry/api-registry';
import type { ResourceStore } from '../registry/generic';
import type { KindDef } from '../registry/kind';
import { ALL_OBJECTS } from '../registry/list';
import type { SchemaSet } from '../schema/engine';
import { CertificateAdmission } from './certificates';
import { DefaultIngressClass } from './default-ingress-class';
import { DefaultTolerationSeconds } from './default-toleration-seconds';
import { FaultInjectionAuthorization } from './fault-injection';
import { LimitRanger } from './limit-ranger';
import type { CelPool } from './policy/cel-pool';
import { mutatingPolicyPlugin, mutatingPolicyServed } from './policy/mutating-builder';
import type { MutatingPolicyAdmission, MutationCheck } from './policy/mutating-plugin';
import { ADMISSION_GROUP, PolicyAdmission, type PolicyCheck } from './policy/plugin';
import { PolicyStatusController } from './policy/status';
import { PriorityAdmission } from './priority';
import { QuotaAdmission } from './quota';
import { RbacEscalation } from './rbac-escalation';
import { ServiceAccountAdmission } from './service-account';
import { DefaultStorageClass, StorageObjectInUseProtection } from './storage';
import type { ServiceResolver } from './webhook/client';
import { ConversionWebhooks } from './webhook/conversion';
import { servedEquivalents } from './webhook/equivalents';
import type { HookType } from './webhook/hooks';
import { WebhookAdmission, type WebhookCall } from './webhook/plugin';

const RBAC_GROUP = 'rbac.authorization.svc.io';
const RBAC_KINDS = new Set(['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings']);

export interface AdmissionDeps {
  authorizer: Authorizer;
  rbac: RbacIndex;
  schemas: SchemaSet;
  /** CEL evaluations with a large worst case run here (absent: inline). */
  celPool?: CelPool;
  onPolicyCheck?: (c: PolicyCheck) => void;
  /** Each admission webhook call (the apiserver_admission_webhook_* metrics). */
  onWebhookCall?: (c: WebhookCall) => void;
  /** Each MutatingAdmissionPolicy mutation's outcome (metrics). */
  onMutatingPolicyCheck?: (c: MutationCheck) => void;
  /** DefaultTolerationSeconds: the seconds of the not-ready and unreachable tolerations it adds. */
  defaultTolerationSeconds?: { notReady: number; unreachable: number };
  log: (msg: string) => void;
}

/** One plugin and the kinds whose chains it is in. */
interface Entry {
  plugin: Plugin;
  kinds: (def: KindDef) => boolean;
}

export class Admission {
  private policy: PolicyAdmission | undefined;
  private webhooks: WebhookAdmission | undefined;
  /** Services to endpoints, for webhooks referenced by Service (set when the registry is built). */
  private resolver: ServiceResolver = (_ns, name) => {
    throw new Error(`service "${name}" not found`);
  };
  /** CRD conversion webhooks, reaching their Services as admission webhooks do. */
  readonly conversions: ConversionWebhooks;
  /** MutatingAdmissionPolicy: in every chain, started only where its kinds are served (the MutatingAdmissionPolicy gate). */
  private mutatingPolicy: MutatingPolicyAdmission | undefined;
  private policyStatus: PolicyStatusController | undefined;
  private resources: Resources | undefined;

  private ownWritesPlugin: Plugin | undefined;
  /** A plugin given after the chains are built: it sees every kind's writes from then on. */
  private readonly ownWrites: Plugin = {
    name: 'OwnWriteFaults',
    handles: (g, r, s, op) => this.ownWritesPlugin?.handles(g, r, s, op) ?? false,
    validate: (a) => this.ownWritesPlugin?.validate?.(a),
  };

  /** Fault injection into the server's own writes (src/faults): set once, after the registry is built. */
  setOwnWriteFaults(p: Plugin): void {
    this.ownWritesPlugin = p;
  }

  constructor(private readonly d: AdmissionDeps) {
    this.conversions = new ConversionWebhooks((ns, name, port) => this.resolver(ns, name, port), d.log);
  }

  /**
   * For the registry: builds the plugins with it and answers each kind's chain. Called once, in
   * the registry's constructor, before any kind is served: every plugin looks up the resources it
   * reads when it first needs them, and does nothing where they are not served.
   */
  readonly chains = (resources: Resources): ((def: KindDef) => AdmissionChain | undefined) => {
    if (this.resources) throw new Error('bug: admission built twice');
    this.resources = resources;
    const store = (group: string, plural: string): ResourceStore | undefined => resources.lookup(group, 'v1', plural);
    const fromCache = async (s: ResourceStore, prefix: string): Promise<Obj[]> => {
      const cache = s.watchCache();
      await cache.start();
      return cache.list(prefix).map((c) => c.obj);
    };
    const limitRanger = new LimitRanger(async (namespace) => {
      const limitRanges = store('', 'limitranges');
      if (!limitRanges) return [];
      const cached = await fromCache(limitRanges, `${limitRanges.prefix}${namespace}/`);
      if (cached.length > 0) return cached;
      // None cached: a consistent list (as the reference's live lookup), so a LimitRange created
      // just before the pod applies to it although the cache has not seen it yet.
      return (await limitRanges.list(namespace, ALL_OBJECTS)).items.map((i) => i.obj);
    });
    const served = (plural: string) => {
      const s = store(ADMISSION_GROUP, plural);
      if (!s) throw new Error(`bug: ${ADMISSION_GROUP}/${plural} is not served`);
      return s.watchCache();
    };
    this.policy = new PolicyAdmission({
      policies: () => served('validatingadmissionpolicies'),
      bindings: () => served('validatingadmissionpolicybindings'),
      params: (apiVersion, kind) => {
        const slash = apiVersion.indexOf('/');
        const s = resources.byGroupVersionKind(slash < 0 ? '' : apiVersion.slice(0, slash), apiVersion.slice(slash + 1), kind);
        if (!s) return undefined;
        return {
          namespaced: s.def.namespaced,
          get: async (namespace, name) => (await fromCache(s, s.key(namespace, name))).find((o) => o.metadata.name === name),
          list: (namespace) => fromCache(s, s.def.namespaced ? `${s.prefix}${namespace}/` : s.prefix),
        };
      },
      namespace: async (name) => {
        const namespaces = store('', 'namespaces');
        return namespaces && (await fromCache(namespaces, namespaces.key('', name))).find((o) => o.metadata.name === name);
      },
      decider: (user) => this.d.authorizer.decider(user),
      pool: this.d.celPool,
      onCheck: this.d.onPolicyCheck,
      log: this.d.log,
    });
    this.webhooks = new WebhookAdmission({
      configurations: (type: HookType) => served(type === 'admit' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations'),
      namespace: async (name) => {
        const namespaces = store('', 'namespaces');
        return namespaces && (await fromCache(namespaces, namespaces.key('', name))).find((o) => o.metadata.name === name);
      },
      resolve: (ns, name, port) => this.resolver(ns, name, port),
      equivalents: servedEquivalents(resources),
      decider: (user) => this.d.authorizer.decider(user),
      observe: this.d.onWebhookCall,
      log: this.d.log,
    });
    const cached = (group: string, plural: string) => {
      const s = store(group, plural);
      return s && { cache: s.watchCache(), store: s };
    };
    // Resolved on first use: the registry adds its stores after building the chains.
    let resolver: Services | undefined;
    this.resolver = (namespace, name, port) => {
      if (!resolver) {
        const services = cached('', 'services');
        if (!services) throw new Error(`service "${name}" not found`);
        resolver = new Services(services, cached('discovery.svc.io', 'endpointslices'), cached('', 'endpoints'));
      }
      const at = resolver.resolve(namespace, name, port);
      const colon = at.lastIndexOf(':');
      return { host: at.slice(0, colon).replace(/^\[|\]$/g, ''), port: Number(at.slice(colon + 1)) };
    };
    this.mutatingPolicy = mutatingPolicyPlugin(resources, this.d.schemas, this.policy.sources, this.d.onMutatingPolicyCheck);
    let quotasLoaded = false;
    const quotasIn = (namespace: string): Obj[] | Promise<Obj[]> => {
      const quotas = store('', 'resourcequotas');
      if (!quotas) return [];
      const cache = quotas.watchCache();
      // Most namespaces have no quota: the cache's per-namespace count answers without a scan.
      const list = () => {
        const under = `${quotas.prefix}${namespace}/`;
        return cache.size(under) === 0 ? [] : cache.list(under).map((c) => c.obj);
      };
      if (quotasLoaded) return list();
      return cache.start().then(() => {
        quotasLoaded = true;
        return list();
      });
    };
    const priority = new PriorityAdmission({
      get: async (name) => {
        const s = store('scheduling.svc.io', 'priorityclasses');
        if (!s) return undefined;
        const cached = (await fromCache(s, s.key('', name))).find((o) => o.metadata.name === name);
        if (cached) return cached;
        // Not cached (yet): the store decides, so a class created just before the pod is found.
        try {
          return decodeStored(await s.get('', name));
        } catch (e) {
          if (e instanceof StatusError && e.code === 404) return undefined;
          throw e;
        }
      },
      list: async () => {
        const s = store('scheduling.svc.io', 'priorityclasses');
        return s ? fromCache(s, s.prefix) : [];
      },
    });
    const quota = new QuotaAdmission(() => store('', 'resourcequotas') as ResourceStore, quotasIn);
    const serviceAccount = new ServiceAccountAdmission({
      get: async (namespace, name) => {
        const accounts = store('', 'serviceaccounts');
        if (!accounts) return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } };
        const cached = (await fromCache(accounts, accounts.key(namespace, name))).find((o) => o.metadata.name === name);
        if (cached) return cached;
        // Not cached: a live read, as the reference's plugin falls back to one.
        return accounts.get(namespace, name).then(decodeStored, () => undefined);
      },
    });
    const entries: Entry[] = [
      { plugin: limitRanger, kinds: (def) => def.group === '' && def.plural === 'pods' },
      { plugin: serviceAccount, kinds: (def) => def.group === '' && def.plural === 'pods' },
      { plugin: priority, kinds: (def) => (def.group === '' && def.plural === 'pods') || def.plural === 'priorityclasses' },
      {
        plugin: new DefaultTolerationSeconds(
          this.d.defaultTolerationSeconds?.notReady ?? 300,
          this.d.defaultTolerationSeconds?.unreachable ?? 300,
        ),
        kinds: (def) => def.group === '' && def.plural === 'pods',
      },
      {
        plugin: new DefaultStorageClass(async () => {
          const classes = store('storage.svc.io', 'storageclasses');
          return classes ? fromCache(classes, classes.prefix) : [];
        }),
        kinds: (def) => def.group === '' && def.plural === 'persistentvolumeclaims',
      },
      {
        plugin: new StorageObjectInUseProtection(),
        kinds: (def) => def.group === '' && (def.plural === 'persistentvolumeclaims' || def.plural === 'persistentvolumes'),
      },
      {
        plugin: new DefaultIngressClass(async () => {
          const classes = store('networking.svc.io', 'ingressclasses');
          return classes ? fromCache(classes, classes.prefix) : [];
        }),
        kinds: (def) => def.group === 'networking.svc.io' && def.plural === 'ingresses',
      },
      {
        plugin: new RbacEscalation(this.d.rbac, this.d.authorizer),
        kinds: (def) => def.group === RBAC_GROUP && RBAC_KINDS.has(def.plural),
      },
      { plugin: new CertificateAdmission(this.d.authorizer), kinds: (def) => def.plural === 'certificatesigningrequests' },
      { plugin: new FaultInjectionAuthorization(this.d.authorizer), kinds: (def) => def.plural === 'faultinjections' },
      // Faults injected into the server's own writes (src/faults), set once the faults exist.
      { plugin: this.ownWrites, kinds: () => true },
      // MutatingAdmissionPolicy (the reference's order: ..., MutatingAdmissionPolicy, MutatingAdmissionWebhook, ValidatingAdmissionPolicy, ...).
      { plugin: this.mutatingPolicy, kinds: () => true },
      { plugin: this.policy, kinds: () => true },
      // The reference's order: MutatingAdmissionWebhook after the built-in mutating plugins,
      // ValidatingAdmissionWebhook after ValidatingAdmissionPolicy, both before ResourceQuota.
      { plugin: this.webhooks.mutating, kinds: () => true },
      { plugin: this.webhooks.validating, kinds: () => true },
      { plugin: quota, kinds: (def) => def.namespaced },
    ];
    return (def) => {
      const plugins = entries.filter((e) => e.kinds(def)).map((e) => e.plugin);
      return plugins.length > 0 ? new AdmissionChain(plugins) : undefined;
    };
  };

  /** Start following the policies and their status controller (the registry serves by now). */
  async start(): Promise<void> {
    const resources = this.resources;
    const policy = this.policy;
    const vapStore = resources?.lookup(ADMISSION_GROUP, 'v1', 'validatingadmissionpolicies');
    const served =
      resources?.lookup(ADMISSION_GROUP, 'v1', 'validatingadmissionpolicybindings') && resources.lookup('', 'v1', 'namespaces');
    // MutatingAdmissionPolicy: started only where its kinds are served.
    if (resources && this.mutatingPolicy && mutatingPolicyServed(resources)) await this.mutatingPolicy.start();
    if (!resources || !policy || !vapStore || !served) return;
    const kindOf = (st: ResourceStore | undefined) =>
      st && { group: st.def.group, version: st.def.version, kind: st.def.kind, schema: st.def.schema };
    this.policyStatus = new PolicyStatusController(
      vapStore,
      vapStore.watchCache(),
      {
        byResource: (g, v, r) => kindOf(resources.lookup(g, v, r)),
        byKind: (g, v, k) => kindOf(resources.byGroupVersionKind(g, v, k)),
      },
      this.d.schemas,
      this.d.log,
    );
    const caches = [resources.lookup('', 'v1', 'services'), resources.lookup('discovery.svc.io', 'v1', 'endpointslices')].map((s) =>
      s?.watchCache().start(),
    );
    await Promise.all([policy.start(), this.policyStatus.start(), this.webhooks?.start(), ...caches]);
  }

  stop(): void {
    this.policy?.stop();
    this.mutatingPolicy?.stop();
    this.policyStatus?.stop();
    this.webhooks?.stop();
  }
}
