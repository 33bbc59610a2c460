/**
 * admissionregistration.svc.io MutatingAdmissionPolicy and MutatingAdmissionPolicyBinding, served
 * as v1beta1 (stored) and v1alpha1 (the same shape under another apiVersion), behind the
 * reference's feature gate `MutatingAdmissionPolicy` (beta and off by default in 1.34). Their
 * schemas are written here: the generated definitions hold the v1 kinds of the reference's 1.28
 * OpenAPI, which has no MutatingAdmissionPolicy. The parts shared with ValidatingAdmissionPolicy
 * (MatchResources, ParamKind, ParamRef, MatchCondition, Variable) are the v1 definitions, as the
 * reference's beta types have the same fields. The admission plugin: src/admission/policy/mutating-plugin.ts.
 */
import type { Obj } from '../../api/meta';
import type { ArraySchema, Definitions, Schema } from '../../schema/types';
import { col, columnsFor } from '../columns';
import { mutatingAdmissionPolicy, mutatingAdmissionPolicyBinding } from '../validation/mutating-admission-policy';
import type { Spec } from './spec';

export const MUTATING_POLICY_GATE = 'MutatingAdmissionPolicy';
const GROUP = 'admissionregistration.svc.io';
const V1 = 'io.svc.api.admissionregistration.v1';
const META = 'io.svc.apimachinery.pkg.apis.meta.v1';

/** A field of a message type (`protoTag` absent: a list's items). */
const ref = (name: string, protoTag?: number): Schema => ({
  type: 'ref',
  ref: name,
  ...(protoTag && { protoTag, protoType: 'message', protoMessage: name }),
});
/** A repeated message field. */
const list = (item: string, protoTag: number, more: Partial<ArraySchema> = {}): Schema => ({
  type: 'array',
  items: ref(item),
  protoTag,
  protoType: 'message',
  protoMessage: item,
  ...more,
});
const str = (protoTag: number, description?: string): Schema => ({
  type: 'string',
  protoTag,
  protoType: 'string',
  ...(description && { description }),
});

/** The definitions of one served version (`v1beta1`, `v1alpha1`). */
function definitions(version: string): Definitions {
  const pkg = `io.svc.api.admissionregistration.${version}`;
  const gvk = (kind: string) => [{ group: GROUP, version, kind }];
  const kindOf = (kind: string, spec: string, description: string): Schema => ({
    type: 'object',
    description,
    properties: {
      kind: { type: 'string' },
      apiVersion: { type: 'string' },
      metadata: ref(`${META}.ObjectMeta`, 1),
      spec: ref(`${pkg}.${spec}`, 2),
    },
    gvk: gvk(kind),
  });
  const listOf = (kind: string): Schema => ({
    type: 'object',
    properties: {
      kind: { type: 'string' },
      apiVersion: { type: 'string' },
      metadata: ref(`${META}.ListMeta`, 1),
      items: list(`${pkg}.${kind}`, 2),
    },
    required: ['items'],
    gvk: gvk(`${kind}List`),
  });
  const defs: Definitions = {
    [`${pkg}.MutatingAdmissionPolicy`]: kindOf(
      'MutatingAdmissionPolicy',
      'MutatingAdmissionPolicySpec',
      'MutatingAdmissionPolicy changes the objects of the requests it matches, with mutations written in CEL.',
    ),
    [`${pkg}.MutatingAdmissionPolicyList`]: listOf('MutatingAdmissionPolicy'),
    [`${pkg}.MutatingAdmissionPolicySpec`]: {
      type: 'object',
      properties: {
        paramKind: ref(`${V1}.ParamKind`, 1),
        matchConstraints: ref(`${V1}.MatchResources`, 2),
        variables: list(`${V1}.Variable`, 3, { listType: 'atomic' }),
        mutations: list(`${pkg}.Mutation`, 4, { listType: 'atomic' }),
        failurePolicy: str(5, 'What an error of the policy does to the request: Fail refuses it (the default), Ignore skips the policy.'),
        matchConditions: list(`${V1}.MatchCondition`, 6, {
          listType: 'map',
          listMapKeys: ['name'],
          patchStrategy: 'merge',
          patchMergeKey: 'name',
        }),
        reinvocationPolicy: str(
          7,
          'Never: the policy runs once per request. IfNeeded: it runs once more when a later mutation changed the object after it ran.',
        ),
      },
    },
    [`${pkg}.Mutation`]: {
      type: 'object',
      properties: {
        patchType: str(
          2,
          'ApplyConfiguration (a CEL Object merged as server-side apply merges) or JSONPatch (a CEL list of JSONPatch operations).',
        ),
        applyConfiguration: ref(`${pkg}.ApplyConfiguration`, 3),
        jsonPatch: ref(`${pkg}.JSONPatch`, 4),
      },
      required: ['patchType'],
    },
    [`${pkg}.ApplyConfiguration`]: {
      type: 'object',
      properties: { expression: str(1, 'A CEL expression giving an Object{...}: the fields to set, merged into the object.') },
    },
    [`${pkg}.JSONPatch`]: {
      type: 'object',
      properties: {
        expression: str(1, 'A CEL expression giving a list of JSONPatch{op, path, from, value} applied to the object in order.'),
      },
    },
    [`${pkg}.MutatingAdmissionPolicyBinding`]: kindOf(
      'MutatingAdmissionPolicyBinding',
      'MutatingAdmissionPolicyBindingSpec',
      'MutatingAdmissionPolicyBinding puts a MutatingAdmissionPolicy in force, for the requests its matchResources take and with the parameters its paramRef names.',
    ),
    [`${pkg}.MutatingAdmissionPolicyBindingList`]: listOf('MutatingAdmissionPolicyBinding'),
    [`${pkg}.MutatingAdmissionPolicyBindingSpec`]: {
      type: 'object',
      properties: {
        policyName: str(1, 'The name of the MutatingAdmissionPolicy this binding puts in force.'),
        paramRef: ref(`${V1}.ParamRef`, 2),
        matchResources: ref(`${V1}.MatchResources`, 3),
      },
    },
  };
  // Each definition is the protobuf message of its name (the wire names kinds by apiVersion and kind).
  for (const [name, d] of Object.entries(defs)) if (d.type === 'object') d.protoMessage = name;
  return defs;
}

