/**
 * TokenRequest (`POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token`, an
 * authentication.svc.io/v1 TokenRequest; what `kubectl create token` sends): a signed token for
 * the service account, with the reference's defaults and limits.
 *
 *   spec.expirationSeconds   default 3600; at least 600 ("may not specify a duration less than
 *                            10 minutes"), at most 2^32
 *   spec.audiences           default: the issuer
 *   spec.boundObjectRef      a Pod or Secret in the account's namespace, or a Node, that must
 *                            exist (404), match the uid given (409) and, for a Pod, run as this
 *                            account (400); its uid goes into the token's claims, and the token
 *                            stops working when that object is gone
 *
 * The answer names the group as the request body did (kubectl sends authentication.k8s.io/v1).
 */
import { isObject, type JsonObject, type Obj } from '../api/meta';
import { badRequest, conflict, invalid, notFound } from '../api/status';
import type { ServiceAccountTokens } from './sa-tokens';

/** A stored object by kind (Pod, Secret: in the namespace; Node: cluster-scoped), or undefined. */
export type ObjectLookup = (kind: 'Pod' | 'Secret' | 'Node', namespace: string, name: string) => Promise<Obj | undefined>;

export const TOKEN_REQUEST_SCHEMA = 'io.svc.api.authentication.v1.TokenRequest';
const MIN_SECONDS = 600;
const MAX_SECONDS = 2 ** 32;

export async function tokenRequest(sa: Obj, body: unknown, tokens: ServiceAccountTokens, lookup?: ObjectLookup): Promise<Obj> {
  if (!isObject(body)) throw badRequest('TokenRequest must be an object');
  const apiVersion = body.apiVersion === undefined ? 'authentication.svc.io/v1' : String(body.apiVersion);
  if (apiVersion !== 'authentication.svc.io/v1' && apiVersion !== 'authentication.k8s.io/v1') {
    throw badRequest(`the API version in the data (${apiVersion}) does not match the expected API version (authentication.svc.io/v1)`);
  }
  const spec: JsonObject = isObject(body.spec) ? body.spec : {};
  const seconds = spec.expirationSeconds === undefined || spec.expirationSeconds === null ? 3600 : Number(spec.expirationSeconds);
  const errs = [];
  if (!Number.isInteger(seconds) || seconds < MIN_SECONDS)
    errs.push({
      type: 'FieldValueInvalid' as const,
      field: 'spec.expirationSeconds',
      badValue: seconds,
      detail: 'may not specify a duration less than 10 minutes',
    });
  else if (seconds > MAX_SECONDS)
    errs.push({
      type: 'FieldValueTooLong' as const,
      field: 'spec.expirationSeconds',
      badValue: seconds,
      detail: 'may not specify a duration larger than 2^32 seconds',
    });
  const bound = isObject(spec.boundObjectRef) ? spec.boundObjectRef : undefined;
  if (bound && !['Pod', 'Secret', 'Node'].includes(String(bound.kind)))
    errs.push({
      type: 'FieldValueNotSupported' as const,
      field: 'spec.boundObjectRef.kind',
      badValue: bound.kind,
      detail: 'supported values: "Pod", "Secret", "Node"',
    });
  if (errs.length > 0) throw invalid('TokenRequest', 'authentication.svc.io', sa.metadata.name ?? '', errs);
  let boundUid = bound ? String(bound.uid ?? '') : '';
  if (bound && lookup) {
    const kind = String(bound.kind) as 'Pod' | 'Secret' | 'Node';
    const name = String(bound.name ?? '');
    const resource = `${kind.toLowerCase()}s`;
    const target = await lookup(kind, kind === 'Node' ? '' : (sa.metadata.namespace ?? ''), name);
    if (!target) throw notFound({ group: '', resource }, name);
    if (kind === 'Pod') {
      const podSa = String(((target.spec ?? {}) as JsonObject).serviceAccountName ?? 'default');
      if (podSa !== sa.metadata.name) {
        throw badRequest(`cannot bind token for serviceaccount "${sa.metadata.name}" to pod running with different serviceaccount name.`);
      }
    }
    const uid = String(target.metadata.uid ?? '');
    if (boundUid && boundUid !== uid) {
      throw conflict(
        { group: '', resource: kind },
        name,
        `the UID in the bound object reference (${boundUid}) does not match the UID in record. The object might have been deleted and then recreated`,
      );
    }
    boundUid = uid;
  }
  const audiences = Array.isArray(spec.audiences) && spec.audiences.length > 0 ? spec.audiences.map(String) : [tokens.issuer];
  const t = await tokens.issue({
    namespace: sa.metadata.namespace ?? '',
    name: sa.metadata.name as string,
    uid: sa.metadata.uid ?? '',
    audiences,
    expirationSeconds: seconds,
    bound: bound ? { kind: String(bound.kind), name: String(bound.name ?? ''), uid: boundUid } : undefined,
  });
  const outSpec: JsonObject = { audiences, expirationSeconds: seconds };
  if (bound) outSpec.boundObjectRef = bound;
  return {
    apiVersion,
    kind: 'TokenRequest',
    metadata: { name: sa.metadata.name, namespace: sa.metadata.namespace, creationTimestamp: null as unknown as string },
    spec: outSpec,
    status: { token: t.token, expirationTimestamp: t.expirationTimestamp },
  } as Obj;
}
