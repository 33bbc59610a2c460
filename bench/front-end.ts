/**
 * Before/after bench of a front-end change (issue 9 item 8, the Elysia front end), in one run:
 *
 *   bun bench/front-end.ts <before-rev> [--rounds=N] [--phase-ms=MS]
 *
 * checks <before-rev> out into a temporary git worktree (sharing this tree's node_modules), then
 * measures a bare Bun.serve TLS GET (the ceiling) and, alternating the two trees N times, GETs of
 * one ConfigMap and creates of 1 KB ConfigMaps from 64 wrk connections, each phase after 2 s of
 * warm-up, with the server's CPU per request (all its threads, from /proc). Prints one line per
 * phase and a summary with medians.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startServer } from '../test/helpers/server';
import { bareServer, type LoadResult, load, serverCpuPerRequest, threadCpu, WRK } from './harness';

const ROOT = path.resolve(import.meta.dir, '..');
const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const BEFORE = process.argv[2];
const ROUNDS = Number(arg('rounds') ?? 2);
const PHASE_MS = Number(arg('phase-ms') ?? 8000);
if (!BEFORE || BEFORE.startsWith('--')) {
  console.error('usage: bun bench/front-end.ts <before-rev> [--rounds=N] [--phase-ms=MS]');
  process.exit(2);
}

const DOC = JSON.stringify({
  kind: 'ConfigMap',
  apiVersion: 'v1',
  metadata: { name: 'x', namespace: 'default' },
  data: { v: 'x'.repeat(900) },
});

async function bareGet(): Promise<LoadResult> {
  const bare = await bareServer(DOC);
  try {
    await load({ url: bare.url, method: 'GET', headers: {}, ca: bare.ca, durationMs: 2000 });
    return await load({ url: bare.url, method: 'GET', headers: {}, ca: bare.ca, durationMs: PHASE_MS });
  } finally {
    bare.stop();
  }
}

interface TreeResult {
  get: number;
  getCpu: number;
  create: number;
  createCpu: number;
}

async function measureTree(root: string, label: string, round: number): Promise<TreeResult> {
  const srv = await startServer({ root, args: ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0'] });
  const auth = { authorization: `Bearer ${srv.token}`, 'content-type': 'application/json' };
  try {
    await srv.json('POST', '/api/v1/namespaces/default/configmaps', JSON.parse(DOC));
    const get = { url: `${srv.url}/api/v1/namespaces/default/configmaps/x`, method: 'GET', headers: auth, ca: srv.ca };
    await load({ ...get, durationMs: 2000 });
    const g0 = threadCpu(srv.proc.pid);
    const g = await load({ ...get, durationMs: PHASE_MS });
    const getCpu = serverCpuPerRequest(g0, srv.proc.pid, g.ok);
    const body = (prefix: string) =>
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${prefix}-{{i}}` }, data: { v: 'y'.repeat(900) } });
    const create = { url: `${srv.url}/api/v1/namespaces/default/configmaps`, method: 'POST', headers: auth, ca: srv.ca };
    await load({ ...create, bodyTemplate: body('warm'), durationMs: 2000 });
    const c0 = threadCpu(srv.proc.pid);
    const c = await load({ ...create, bodyTemplate: body('cm'), durationMs: PHASE_MS });
    const createCpu = serverCpuPerRequest(c0, srv.proc.pid, c.ok);
    console.log(
      `round ${round} ${label}: GET ${g.ops}/s (errors ${g.errors}), server CPU ${getCpu.toFixed(1)} us/GET; ` +
        `create ${c.ops}/s (errors ${c.errors}), server CPU ${createCpu.toFixed(1)} us/create`,
    );
    return { get: g.ops, getCpu, create: c.ops, createCpu };
  } finally {
    await srv.stop();
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};

async function main(): Promise<void> {
  const worktree = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-before-'));
  fs.rmSync(worktree, { recursive: true });
  const git = (args: string[]) => Bun.spawnSync(['git', '-C', ROOT, ...args], { stdout: 'pipe', stderr: 'pipe' });
  const added = git(['worktree', 'add', '--detach', worktree, BEFORE as string]);
  if (added.exitCode !== 0) throw new Error(`git worktree add: ${added.stderr.toString()}`);
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(worktree, 'node_modules'));
  try {
    console.log(`load generator: ${WRK ? 'wrk -t1 -c64' : 'bench/load.ts'}; phases ${PHASE_MS} ms after 2 s warm-up; before = ${BEFORE}`);
    const bare = await bareGet();
    console.log(`bare Bun.serve TLS GET: ${bare.ops}/s`);
    const runs: Record<'before' | 'after', TreeResult[]> = { before: [], after: [] };
    for (let r = 1; r <= ROUNDS; r++) {
      // Alternate which tree goes first, so a drift of the VM's speed hits both.
      const order: ('before' | 'after')[] = r % 2 ? ['before', 'after'] : ['after', 'before'];
      for (const t of order) runs[t].push(await measureTree(t === 'before' ? worktree : ROOT, t, r));
    }
    for (const t of ['before', 'after'] as const) {
      const x = runs[t];
      const get = median(x.map((v) => v.get));
      console.log(
        `${t}: GET ${get}/s (ratio to bare ${(get / bare.ops).toFixed(2)}), ${median(x.map((v) => v.getCpu)).toFixed(1)} us CPU/GET; ` +
          `create ${median(x.map((v) => v.create))}/s, ${median(x.map((v) => v.createCpu)).toFixed(1)} us CPU/create (medians of ${x.length})`,
      );
    }
  } finally {
    git(['worktree', 'remove', '--force', worktree]);
  }
}

await main();