export const MUTATING_POLICY_DEFINITIONS: Definitions = { ...definitions('v1beta1'), ...definitions('v1alpha1') };

/** The failurePolicy default (SetDefaults_MutatingAdmissionPolicySpec), for src/schema/overlays.ts. */
export const MUTATING_POLICY_OVERLAYS = ['v1beta1', 'v1alpha1'].map((v) => ({
  def: `io.svc.api.admissionregistration.${v}.MutatingAdmissionPolicySpec`,
  field: 'failurePolicy',
  default: 'Fail',
}));

/** A v1alpha1 object read from (or written as) its stored v1beta1 form: the same fields. */
const retag =
  (to: string) =>
  (o: Obj): Obj => ({ ...o, apiVersion: `${GROUP}/${to}` });

/** The reference's tables: a policy's mutations and paramKind; a binding's as ValidatingAdmissionPolicyBinding's. */
const [, PARAM_KIND, AGE] = columnsFor('ValidatingAdmissionPolicy');
const POLICY_COLUMNS = [
  col('Mutations', 'integer', 'Mutation indicates the number of mutations rules defined in this configuration', (x) => {
    const spec = x.spec as { mutations?: unknown } | undefined;
    return Array.isArray(spec?.mutations) ? spec.mutations.length : 0;
  }),
  ...(PARAM_KIND && AGE ? [PARAM_KIND, AGE] : []),
];

const kinds = (version: string, storedAs: boolean): Spec[] =>
  (['MutatingAdmissionPolicy', 'MutatingAdmissionPolicyBinding'] as const).map((kind) => {
    const plural = kind === 'MutatingAdmissionPolicy' ? 'mutatingadmissionpolicies' : 'mutatingadmissionpolicybindings';
    return {
      group: GROUP,
      version,
      kind,
      plural,
      categories: ['api-extensions'],
      namespaced: false,
      pkg: 'admissionregistration',
      gate: MUTATING_POLICY_GATE,
      rules: kind === 'MutatingAdmissionPolicy' ? mutatingAdmissionPolicy : mutatingAdmissionPolicyBinding,
      columns: kind === 'MutatingAdmissionPolicy' ? POLICY_COLUMNS : columnsFor('ValidatingAdmissionPolicyBinding'),
      ...(storedAs && { storedAs: { group: GROUP, plural, read: retag(version), write: retag('v1beta1') } }),
    };
  });

export const MUTATING_POLICY: Spec[] = [...kinds('v1beta1', false), ...kinds('v1alpha1', true)];
