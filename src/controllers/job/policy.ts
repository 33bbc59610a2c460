/**
 * The Job's policies on its pods, as the reference's pod_failure_policy.go and success_policy.go:
 * which rule of spec.podFailurePolicy a failed pod matches (by a container's non-zero exit code or
 * by a pod condition) and what follows (FailJob, FailIndex, Ignore, Count), and whether the
 * succeeded indexes meet a rule of spec.successPolicy.
 */
import type { Obj } from '../../api/meta';
import { type JobSpec, parseIntervals } from './util';

export type FailureAction = 'FailJob' | 'FailIndex' | 'Ignore' | 'Count';

export interface PolicyMatch {
  /** The matched rule's action; undefined when no rule matches (the failure counts). */
  action?: FailureAction;
  /** Whether the failure counts toward backoffLimit (false only for Ignore). */
  count: boolean;
  /** The Job's failure message, for FailJob. */
  message?: string;
}

interface ContainerStatus {
  name: string;
  state?: { terminated?: { exitCode?: number } };
}

function exitCodes(p: Obj): { name: string; code: number }[] {
  const st = (p.status ?? {}) as { containerStatuses?: ContainerStatus[]; initContainerStatuses?: ContainerStatus[] };
  const out: { name: string; code: number }[] = [];
  for (const c of [...(st.initContainerStatuses ?? []), ...(st.containerStatuses ?? [])]) {
    const code = c.state?.terminated?.exitCode;
    if (typeof code === 'number' && code !== 0) out.push({ name: c.name, code });
  }
  return out;
}

/** matchPodFailurePolicy: the first rule (in order) the failed pod matches. */
export function matchPodFailurePolicy(spec: JobSpec, p: Obj): PolicyMatch {
  const rules = spec.podFailurePolicy?.rules ?? [];
  const where = `${p.metadata.namespace}/${p.metadata.name}`;
  const conds = ((p.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []) as {
    type: string;
    status: string;
  }[];
  for (const [i, rule] of rules.entries()) {
    let message: string | undefined;
    const ex = rule.onExitCodes;
    if (ex) {
      const hit = exitCodes(p).find(
        (c) => (!ex.containerName || ex.containerName === c.name) && (ex.operator === 'In') === ex.values.includes(c.code),
      );
      if (hit)
        message = `Container ${hit.name} for pod ${where} failed with exit code ${hit.code} matching ${rule.action} rule at index ${i}`;
    }
    for (const pc of rule.onPodConditions ?? []) {
      if (message) break;
      if (conds.some((c) => c.type === pc.type && c.status === (pc.status ?? 'True')))
        message = `Pod ${where} has condition ${pc.type} matching ${rule.action} rule at index ${i}`;
    }
    if (message === undefined) continue;
    switch (rule.action) {
      case 'FailJob':
        return { action: 'FailJob', count: true, message };
      case 'Ignore':
        return { action: 'Ignore', count: false };
      case 'FailIndex':
        return { action: 'FailIndex', count: true };
      default:
        return { action: 'Count', count: true };
    }
  }
  return { count: true };
}

/** matchSuccessPolicy: the message of the first rule the succeeded indexes meet, else undefined. */
export function matchSuccessPolicy(spec: JobSpec, succeeded: Set<number>): string | undefined {
  const completions = spec.completions ?? 0;
  for (const [i, rule] of (spec.successPolicy?.rules ?? []).entries()) {
    let met: boolean;
    if (rule.succeededIndexes !== undefined) {
      const want = parseIntervals(rule.succeededIndexes, completions);
      const have = [...want].filter((x) => succeeded.has(x)).length;
      met = rule.succeededCount === undefined ? have === want.size && want.size > 0 : have >= rule.succeededCount;
    } else {
      met = rule.succeededCount !== undefined && succeeded.size >= rule.succeededCount;
    }
    if (met) return `Matched rules at index ${i}`;
  }
  return undefined;
}
