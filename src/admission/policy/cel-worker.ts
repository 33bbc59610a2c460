/**
 * The CEL pool's worker (see ./cel-pool.ts): evaluates single expressions and whole
 * admission-policy evaluations, keeping what it compiled (programs by environment and
 * expression, policies by uid and resourceVersion) for the next request.
 */

import { celEnv, compile, evaluate } from '../../cel/index';
import { serveWorker } from '../../workers/pool';
import type { CelRequest, CelResponse } from './cel-protocol';
import { type CompiledPolicy, compilePolicy } from './compile';
import { evaluatePolicy } from './evaluate';

const policies = new Map<string, CompiledPolicy>();
const MAX_POLICIES = 1000;

serveWorker<CelRequest, CelResponse>((req) => {
  if (req.kind === 'expr') {
    const env = celEnv(req.vars);
    const c = compile(req.expr, env);
    if (!c.ok) return { kind: 'expr', result: { ok: false, error: c.errors.join('; '), cost: 0 } };
    return { kind: 'expr', result: evaluate(c.program, req.activation) };
  }
  if (req.kind === 'spin') {
    // For tests of the deadline: a runaway that only termination stops.
    for (;;) {}
  }
  const key = `${req.policy.metadata.uid}/${req.policy.metadata.resourceVersion}`;
  let p = policies.get(key);
  if (!p) {
    if (policies.size >= MAX_POLICIES) policies.clear();
    p = compilePolicy(req.policy);
    policies.set(key, p);
  }
  return { kind: 'policy', result: evaluatePolicy(p, { ...req.activation, authorizer: null }, req.params) };
});
