/**
 * The ClusterRole aggregation controller (the reference's clusterrole-aggregation-controller): a
 * ClusterRole with an aggregationRule gets, as its `rules`, the rules of every ClusterRole its
 * selectors match (each rule once, in the order of the roles' names), written through the
 * registry whenever they change. Aggregated roles that select aggregated roles converge over a
 * few writes (admin takes edit's rules once edit has view's).
 */
import { deepEqual, isObject, type Obj } from '../api/meta';
import { selectorMatcher } from '../api/selectors';
import { StatusError } from '../api/status';
import type { ResourceStore } from '../registry/generic';
import type { WatchCache } from '../watch/cache';

export const AGGREGATION_CONTROLLER = 'clusterrole-aggregation-controller';

export class ClusterRoleAggregation {
  private stopped = false;
  private pending = false;

  constructor(
    private readonly store: ResourceStore,
    private readonly cache: WatchCache,
    private readonly log: (msg: string) => void = () => {},
  ) {}

  async start(): Promise<void> {
    await this.cache.start();
    const w = this.cache.watch({ keyPrefix: '', match: () => true, all: true }, 'now');
    await this.sync();
    void (async () => {
      while (!this.stopped && !w.watcher.ended) {
        const events = await w.watcher.next(Number.POSITIVE_INFINITY);
        if (events.length > 0) await this.sync();
      }
    })();
  }

  stop(): void {
    this.stopped = true;
  }

  private async sync(): Promise<void> {
    if (this.pending) return;
    this.pending = true;
    try {
      const roles = this.cache
        .list()
        .map((c) => c.obj)
        .sort((a, b) => ((a.metadata.name as string) < (b.metadata.name as string) ? -1 : 1));
      for (const role of roles) {
        const agg = isObject(role.aggregationRule) ? role.aggregationRule : undefined;
        if (!agg) continue;
        const selectors = (Array.isArray(agg.clusterRoleSelectors) ? agg.clusterRoleSelectors : []).map((s) => selectorMatcher(s));
        const rules: unknown[] = [];
        const seen = new Set<string>();
        for (const other of roles) {
          if (other.metadata.name === role.metadata.name) continue;
          if (!selectors.some((m) => m && !m.empty && m.matches(other.metadata.labels ?? {}))) continue;
          for (const r of Array.isArray(other.rules) ? other.rules : []) {
            const key = JSON.stringify(r);
            if (seen.has(key)) continue;
            seen.add(key);
            rules.push(r);
          }
        }
        if (deepEqual(rules, role.rules ?? [])) continue;
        await this.write(role, rules);
      }
    } finally {
      this.pending = false;
    }
  }

  private async write(role: Obj, rules: unknown[]): Promise<void> {
    try {
      await this.store.update(
        '',
        role.metadata.name as string,
        { ...role, rules },
        {
          dryRun: false,
          fieldValidation: 'Ignore',
          warnings: [],
          fieldManager: AGGREGATION_CONTROLLER,
        },
        '',
      );
    } catch (e) {
      // 409: changed meanwhile, the next event brings it back; 404: deleted.
      if (!(e instanceof StatusError) || (e.code !== 409 && e.code !== 404))
        this.log(`clusterrole aggregation: ${role.metadata.name}: ${(e as Error).message}`);
    }
  }
}
