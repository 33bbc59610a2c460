/**
 * The answer to a request that named a group by its upstream name (`/apis/coordination.k8s.io/v1/...`):
 * the registry serves it under the svc name, and this view turns what goes out into the
 * request's spelling: each object's apiVersion, list envelopes, watch events, Status messages and
 * details. A request in the svc spelling gets the identity view (no copy, no string work).
 *
 *   view = brandView(def, 'k8s')        // def: coordination.svc.io/v1 Lease
 *   view.apiVersion                     → 'coordination.k8s.io/v1'
 *   view.text('{"kind":"Lease","apiVersion":"coordination.svc.io/v1",...}')
 *                                       → '{"kind":"Lease","apiVersion":"coordination.k8s.io/v1",...}'
 */
import { type Brand, inBrand, retagText, upstreamExtensionKeys } from '../api/brand';
import { apiVersionOf, type Obj } from '../api/meta';
import { StatusError } from '../api/status';

export interface BrandView {
  readonly brand: Brand;
  /** The kind's apiVersion in the request's spelling. */
  readonly apiVersion: string;
  /** An object's JSON text (as the registry writes it) in the request's spelling. */
  text(json: string): string;
  /** An object in the request's spelling (a shallow copy when it changes). */
  obj(o: Obj): Obj;
  /** A Status error naming the group in the request's spelling (anything else unchanged). */
  error(e: unknown): unknown;
}

export function brandView(
  def: { readonly group: string; readonly version: string; readonly storageVersion?: string },
  brand: Brand,
): BrandView {
  if (def.storageVersion !== undefined) return versionView(def.group, def.version);
  const stored = apiVersionOf(def);
  const group = inBrand(def.group, brand);
  if (group === def.group) return identity(stored);
  const apiVersion = apiVersionOf({ group, version: def.version });
  const swap = (s: string): string => s.replaceAll(def.group, group);
  // CustomResourceDefinitions carry schemas: their extension keys go out in the upstream names too.
  if (def.group === 'apiextensions.svc.io') {
    return {
      brand,
      apiVersion,
      text: (json) => retagText(json, stored, apiVersion).replaceAll('"x-svc-', '"x-kubernetes-'),
      obj: (o) => upstreamExtensionKeys(o.apiVersion === stored ? { ...o, apiVersion } : o),
      error: (e) => errorView(e, swap),
    };
  }
  return {
    brand,
    apiVersion,
    text: (json) => retagText(json, stored, apiVersion),
    obj: (o) => (o.apiVersion === stored ? { ...o, apiVersion } : o),
    error: (e) => errorView(e, swap),
  };
}

/** A Status error with its group spelled by `swap`; anything else unchanged. */
function errorView(e: unknown, swap: (s: string) => string): unknown {
  if (!(e instanceof StatusError)) return e;
  const d = e.details;
  const details = d && {
    ...d,
    ...(d.group !== undefined && { group: swap(d.group) }),
    ...(d.causes && { causes: d.causes.map((c) => ({ ...c, ...(c.message !== undefined && { message: swap(c.message) }) })) }),
  };
  const out = new StatusError(e.code, e.reason, swap(e.message), details);
  out.headers = e.headers;
  out.listMeta = e.listMeta;
  return out;
}

/**
 * A custom kind served in several versions (conversion None): objects are stored in one version
 * (or in an older storage version), and every answer names the version the request did.
 */
function versionView(group: string, version: string): BrandView {
  const apiVersion = `${group}/${version}`;
  const prefix = `${group}/`;
  const stored = new RegExp(`"apiVersion":"${group.replaceAll('.', '\\.')}/[^"]*"`);
  return {
    brand: 'svc',
    apiVersion,
    text: (json) => json.replace(stored, `"apiVersion":"${apiVersion}"`),
    obj: (o) =>
      typeof o.apiVersion === 'string' && o.apiVersion.startsWith(prefix) && o.apiVersion !== apiVersion ? { ...o, apiVersion } : o,
    error: (e) => e,
  };
}

const identities = new Map<string, BrandView>();

function identity(apiVersion: string): BrandView {
  let v = identities.get(apiVersion);
  if (!v) {
    v = { brand: 'svc', apiVersion, text: (t) => t, obj: (o) => o, error: (e) => e };
    identities.set(apiVersion, v);
  }
  return v;
}
