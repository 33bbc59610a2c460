/**
 * CEL evaluation off the request thread (issue 12 item 4): a WorkerPool (src/workers/pool.ts) of
 * cel-worker.ts workers, for the admission policy plugin. A synchronous CEL evaluation cannot be interrupted on the thread that
 * runs it; in a worker it has a deadline, after which the worker is terminated and replaced and
 * the caller gets DeadlineError, while every other request goes on.
 *
 * Messages use structured clone (bench/cel-pool.ts measured it against msgpackr on admission
 * activations; see bench/README.md): it carries BigInt (CEL ints) and needs no encoding step of
 * our own.
 *
 * What runs here and what inline is the caller's choice, from the measured break-even (the
 * admission plugin sends a policy evaluation here only when its worst case is large).
 */

import type { Obj } from '../../api/meta';
import type { EvalResult } from '../../cel/index';
import { WorkerPool } from '../../workers/pool';
import type { CelRequest, CelResponse } from './cel-protocol';
import type { Result } from './evaluate';

export interface CelPoolOptions {
  size: number;
  deadlineMs: number;
}

export class CelPool {
  readonly pool: WorkerPool<CelRequest, CelResponse>;

  constructor(opts: CelPoolOptions) {
    this.pool = new WorkerPool({ script: new URL('./cel-worker.ts', import.meta.url), size: opts.size, deadlineMs: opts.deadlineMs });
  }

  ready(): Promise<void> {
    return this.pool.ready();
  }

  /** One expression on a JSON activation (variables declared by CEL type name). */
  async evaluate(
    expr: string,
    vars: Record<string, string>,
    activation: Record<string, unknown>,
    deadlineMs?: number,
  ): Promise<EvalResult> {
    const r = await this.pool.run({ kind: 'expr', expr, vars, activation }, deadlineMs);
    if (r.kind !== 'expr') throw new Error('unexpected answer from the CEL worker');
    return r.result;
  }

  /** A whole policy evaluation (admission/policy/evaluate.ts) for one parameter, in a worker. */
  async evaluatePolicy(
    policy: Obj,
    activation: { object: unknown; oldObject: unknown; request: unknown; namespaceObject: unknown },
    params: unknown,
    deadlineMs?: number,
  ): Promise<Result> {
    const r = await this.pool.run({ kind: 'policy', policy, activation, params }, deadlineMs);
    if (r.kind !== 'policy') throw new Error('unexpected answer from the CEL worker');
    return r.result;
  }

  /** A task that never ends by itself (tests of the deadline). */
  spin(deadlineMs?: number): Promise<CelResponse> {
    return this.pool.run({ kind: 'spin' }, deadlineMs);
  }

  close(): void {
    this.pool.close();
  }
}
