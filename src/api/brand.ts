/**
 * Brand tokens. The API names its groups and extensions with the `svc` token (`apps.svc.io`,
 * `x-svc-list-type`); unmodified clients of the reference send the upstream `k8s` token
 * (`networking.k8s.io`, `x-kubernetes-list-type`). The server stores and lists one name (svc)
 * and accepts both; an answer carries the name the request used.
 *
 *   svcGroup('networking.k8s.io')       → 'networking.svc.io'
 *   upstreamGroup('networking.svc.io')  → 'networking.k8s.io'
 *   svcGroup('apps')                    → 'apps'      (groups without a brand are the same in both)
 */

export type Brand = 'svc' | 'k8s';

const SVC_SUFFIX = '.svc.io';
const K8S_SUFFIX = '.k8s.io';

/** The svc name of a group (unchanged if it has no upstream brand). */
export function svcGroup(group: string): string {
  return group.endsWith(K8S_SUFFIX) ? `${group.slice(0, -K8S_SUFFIX.length)}${SVC_SUFFIX}` : group;
}

/** The upstream name of a group (unchanged if it has no svc brand). */
export function upstreamGroup(group: string): string {
  return group.endsWith(SVC_SUFFIX) ? `${group.slice(0, -SVC_SUFFIX.length)}${K8S_SUFFIX}` : group;
}

/** The brand a group name is spelled in ('svc' for groups without one). */
export function brandOf(group: string): Brand {
  return group.endsWith(K8S_SUFFIX) ? 'k8s' : 'svc';
}

/** A group in the given brand. */
export function inBrand(group: string, brand: Brand): string {
  return brand === 'k8s' ? upstreamGroup(group) : svcGroup(group);
}

/** `group/version` (or `version` for the core group) of an apiVersion, with the group in svc spelling. */
export function svcApiVersion(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? apiVersion : `${svcGroup(apiVersion.slice(0, slash))}${apiVersion.slice(slash)}`;
}

/** An apiVersion with its group in the given brand. */
export function apiVersionInBrand(apiVersion: string, brand: Brand): string {
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return apiVersion;
  return `${inBrand(apiVersion.slice(0, slash), brand)}${apiVersion.slice(slash)}`;
}

/**
 * An object's JSON text (members ordered kind, apiVersion, metadata, as the registry writes them)
 * with its apiVersion `from` replaced by `to`. Only the first occurrence is the object's own: kind
 * is a plain string, so no nested apiVersion (an owner reference's) can come before it.
 */
export function retagText(text: string, from: string, to: string): string {
  return from === to ? text : text.replace(`"apiVersion":"${from}"`, `"apiVersion":"${to}"`);
}

const SVC_EXT = 'x-svc-';
const K8S_EXT = 'x-kubernetes-';

/** The svc name of a schema extension key (`x-kubernetes-list-type` → `x-svc-list-type`); others unchanged. */
export function svcExtension(key: string): string {
  return key.startsWith(K8S_EXT) ? `${SVC_EXT}${key.slice(K8S_EXT.length)}` : key;
}

/** The upstream name of a schema extension key (`x-svc-list-type` → `x-kubernetes-list-type`); others unchanged. */
export function upstreamExtension(key: string): string {
  return key.startsWith(SVC_EXT) ? `${K8S_EXT}${key.slice(SVC_EXT.length)}` : key;
}

/**
 * A JSON value with every `x-kubernetes-*` object key renamed to its `x-svc-*` name (a CRD schema
 * written for the reference). Returns the same value when nothing needed renaming; key order is kept.
 */
export function svcExtensionKeys<T>(v: T): T {
  return renameKeys(v, svcExtension, K8S_EXT);
}

/** The inverse of svcExtensionKeys: `x-svc-*` keys renamed to `x-kubernetes-*` (answers to upstream clients). */
export function upstreamExtensionKeys<T>(v: T): T {
  return renameKeys(v, upstreamExtension, SVC_EXT);
}

function renameKeys<T>(v: T, rename: (k: string) => string, from: string): T {
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const r = renameKeys(v[i], rename, from);
      if (r !== v[i]) {
        out ??= v.slice();
        out[i] = r;
      }
    }
    return (out ?? v) as T;
  }
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const k in o) {
    const r = renameKeys(o[k], rename, from);
    const key = k.startsWith(from) ? rename(k) : k;
    if (r !== o[k] || key !== k) changed = true;
    out[key] = r;
  }
  return (changed ? out : v) as T;
}
