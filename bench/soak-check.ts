/**
 * The verdict of bench/soak.ts (issue 42 item 5), a pure function of what the run recorded, so
 * that a planted problem in its input is found the same way as a real one:
 *
 * - memory: the server's RSS (median of a window's samples) at the last window is at most
 *   `rssGrowth` (10%) above the first window after the warm-up;
 * - latency: the p99 of the last window is at most `p99Growth` (1.5×, plus `p99SlackMs` for
 *   sub-millisecond noise) of the first window after the warm-up;
 * - nothing lost: every key is as its last acknowledged write left it (present with that value at
 *   that resourceVersion or later, since controllers write Deployment status; absent after an
 *   acknowledged delete), and no request failed;
 * - watch: each watcher's events come in strictly increasing resourceVersion, and each
 *   acknowledged create/update (at its resourceVersion, with its value) and delete (a DELETED event
 *   between the version it deleted and the key's next write) is among them.
 *
 * Keys are `<resource>/<name>`; each key is written by one writer only, so its acknowledged writes
 * are in order.
 */

export type SoakOp = 'create' | 'patch' | 'apply' | 'delete';

export interface SoakAck {
  /** `<resource>/<name>` */
  key: string;
  op: SoakOp;
  /** The answered resourceVersion (for a delete: the version the writer last knew). */
  rv: number;
  /** The soak value annotation after the write (absent for a delete). */
  value?: string;
}

export interface SoakEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  key: string;
  rv: number;
  value?: string;
}

export interface SoakWindow {
  index: number;
  /** RSS samples of the server in this window, MiB. */
  rssMiB: number[];
  /** Latency of each request answered in this window, ms. */
  latenciesMs: number[];
  /** Requests answered with something other than the expected 2xx (after 429 retries). */
  errors: number;
  watchEvents: number;
  /** Objects stored in the run's namespace at the window's end, by resource (Events have no TTL here). */
  stored?: Record<string, number>;
}

export interface SoakRecord {
  windows: SoakWindow[];
  acks: SoakAck[];
  /** `<resource>/<name>` -> what a final LIST shows. */
  final: Map<string, { rv: number; value?: string }>;
  /** One entry per watcher: the resource it followed and its events over the whole run. */
  watchers: { resource: string; events: SoakEvent[]; reachedRv: number }[];
  /** Problems found while running (failed requests, an expired watch, ...). */
  runProblems: string[];
}

export interface SoakTargets {
  /** Windows left out of the comparison at the start. */
  warmupWindows: number;
  rssGrowth: number;
  p99Growth: number;
  p99SlackMs: number;
}

export const DEFAULT_TARGETS: SoakTargets = { warmupWindows: 1, rssGrowth: 0.1, p99Growth: 1.5, p99SlackMs: 2 };

export interface SoakVerdict {
  ok: boolean;
  problems: string[];
  rss: { firstMiB: number; lastMiB: number; growth: number };
  p99: { firstMs: number; lastMs: number };
}

export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
}

