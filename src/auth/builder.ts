/**
 * Identity and access as the server builds them: the authorizer (RBAC over an index that follows
 * the four RBAC kinds' watch caches, or AlwaysAllow), the authenticator (the admin token,
 * --token-auth-file, service account tokens), and the post-start hook that follows RBAC and
 * creates the reference's bootstrap policy where it is missing.
 */
import * as fs from 'node:fs';
import { StatusError } from '../api/status';
import type { UserInfo } from '../api/user';
import { decodeStored } from '../codec/stored';
import type { Config } from '../config/flags';
import type { ApiRegistry } from '../registry/api-registry';
import type { ResourceStore } from '../registry/generic';
import { AuditLog, parsePolicy } from './audit';
import { Auditor } from './auditor';
import { Authorizer } from './authz';
import { bootstrapPolicy } from './bootstrap-rbac';
import { RbacIndex } from './rbac';
import { ServiceAccountTokens } from './sa-tokens';
import { adminToken, MASTERS, parseTokenFile, TokenAuthenticator } from './tokens';

const RBAC_GROUP = 'rbac.authorization.svc.io';
const RBAC_PLURALS = ['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'];

export interface Authorization {
  rbac: RbacIndex;
  authorizer: Authorizer;
}

/** The authorizer and the index it asks (filled by followRbac once the registry serves). */
export function createAuthorization(cfg: Pick<Config, 'authorizationMode'>): Authorization {
  const rbac = new RbacIndex();
  return { rbac, authorizer: new Authorizer(cfg.authorizationMode, rbac) };
}

export interface Authentication {
  authenticator: TokenAuthenticator;
  serviceAccountTokens: ServiceAccountTokens;
  /** The admin's bearer token (group system:masters), kept in the data dir. */
  adminToken: string;
}

/** The authenticator: static tokens, then service account JWTs checked against live accounts. */
export async function createAuthentication(cfg: Config, dataDir: string, api: ApiRegistry): Promise<Authentication> {
  const token = adminToken(dataDir);
  const users = new Map<string, UserInfo>([[token, { name: 'admin', uid: 'admin', groups: [MASTERS] }]]);
  const saTokens = await ServiceAccountTokens.open(dataDir, {
    issuer: cfg.serviceAccountIssuer,
    signingKeyFile: cfg.serviceAccountSigningKeyFile || undefined,
    keyFile: cfg.serviceAccountKeyFile || undefined,
  });
  if (cfg.tokenAuthFile) {
    let tokens: Map<string, UserInfo>;
    try {
      tokens = parseTokenFile(fs.readFileSync(cfg.tokenAuthFile, 'utf8'), cfg.tokenAuthFile);
    } catch (e) {
      throw new Error(`--token-auth-file: ${(e as Error).message}`);
    }
    for (const [t, u] of tokens) users.set(t, u);
  }
  const saStore = api.lookup('', 'v1', 'serviceaccounts');
  return {
    authenticator: new TokenAuthenticator(users, saStore ? { tokens: saTokens, account: accountUid(api, saStore) } : undefined),
    serviceAccountTokens: saTokens,
    adminToken: token,
  };
}

/**
 * The uid of a service account (or of a token's bound Pod, Secret or Node): a token's account must
 * still exist with the uid it was issued for. From the watch cache when it has it, else the store.
 */
function accountUid(api: ApiRegistry, saStore: ResourceStore) {
  const stores: Record<string, ResourceStore | undefined> = {
    ServiceAccount: saStore,
    Pod: api.lookup('', 'v1', 'pods'),
    Secret: api.lookup('', 'v1', 'secrets'),
    Node: api.lookup('', 'v1', 'nodes'),
  };
  void saStore.watchCache().start();
  return async (namespace: string, name: string, kind = 'ServiceAccount'): Promise<string | undefined> => {
    const s = stores[kind];
    if (!s) return undefined;
    const cached = s
      .watchCache()
      .list(s.key(namespace, name))
      .find((c) => c.obj.metadata.name === name);
    if (cached) return cached.obj.metadata.uid;
    try {
      return decodeStored(await s.get(namespace, name)).metadata.uid;
    } catch {
      return undefined;
    }
  };
}

/**
 * Post-start: the RBAC index follows the four kinds' watch caches; then the bootstrap policy is
 * created where missing (as the reference reconciles it at start), and the hook resolves once
 * the index has applied it (5 s at most), so that ready means the policy is in force.
 */
export async function followRbac(api: ApiRegistry, rbac: RbacIndex, log: (msg: string) => void): Promise<void> {
  const stores = RBAC_PLURALS.map((p) => api.lookup(RBAC_GROUP, 'v1', p)).filter((s): s is ResourceStore => s !== undefined);
  /** Newest revision the index has applied, per kind's store. */
  const applied = new Map<ResourceStore, number>();
  for (const s of stores) {
    const cache = s.watchCache();
    await cache.start();
    const { watcher, initial } = cache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    for (const c of initial) rbac.apply(s.def.kind, c.obj, false);
    void (async () => {
      while (!watcher.ended)
        for (const e of await watcher.next(Number.POSITIVE_INFINITY)) {
          rbac.apply(s.def.kind, e.obj, e.type === 'DELETED');
          applied.set(s, e.event.rv);
        }
    })();
  }
  const { clusterRoles, clusterRoleBindings } = bootstrapPolicy();
  const W = { dryRun: false, fieldValidation: 'Ignore' as const, warnings: [] as string[], fieldManager: 'bootstrap' };
  for (const [plural, objs] of [
    ['clusterroles', clusterRoles],
    ['clusterrolebindings', clusterRoleBindings],
  ] as const) {
    const s = api.lookup(RBAC_GROUP, 'v1', plural);
    if (!s) continue;
    // Only what is missing, all at once (one log sync for the lot).
    const present = new Set(
      s
        .watchCache()
        .list()
        .map((c) => c.obj.metadata.name),
    );
    const created = await Promise.all(
      objs
        .filter((o) => !present.has(o.metadata.name))
        .map(async (o) => {
          try {
            return Number((await s.create('', structuredClone(o), { ...W, warnings: [] })).metadata.resourceVersion);
          } catch (e) {
            if (!(e instanceof StatusError) || e.code !== 409) log(`bootstrap rbac: ${o.metadata.name}: ${(e as Error).message}`);
            return 0;
          }
        }),
    );
    const want = Math.max(0, ...created);
    for (let waited = 0; (applied.get(s) ?? 0) < want && waited < 5000; waited += 5) await Bun.sleep(5);
  }
}

/** The audit log: a policy file and a path, else nothing is audited (as the reference). */
export function createAudit(cfg: Config, log: (msg: string) => void): { auditor: Auditor; log: AuditLog } | undefined {
  if (!cfg.auditLogPath || !cfg.auditPolicyFile) return undefined;
  const policy = parsePolicy(fs.readFileSync(cfg.auditPolicyFile, 'utf8'));
  const auditLog = new AuditLog({
    path: cfg.auditLogPath,
    maxSizeMB: cfg.auditLogMaxSize,
    maxBackups: cfg.auditLogMaxBackup,
    maxAgeDays: cfg.auditLogMaxAge,
    log,
  });
  return { auditor: new Auditor(policy, auditLog), log: auditLog };
}
