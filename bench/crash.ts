/**
 * The server killed under load, again and again (issue 42 item 3): each cycle starts the server
 * on the same data dir, runs `--writers` writers (each with its own ConfigMaps: creates, merge
 * patches, server-side applies, deletes, one operation at a time) and two watchers, SIGKILLs the
 * server after a random 0.3-2 s, restarts it and checks (bench/crash-check.ts):
 *
 * - every acknowledged write is there (or its writer's in-flight operation's result);
 * - each live watcher saw the acknowledged writes it covered, in order, once;
 * - a watch from the cycle's start on the restarted server replays the cycle's history the same way.
 *
 *   bun bench/crash.ts [--cycles=N] [--writers=N] [--keys=N] [--seed=N]
 *
 * With --etcd the same writers run through two replicas on a 3-member etcd cluster whose members
 * are SIGKILLed and restarted instead (bench/crash-etcd.ts):
 *
 *   bun bench/crash.ts --etcd [--cycles=N] [--writers=N] [--keys=N] [--seed=N]
 *
 * Prints one line per cycle and a total; exits 1 on the first problem (with the seed).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { rng } from '../test/helpers/rng';
import { type Server, startServer } from '../test/helpers/server';
import { watchLines } from '../test/helpers/watch';
import { checkState, checkWatch, type InFlight, type StoredState, type WatchEvent, type WriterLog } from './crash-check';
import { runEtcdCrashCycles } from './crash-etcd';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];

export interface CrashOptions {
  cycles: number;
  writers: number;
  keys: number;
  seed: number;
  log: (line: string) => void;
}

export interface CrashTotals {
  cycles: number;
  /** The longest restart to serving (embedded mode). */
  longestRestartMs?: number;
  acknowledged: number;
  problems: string[];
}

const NS = 'crash';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;

/** A watcher that records events (as WatchEvents) from `fromRv` until aborted. */
function watcher(
  srv: Server,
  fromRv: number,
): { events: WatchEvent[]; reached: () => number; expired: () => boolean; stop: () => void; done: Promise<void> } {
  const events: WatchEvent[] = [];
  let expired = false;
  let reached = fromRv;
  const ac = new AbortController();
  const done = (async () => {
    try {
      const res = await srv.fetch(`${CMS}?watch=true&resourceVersion=${fromRv}&allowWatchBookmarks=true`, { signal: ac.signal });
      for await (const e of watchLines(res.body as ReadableStream<Uint8Array>)) {
        const rv = Number(e.object?.metadata?.resourceVersion ?? 0);
        if (e.type === 'ERROR') expired = e.object?.code === 410;
        else if (e.type === 'BOOKMARK') reached = Math.max(reached, rv);
        else if (e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED') {
          events.push({ type: e.type, key: e.object.metadata.name, rv, value: e.object.data?.v });
          reached = Math.max(reached, rv);
        }
      }
    } catch {
      // aborted, or the server died
    }
  })();
  return { events, reached: () => reached, expired: () => expired, stop: () => ac.abort(), done };
}

/** One writer's loop over its own keys until `stop` says so; answers its log. */
async function writer(
  srv: Server,
  id: number,
  keys: number,
  random: () => number,
  stop: () => boolean,
  known: Map<string, StoredState>,
): Promise<WriterLog> {
  const log: WriterLog = { acks: [] };
  let n = 0;
  while (!stop()) {
    const key = `w${id}-k${Math.floor(random() * keys)}`;
    const cur = known.get(key);
    const value = `${id}-${++n}-${Math.floor(random() * 1e6)}`;
    const r = random();
    const op: InFlight['op'] = !cur ? (r < 0.5 ? 'create' : 'apply') : r < 0.4 ? 'patch' : r < 0.75 ? 'apply' : 'delete';
    log.inflight = { key, op, value: op === 'delete' ? undefined : value };
    let res: { status: number; body: { metadata?: { resourceVersion?: string }; data?: { v?: string } } };
    try {
      if (op === 'create') res = await srv.json('POST', CMS, { metadata: { name: key }, data: { v: value } });
      else if (op === 'patch')
        res = await srv.json('PATCH', `${CMS}/${key}`, { data: { v: value } }, { 'content-type': 'application/merge-patch+json' });
      else if (op === 'apply')
        res = await srv.json(
          'PATCH',
          `${CMS}/${key}?fieldManager=crash&force=true`,
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: key }, data: { v: value } },
          { 'content-type': 'application/apply-patch+yaml' },
        );
      else res = await srv.json('DELETE', `${CMS}/${key}`);
    } catch {
      return log; // the server died: the operation stays in flight
    }
    if (res.status >= 500) return log; // shutting down or dying: not acknowledged
    log.inflight = undefined;
    if (res.status >= 300) continue; // refused (a race with nothing: should not happen; not a write)
    if (op === 'delete') {
      log.acks.push({ key, op, rv: cur?.rv ?? 0 });
      known.delete(key);
    } else {
      const rv = Number(res.body.metadata?.resourceVersion);
      log.acks.push({ key, op, rv, value: res.body.data?.v });
      known.set(key, { rv, value: res.body.data?.v as string });
    }
  }
  return log;
}

async function storedState(srv: Server): Promise<Map<string, StoredState>> {
  const r = await srv.json('GET', CMS);
  const out = new Map<string, StoredState>();
  for (const i of r.body.items ?? []) out.set(i.metadata.name, { rv: Number(i.metadata.resourceVersion), value: i.data?.v });
  return out;
}

