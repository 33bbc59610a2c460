/**
 * The messages between the CEL pool (./cel-pool.ts) and its workers (./cel-worker.ts): one
 * expression on an activation, a whole policy evaluation, or a task that never ends (tests of
 * the deadline). Structured clone carries them (BigInt included).
 */
import type { Obj } from '../../api/meta';
import type { EvalResult } from '../../cel/index';
import type { Result } from './evaluate';

export type CelRequest =
  | { kind: 'expr'; expr: string; vars: Record<string, string>; activation: Record<string, unknown> }
  | {
      kind: 'policy';
      policy: Obj;
      activation: { object: unknown; oldObject: unknown; request: unknown; namespaceObject: unknown };
      params: unknown;
    }
  | { kind: 'spin' };

export type CelResponse = { kind: 'expr'; result: EvalResult } | { kind: 'policy'; result: Result };