export function judgeSoak(rec: SoakRecord, t: SoakTargets = DEFAULT_TARGETS): SoakVerdict {
  const problems = [...rec.runProblems];
  const measured = rec.windows.slice(t.warmupWindows);
  const first = measured[0];
  const last = measured[measured.length - 1];
  let rss = { firstMiB: 0, lastMiB: 0, growth: 0 };
  let p99 = { firstMs: 0, lastMs: 0 };
  if (!first || !last || measured.length < 2) problems.push(`${measured.length} windows after the warm-up: at least 2 are needed`);
  else {
    const firstMiB = quantile(first.rssMiB, 0.5);
    const lastMiB = quantile(last.rssMiB, 0.5);
    rss = { firstMiB, lastMiB, growth: firstMiB > 0 ? lastMiB / firstMiB - 1 : 0 };
    if (rss.growth > t.rssGrowth)
      problems.push(`RSS grew ${(rss.growth * 100).toFixed(1)}% (${firstMiB} -> ${lastMiB} MiB), more than ${t.rssGrowth * 100}%`);
    p99 = { firstMs: quantile(first.latenciesMs, 0.99), lastMs: quantile(last.latenciesMs, 0.99) };
    if (p99.lastMs > p99.firstMs * t.p99Growth + t.p99SlackMs)
      problems.push(
        `p99 rose from ${p99.firstMs.toFixed(1)} ms (window ${first.index}) to ${p99.lastMs.toFixed(1)} ms (window ${last.index})`,
      );
  }
  const errors = rec.windows.reduce((n, w) => n + w.errors, 0);
  if (errors > 0) problems.push(`${errors} requests failed`);
  problems.push(...checkFinal(rec.acks, rec.final));
  for (const w of rec.watchers) problems.push(...checkEvents(w.resource, w.events, rec.acks, w.reachedRv));
  return { ok: problems.length === 0, problems, rss, p99 };
}

/** Each key as its last acknowledged write left it. */
export function checkFinal(acks: SoakAck[], final: Map<string, { rv: number; value?: string }>): string[] {
  const last = new Map<string, SoakAck>();
  for (const a of acks) last.set(a.key, a);
  const problems: string[] = [];
  for (const [key, a] of last) {
    const got = final.get(key);
    if (a.op === 'delete') {
      if (got) problems.push(`lost delete: ${key} is there (v=${got.value} rv=${got.rv}) after an acknowledged delete`);
    } else if (!got || got.value !== a.value || got.rv < a.rv)
      problems.push(
        `lost write: ${key} is ${got ? `v=${got.value} rv=${got.rv}` : 'absent'}, acknowledged ${a.op} v=${a.value} rv=${a.rv}`,
      );
  }
  return problems;
}

/** One watcher of `resource` (from before the first write until `reachedRv`) against the acknowledged writes. */
export function checkEvents(resource: string, events: SoakEvent[], acks: SoakAck[], reachedRv: number): string[] {
  const problems: string[] = [];
  let prev = 0;
  for (const e of events) {
    if (e.rv <= prev) problems.push(`${resource} watcher: ${e.type} ${e.key} rv=${e.rv} after rv=${prev} (duplicate or out of order)`);
    prev = Math.max(prev, e.rv);
  }
  const byRv = new Map<number, SoakEvent>();
  // A key's DELETED events' resourceVersions, ascending (a 30-minute run has ~10^5 of each).
  const deletedAt = new Map<string, number[]>();
  for (const e of events) {
    byRv.set(e.rv, e);
    if (e.type !== 'DELETED') continue;
    const l = deletedAt.get(e.key);
    if (l) l.push(e.rv);
    else deletedAt.set(e.key, [e.rv]);
  }
  const perKey = new Map<string, SoakAck[]>();
  for (const a of acks) {
    if (!a.key.startsWith(`${resource}/`)) continue;
    const l = perKey.get(a.key) ?? [];
    l.push(a);
    perKey.set(a.key, l);
  }
  for (const [key, list] of perKey) {
    list.forEach((a, i) => {
      if (a.op !== 'delete') {
        if (a.rv > reachedRv) return;
        const e = byRv.get(a.rv);
        if (!e || e.key !== key || e.type === 'DELETED' || e.value !== a.value)
          problems.push(
            `${resource} watcher: missing event for ${a.op} ${key} rv=${a.rv} v=${a.value}${e ? ` (rv ${a.rv} is ${e.type} ${e.key} v=${e.value})` : ''}`,
          );
        return;
      }
      const next = list[i + 1]?.rv ?? reachedRv + 1;
      if (next > reachedRv + 1) return;
      if (!(deletedAt.get(key) ?? []).some((rv) => rv > a.rv && rv < next))
        problems.push(`${resource} watcher: missing DELETED event for ${key} after rv=${a.rv}`);
    });
  }
  return problems;
}