export async function runCrashCycles(o: CrashOptions): Promise<CrashTotals> {
  const random = rng(o.seed);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-crash-'));
  const totals: CrashTotals = { cycles: 0, acknowledged: 0, problems: [] };
  const allKeys = Array.from({ length: o.writers }, (_, w) => Array.from({ length: o.keys }, (_, k) => `w${w}-k${k}`)).flat();
  // Per writer, what it knows of its keys (carried across cycles: the checked state of the last).
  let known: Map<string, StoredState>[] = Array.from({ length: o.writers }, () => new Map());
  let srv = await startServer({ dataDir, args: ['--controllers=*', '--max-requests-inflight=0', '--max-mutating-requests-inflight=0'] });
  try {
    await srv.json('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    for (let cycle = 1; cycle <= o.cycles; cycle++) {
      const start = Number((await srv.json('GET', CMS)).body.metadata.resourceVersion);
      const watchers = [watcher(srv, start), watcher(srv, start)];
      let stopped = false;
      const logs = Promise.all(known.map((k, w) => writer(srv, w, o.keys, random, () => stopped, k)));
      await Bun.sleep(300 + Math.floor(random() * 1700));
      srv.proc.kill('SIGKILL');
      await srv.proc.exited;
      stopped = true;
      const writers = await logs;
      for (const w of watchers) w.stop();
      await Promise.all(watchers.map((w) => w.done));
      // A long run shares the machine: the restart may wait for the cores (its time is reported).
      const restartAt = performance.now();
      srv = await startServer({
        dataDir,
        args: ['--controllers=*', '--max-requests-inflight=0', '--max-mutating-requests-inflight=0'],
        startTimeoutMs: 120_000,
      });
      const restartMs = performance.now() - restartAt;
      totals.longestRestartMs = Math.max(totals.longestRestartMs ?? 0, restartMs);
      const after = await storedState(srv);
      const problems = checkState(writers, after, allKeys);
      watchers.forEach((w, i) => {
        problems.push(...checkWatch(`watcher ${i}`, w.events, writers, start, w.reached()));
      });
      // The restarted server replays the cycle from its start.
      const maxAck = Math.max(start, ...writers.flatMap((w) => w.acks.filter((a) => a.op !== 'delete').map((a) => a.rv)));
      const replay = watcher(srv, start);
      for (let waited = 0; replay.reached() < maxAck && !replay.expired() && waited < 5000; waited += 50) await Bun.sleep(50);
      replay.stop();
      await replay.done;
      // The restarted server's watch cache may not reach back to the cycle's start: a 410 Expired
      // is then the right answer (clients relist), and the replay has nothing to check.
      if (!replay.expired()) {
        problems.push(...checkWatch('replay', replay.events, writers, start, replay.reached()));
        if (replay.reached() < maxAck) problems.push(`replay: reached rv=${replay.reached()}, not the last acknowledged rv=${maxAck}`);
      }
      const acked = writers.reduce((n, w) => n + w.acks.length, 0);
      totals.cycles++;
      totals.acknowledged += acked;
      o.log(
        `cycle ${cycle}: ${acked} acknowledged writes, ${writers.filter((w) => w.inflight).length} in flight at the kill, watchers saw ${watchers.map((w) => w.events.length).join('/')} events, replay ${replay.expired() ? '410 Expired' : `${replay.events.length} events`}, restart ${Math.round(restartMs)} ms; ${problems.length === 0 ? 'ok' : `${problems.length} problems`}`,
      );
      if (problems.length > 0) {
        totals.problems.push(...problems.map((p) => `cycle ${cycle} (seed ${o.seed}): ${p}`));
        break;
      }
      // What each writer knows now: the checked state of its keys.
      known = known.map((_, w) => {
        const m = new Map<string, StoredState>();
        for (const [k, v] of after) if (k.startsWith(`w${w}-`)) m.set(k, v);
        return m;
      });
    }
  } finally {
    await srv.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return totals;
}

if (import.meta.main) {
  const seed = Number(arg('seed') ?? Date.now() % 1_000_000);
  const t0 = Date.now();
  const options: CrashOptions = {
    cycles: Number(arg('cycles') ?? 20),
    writers: Number(arg('writers') ?? 64),
    keys: Number(arg('keys') ?? 4),
    seed,
    log: (l) => console.log(l),
  };
  let totals: CrashTotals;
  let more = '';
  if (process.argv.includes('--etcd')) {
    const t = await runEtcdCrashCycles(options);
    totals = t;
    more = `, ${t.memberKills} member kills, ${t.refused} writes refused (${Object.entries(t.refusedBy)
      .map(([why, n]) => `${why}: ${n}`)
      .join(
        ', ',
      )}; ${t.refusedButDone} of them done all the same), ${t.resumptions} watch resumptions, replicas ready at most ${t.maxReadyMs} ms after a member was back`;
  } else {
    totals = await runCrashCycles(options);
    more = `, longest restart ${Math.round(totals.longestRestartMs ?? 0)} ms`;
  }
  console.log(
    `${totals.cycles} cycles, ${totals.acknowledged} acknowledged writes${more}, ${totals.problems.length} problems (seed ${seed}, ${((Date.now() - t0) / 1000).toFixed(0)} s)`,
  );
  for (const p of totals.problems) console.log(`  ${p}`);
  process.exit(totals.problems.length > 0 ? 1 : 0);
}
