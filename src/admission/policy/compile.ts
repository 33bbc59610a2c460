/**
 * A ValidatingAdmissionPolicy compiled once from its stored object (spec 2): the match as sets
 * and selector functions, every expression type-checked into a closure, in the variable
 * environment of its place (src/cel/policy-env.ts). An expression that does not compile keeps its error; evaluating it
 * is an error under the policy's failurePolicy ("compilation error: ..."), so one bad expression
 * does not disable the others.
 */
import { isObject, type JsonObject, type Obj } from '../../api/meta';
import { type CelEnv, type CostedProgram, compile, costedExecutable } from '../../cel/index';
import { policyEnv } from '../../cel/policy-env';
import { type CompiledMatch, compileMatch } from './matching';

export type FailurePolicy = 'Fail' | 'Ignore';

export interface Expr {
  readonly expr: string;
  readonly fn?: CostedProgram;
  /** Why it did not compile. */
  readonly error?: string;
}

export interface Validation {
  readonly expr: Expr;
  readonly message: string;
  readonly messageExpr?: Expr;
  readonly reason: string;
}

export interface CompiledPolicy {
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly failurePolicy: FailurePolicy;
  readonly match: CompiledMatch;
  readonly paramKind?: { apiVersion: string; kind: string };
  readonly matchConditions: readonly { name: string; expr: Expr }[];
  readonly variables: readonly { name: string; expr: Expr }[];
  readonly validations: readonly Validation[];
  readonly auditAnnotations: readonly { key: string; expr: Expr }[];
  /** Whether an expression names `namespaceObject` (else the namespace is not read for it). */
  readonly needsNamespace: boolean;
  /** Whether an expression names `authorizer` (its decisions are made on the request's thread). */
  readonly usesAuthorizer: boolean;
  /**
   * The most comprehension macros (all, exists, exists_one, map, filter) in one expression: an
   * upper bound of their nesting, so of the evaluation's worst case (list length ^ nesting).
   */
  readonly nesting: number;
  /** The stored policy (what a worker compiles it from). */
  readonly obj: Obj;
}

export interface CompiledBinding {
  readonly name: string;
  readonly resourceVersion: string;
  readonly policyName: string;
  readonly match: CompiledMatch | undefined;
  readonly paramRef?: { name?: string; namespace?: string; selector?: unknown; parameterNotFoundAction?: string };
  readonly actions: readonly string[];
}

export const MACRO = /\.\s*(all|exists|exists_one|map|filter)\s*\(/g;

export function compileExpr(expr: string, e: CelEnv): Expr {
  const r = compile(expr, e);
  if (!r.ok) return { expr, error: r.errors.join('; ') };
  return { expr, fn: costedExecutable(r.program) };
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const objects = (v: unknown): JsonObject[] => (Array.isArray(v) ? v.filter(isObject) : []);

export function compilePolicy(p: Obj): CompiledPolicy {
  const spec = isObject(p.spec) ? p.spec : {};
  const pk = isObject(spec.paramKind) ? spec.paramKind : undefined;
  const withParams = pk !== undefined;
  const matchEnv = policyEnv('matchCondition', withParams);
  const fullEnv = policyEnv('validation', withParams);
  const messageEnv = policyEnv('auditAnnotation', withParams);
  const texts = JSON.stringify([spec.variables, spec.validations, spec.auditAnnotations]);
  const exprs = [spec.matchConditions, spec.variables, spec.validations, spec.auditAnnotations].flatMap((l) =>
    objects(l).flatMap((o) => [o.expression, o.messageExpression, o.valueExpression].filter((e): e is string => typeof e === 'string')),
  );
  return {
    obj: p,
    needsNamespace: texts.includes('namespaceObject'),
    usesAuthorizer: exprs.some((e) => e.includes('authorizer')),
    nesting: Math.max(0, ...exprs.map((e) => (e.match(MACRO) ?? []).length)),
    name: p.metadata.name as string,
    uid: p.metadata.uid ?? '',
    resourceVersion: p.metadata.resourceVersion ?? '',
    failurePolicy: spec.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    match: compileMatch(spec.matchConstraints, true),
    paramKind: pk ? { apiVersion: str(pk.apiVersion), kind: str(pk.kind) } : undefined,
    matchConditions: objects(spec.matchConditions).map((m) => ({ name: str(m.name), expr: compileExpr(str(m.expression), matchEnv) })),
    variables: objects(spec.variables).map((v) => ({ name: str(v.name), expr: compileExpr(str(v.expression), fullEnv) })),
    validations: objects(spec.validations).map((v) => ({
      expr: compileExpr(str(v.expression), fullEnv),
      message: str(v.message),
      messageExpr:
        typeof v.messageExpression === 'string' && v.messageExpression !== '' ? compileExpr(v.messageExpression, fullEnv) : undefined,
      reason: str(v.reason) || 'Invalid',
    })),
    auditAnnotations: objects(spec.auditAnnotations).map((a) => ({
      key: str(a.key),
      expr: compileExpr(str(a.valueExpression), messageEnv),
    })),
  };
}

export function compileBinding(b: Obj): CompiledBinding {
  const spec = isObject(b.spec) ? b.spec : {};
  const ref = isObject(spec.paramRef) ? spec.paramRef : undefined;
  return {
    name: b.metadata.name as string,
    resourceVersion: b.metadata.resourceVersion ?? '',
    policyName: str(spec.policyName),
    match: spec.matchResources === undefined ? undefined : compileMatch(spec.matchResources, false),
    paramRef: ref
      ? {
          name: typeof ref.name === 'string' ? ref.name : undefined,
          namespace: typeof ref.namespace === 'string' ? ref.namespace : undefined,
          selector: ref.selector,
          parameterNotFoundAction: typeof ref.parameterNotFoundAction === 'string' ? ref.parameterNotFoundAction : undefined,
        }
      : undefined,
    actions: Array.isArray(spec.validationActions) ? spec.validationActions.filter((a): a is string => typeof a === 'string') : [],
  };
}
