/**
 * /livez, /readyz and /healthz: named checks, `verbose`, `exclude=`, per-check paths
 * (/livez/ping), as the reference's healthz package renders them.
 */
import { replyText } from './respond';

export interface Check {
  name: string;
  /** Resolves to undefined when healthy, else a reason. */
  check: () => Promise<string | undefined> | string | undefined;
}

export class HealthEndpoints {
  constructor(private readonly sets: Record<'livez' | 'readyz' | 'healthz', Check[]>) {}

  /** Handles /livez, /readyz, /healthz and their per-check paths; undefined for other paths. */
  async handle(path: string, q: URLSearchParams): Promise<Response | undefined> {
    const m = /^\/(livez|readyz|healthz)(?:\/(.+?))?\/?$/.exec(path);
    if (!m) return undefined;
    const kind = m[1] as 'livez' | 'readyz' | 'healthz';
    const checks = this.sets[kind];
    if (m[2]) {
      const c = checks.find((x) => x.name === m[2]);
      if (!c) return replyText('404 page not found\n', 404);
      const why = await c.check();
      return why === undefined ? replyText('ok') : replyText(`internal server error: ${why}\n`, 500);
    }
    const excluded = new Set(q.getAll('exclude'));
    const verbose = q.has('verbose') && q.get('verbose') !== 'false';
    const lines: string[] = [];
    let failed = false;
    for (const c of checks) {
      if (excluded.has(c.name)) {
        lines.push(`[+]${c.name} excluded: ok`);
        continue;
      }
      const why = await c.check();
      if (why === undefined) lines.push(`[+]${c.name} ok`);
      else {
        failed = true;
        lines.push(`[-]${c.name} failed: reason withheld`);
      }
    }
    for (const name of excluded) {
      if (!checks.some((c) => c.name === name)) lines.push(`warn: some health checks cannot be excluded: no matches for "${name}"`);
    }
    if (failed) return replyText(`${lines.join('\n')}\n${kind} check failed\n`, 500);
    if (verbose) return replyText(`${lines.join('\n')}\n${kind} check passed\n`);
    return replyText('ok');
  }
}
