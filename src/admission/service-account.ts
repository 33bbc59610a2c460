/**
 * ServiceAccount admission, as the reference's plugin (plugin/pkg/admission/serviceaccount): a
 * Pod created without `serviceAccountName` runs as `default`; the account must exist (else 403
 *
 *   pods "web" is forbidden: error looking up service account default/robot: serviceaccount "robot" not found
 *
 * ); and unless the pod or its account turns `automountServiceAccountToken` off, the pod gets the
 * projected API-access volume `kube-api-access-<5 random>` (a bound token, the cluster's CA from
 * ConfigMap kube-root-ca.crt, and the namespace), mounted read-only at
 * /var/run/secrets/kubernetes.io/serviceaccount in every container and init container that has
 * no mount there yet. Mirror pods (kubelet static pods) are left alone.
 *
 * One deviation: a `default` account not created yet (a namespace made a moment ago, a server
 * just started) is waited for up to DEFAULT_ACCOUNT_WAIT_MS, the time the service account
 * controller takes, instead of failing the create at once as the reference can.
 */
import { isObject, type JsonObject, type Obj } from '../api/meta';
import { forbidden } from '../api/status';
import type { Attributes, Operation, Plugin } from '../registry/admission';

export const TOKEN_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
const VOLUME_PREFIX = 'kube-api-access-';
/** The reference's bound token lifetime for the projected volume (1 h + 7 s, "warn safe"). */
const TOKEN_EXPIRATION_SECONDS = 3607;
const MIRROR_ANNOTATION = 'kubernetes.io/config.mirror';
const DEFAULT_ACCOUNT_WAIT_MS = 2_000;
/** utilrand.String's alphabet (no vowels, no confusable digits). */
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export interface AccountLookup {
  /** The service account, or undefined when it does not exist. */
  get(namespace: string, name: string): Promise<Obj | undefined>;
}

function randomSuffix(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(Math.random() * ALPHABET.length)];
  return s;
}

function tokenVolume(name: string): JsonObject {
  return {
    name,
    projected: {
      sources: [
        { serviceAccountToken: { expirationSeconds: TOKEN_EXPIRATION_SECONDS, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
      defaultMode: 420,
    },
  };
}

export class ServiceAccountAdmission implements Plugin {
  readonly name = 'ServiceAccount';

  constructor(private readonly accounts: AccountLookup) {}

  handles(group: string, resource: string, subresource: string, op: Operation): boolean {
    return group === '' && resource === 'pods' && subresource === '' && op === 'CREATE';
  }

  async admit(a: Attributes): Promise<void> {
    const pod = a.object;
    if (pod.metadata.annotations?.[MIRROR_ANNOTATION] !== undefined) return;
    if (!isObject(pod.spec)) return;
    const spec = pod.spec as JsonObject;
    const name = typeof spec.serviceAccountName === 'string' && spec.serviceAccountName !== '' ? spec.serviceAccountName : 'default';
    spec.serviceAccountName = name;
    // The deprecated alias the v1 form carries (the reference's conversion writes both).
    spec.serviceAccount = name;
    const account = await this.account(a.namespace, name);
    if (!account) {
      throw forbidden(
        { group: '', resource: 'pods' },
        a.name,
        `error looking up service account ${a.namespace}/${name}: serviceaccount "${name}" not found`,
      );
    }
    const automount =
      typeof spec.automountServiceAccountToken === 'boolean'
        ? spec.automountServiceAccountToken
        : typeof account.automountServiceAccountToken === 'boolean'
          ? account.automountServiceAccountToken
          : true;
    if (automount) mountToken(spec);
  }

  private async account(namespace: string, name: string): Promise<Obj | undefined> {
    const found = await this.accounts.get(namespace, name);
    if (found || name !== 'default') return found;
    const until = Date.now() + DEFAULT_ACCOUNT_WAIT_MS;
    while (Date.now() < until) {
      await Bun.sleep(50);
      const again = await this.accounts.get(namespace, name);
      if (again) return again;
    }
    return undefined;
  }
}

/** The API-access volume and its mounts (mountServiceAccountToken). */
function mountToken(spec: JsonObject): void {
  const volumes = Array.isArray(spec.volumes) ? (spec.volumes as JsonObject[]) : [];
  const existing = volumes.find((v) => typeof v.name === 'string' && v.name.startsWith(VOLUME_PREFIX));
  const volumeName = (existing?.name as string | undefined) ?? `${VOLUME_PREFIX}${randomSuffix(5)}`;
  let needed = false;
  for (const key of ['initContainers', 'containers']) {
    const containers = Array.isArray(spec[key]) ? (spec[key] as JsonObject[]) : [];
    for (const c of containers) {
      const mounts = Array.isArray(c.volumeMounts) ? (c.volumeMounts as JsonObject[]) : [];
      if (mounts.some((m) => m.mountPath === TOKEN_MOUNT_PATH)) continue;
      c.volumeMounts = [...mounts, { name: volumeName, readOnly: true, mountPath: TOKEN_MOUNT_PATH }];
      needed = true;
    }
  }
  if (!existing && needed) spec.volumes = [...volumes, tokenVolume(volumeName)];
}
