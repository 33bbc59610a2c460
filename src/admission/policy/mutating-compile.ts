/**
 * A MutatingAdmissionPolicy compiled once from its stored object: the match, matchConditions and
 * variables as a ValidatingAdmissionPolicy's (./compile.ts), and its mutations, each expression
 * desugared (src/cel/object-initializers.ts) and compiled in the policy's environment. An
 * expression that does not compile keeps its error, which is that mutation's error under the
 * policy's failurePolicy when a request meets it.
 */
import { isObject, type JsonObject, type Obj } from '../../api/meta';
import { desugarObjectInitializers } from '../../cel/object-initializers';
import { policyEnv } from '../../cel/policy-env';
import { compileExpr, type Expr, type FailurePolicy } from './compile';
import { type CompiledMatch, compileMatch } from './matching';

export type PatchType = 'ApplyConfiguration' | 'JSONPatch';

export interface Mutation {
  readonly patchType: PatchType;
  readonly expr: Expr;
}

export interface CompiledMutatingPolicy {
  readonly name: string;
  readonly failurePolicy: FailurePolicy;
  readonly reinvocation: 'Never' | 'IfNeeded';
  readonly match: CompiledMatch;
  readonly paramKind?: { apiVersion: string; kind: string };
  readonly matchConditions: readonly { name: string; expr: Expr }[];
  readonly variables: readonly { name: string; expr: Expr }[];
  readonly mutations: readonly Mutation[];
  /** Whether an expression names `namespaceObject` (else the namespace is not read for it). */
  readonly needsNamespace: boolean;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const objects = (v: unknown): JsonObject[] => (Array.isArray(v) ? v.filter(isObject) : []);

export function compileMutatingPolicy(p: Obj): CompiledMutatingPolicy {
  const spec = isObject(p.spec) ? p.spec : {};
  const pk = isObject(spec.paramKind) ? spec.paramKind : undefined;
  const matchEnv = policyEnv('matchCondition', pk !== undefined);
  const fullEnv = policyEnv('validation', pk !== undefined);
  const mutation = (m: JsonObject): Mutation => {
    const patchType: PatchType = m.patchType === 'JSONPatch' ? 'JSONPatch' : 'ApplyConfiguration';
    const body = patchType === 'JSONPatch' ? m.jsonPatch : m.applyConfiguration;
    const text = str(isObject(body) ? body.expression : undefined);
    const d = desugarObjectInitializers(text);
    if (!d.ok) return { patchType, expr: { expr: text, error: d.error } };
    // Messages name the expression as written, not its desugared form.
    return { patchType, expr: { ...compileExpr(d.expr, fullEnv), expr: text } };
  };
  return {
    name: p.metadata.name as string,
    failurePolicy: spec.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    reinvocation: spec.reinvocationPolicy === 'IfNeeded' ? 'IfNeeded' : 'Never',
    match: compileMatch(spec.matchConstraints, true),
    paramKind: pk ? { apiVersion: str(pk.apiVersion), kind: str(pk.kind) } : undefined,
    matchConditions: objects(spec.matchConditions).map((m) => ({ name: str(m.name), expr: compileExpr(str(m.expression), matchEnv) })),
    variables: objects(spec.variables).map((v) => ({ name: str(v.name), expr: compileExpr(str(v.expression), fullEnv) })),
    mutations: objects(spec.mutations).map(mutation),
    needsNamespace: JSON.stringify([spec.variables, spec.mutations]).includes('namespaceObject'),
  };
}
