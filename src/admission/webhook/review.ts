/**
 * AdmissionReview, the body of a webhook call and of its answer (the reference's
 * webhook/request/admissionreview.go): v1 when the webhook lists it, else v1beta1, the first of
 * its admissionReviewVersions this server knows. The object is sent in the spelling of the
 * webhook's rules (`networking.k8s.io/v1` to a webhook registered for `networking.k8s.io`), so a
 * webhook decoding into the reference's types finds its kinds.
 *
 * The answer is checked as the reference checks it (v1: the uid and the kind must match, a
 * validating webhook may not patch, patch and patchType come together; v1beta1: neither checked,
 * a patch is a JSONPatch).
 */
import { apiVersionInBrand } from '../../api/brand';
import { isObject, type JsonObject, type Obj } from '../../api/meta';
import type { Attributes } from '../../registry/admission';
import type { EquivalentVersion } from './equivalents';
import { groupFor, type Hook } from './hooks';

/** The request as one webhook sees it: in its own version, or converted to an equivalent one (`as`). */
export interface View {
  as?: EquivalentVersion;
  /** The object (absent on DELETE) and the old object, in the version seen. */
  object: Obj | undefined;
  oldObject: Obj | undefined;
}

export interface ReviewResponse {
  allowed: boolean;
  /** The decoded JSONPatch operations (absent: no patch). */
  patch?: unknown[];
  result?: JsonObject;
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

/** The version of AdmissionReview a hook is sent, or undefined when it accepts none we know. */
export function reviewVersion(hook: Hook): 'v1' | 'v1beta1' | undefined {
  for (const v of hook.reviewVersions) if (v === 'v1' || v === 'v1beta1') return v;
  return undefined;
}

/** An object as the hook is sent it (its apiVersion in the hook's spelling); shared otherwise. */
export function objectFor(hook: Hook, o: Obj | undefined): Obj | undefined {
  if (!o) return undefined;
  const apiVersion = apiVersionInBrand(String(o.apiVersion ?? ''), hook.sendUpstream ? 'k8s' : 'svc');
  return apiVersion === o.apiVersion ? o : { ...o, apiVersion };
}

/** The AdmissionReview of one call. */
export function createReview(
  hook: Hook,
  version: 'v1' | 'v1beta1',
  uid: string,
  a: Attributes,
  view: View,
  object: Obj | undefined,
): JsonObject {
  const group = groupFor(hook, a.group);
  const requestKind = { group, version: a.version, kind: a.kind };
  const requestResource = { group, version: a.version, resource: a.resource };
  const kind = view.as ? { group, version: view.as.version, kind: view.as.kind } : requestKind;
  const resource = view.as ? { group, version: view.as.version, resource: a.resource } : requestResource;
  const user = a.user;
  const userInfo: JsonObject = { username: user?.name ?? '', uid: user?.uid ?? '', groups: user?.groups ?? [] };
  if (user?.extra && Object.keys(user.extra).length > 0) userInfo.extra = user.extra;
  const request: JsonObject = {
    uid,
    kind,
    resource,
    requestKind,
    requestResource,
    name: a.name,
    operation: a.operation,
    userInfo,
    object: a.operation === 'DELETE' ? null : (object ?? null),
    oldObject: objectFor(hook, view.oldObject) ?? null,
    dryRun: a.dryRun,
  };
  if (a.subresource) {
    request.subResource = a.subresource;
    request.requestSubResource = a.subresource;
  }
  if (a.namespace) request.namespace = a.namespace;
  if (a.options) {
    const o = { ...a.options };
    o.apiVersion = 'meta.k8s.io/v1';
    request.options = o;
  }
  return { kind: 'AdmissionReview', apiVersion: `admission.k8s.io/${version}`, request };
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** The answer, checked; throws an Error with the reference's text when it is not acceptable. */
export function verifyResponse(body: unknown, version: 'v1' | 'v1beta1', uid: string, mutating: boolean): ReviewResponse {
  const review = isObject(body) ? body : {};
  const r = review.response;
  if (!isObject(r)) throw new Error('webhook response was absent');
  let patchText: string | undefined = typeof r.patch === 'string' && r.patch !== '' ? r.patch : undefined;
  if (version === 'v1') {
    if (r.uid !== uid) throw new Error(`expected response.uid="${uid}", got "${typeof r.uid === 'string' ? r.uid : ''}"`);
    const gvk = `${review.apiVersion ?? ''}, Kind=${review.kind ?? ''}`;
    if (review.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview')
      throw new Error(`expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got ${gvk}`);
    if (mutating) {
      if (patchText && r.patchType == null) throw new Error('webhook returned response.patch but not response.patchType');
      if (!patchText && r.patchType != null) throw new Error('webhook returned response.patchType but not response.patch');
      if (r.patchType != null && r.patchType === '') throw new Error('webhook returned invalid response.patchType of ""');
      if (patchText && r.patchType !== 'JSONPatch') throw new Error(`unsupported patch type "${String(r.patchType)}"`);
    } else {
      if (patchText) throw new Error('validating webhook may not return response.patch');
      if (r.patchType != null) throw new Error('validating webhook may not return response.patchType');
    }
  } else if (!mutating) patchText = undefined;
  let patch: unknown[] | undefined;
  if (patchText) {
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(patchText, 'base64').toString('utf8'));
    } catch (e) {
      throw new Error(`received undecodable patch in webhook response: ${(e as Error).message}`);
    }
    if (!Array.isArray(decoded)) throw new Error('received undecodable patch in webhook response: a JSON patch is a list of operations');
    if (decoded.length > 0) patch = decoded;
  }
  const annotations: Record<string, string> = {};
  if (isObject(r.auditAnnotations)) for (const [k, v] of Object.entries(r.auditAnnotations)) if (typeof v === 'string') annotations[k] = v;
  return {
    allowed: r.allowed === true,
    patch,
    result: isObject(r.status) ? r.status : undefined,
    warnings: strings(r.warnings),
    auditAnnotations: annotations,
  };
}
