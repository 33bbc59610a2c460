/**
 * The etcd half of the crash tool (issue 42 item 3): `bun bench/crash.ts --etcd`. A 3-member etcd
 * cluster on loopback, two API server replicas on it (--etcd-servers naming all three members),
 * `--writers` writers split over the replicas (each with its own ConfigMaps: creates, merge
 * patches, server-side applies, deletes, one operation at a time) and one watcher on each
 * replica, all running through the whole run. Each cycle SIGKILLs a random member, restarts it on
 * its data dir after a short random delay, and checks (bench/crash-check.ts):
 *
 * - both replicas answer /readyz 200 within READY_BOUND_MS of the member being healthy again;
 * - with the writers brought to rest and a fence write acknowledged: the state read back through
 *   a replica is what the acknowledged writes left;
 * - the store's history of the namespace's ConfigMaps since the last check, read from etcd itself
 *   (a watch through etcd's JSON gateway), has every acknowledged write, and each watcher's events
 *   in that window are exactly that history (nothing missing, repeated or reordered).
 *
 * A write answered with an error or not answered (no quorum, a timeout, a 5xx or 429) is not
 * acknowledged: its writer reads the key back (a quorum read) to learn whether it happened, and
 * goes on from what is there. A watcher whose watch ends or is expired (410) resumes from the
 * last resourceVersion it saw, as a client would; a resumption that is itself refused with 410
 * is a gap (a client would have to relist), and a problem.
 */

import { rng } from '../test/helpers/rng';
import { type Server, startServer } from '../test/helpers/server';
import { watchLines } from '../test/helpers/watch';
import type { CrashOptions, CrashTotals } from './crash';
import { checkHistory, checkState, checkWatch, type InFlight, type StoredState, type WatchEvent, type WriterLog } from './crash-check';
import { type EtcdServer, startEtcdCluster } from './etcd';

export interface EtcdCrashTotals extends CrashTotals {
  memberKills: number;
  /** Writes answered with an error or not answered (not acknowledged). */
  refused: number;
  /** The refused writes by answer: an HTTP status, or 'no answer' (a timeout or a broken connection). */
  refusedBy: Record<string, number>;
  /** Refused writes that happened all the same (read back afterwards): durable, not acknowledged. */
  refusedButDone: number;
  /** Watches resumed from their last resourceVersion (after a 410, an end or a broken stream). */
  resumptions: number;
  /** The longest wait for both replicas to be ready after a member came back, ms. */
  maxReadyMs: number;
}

const NS = 'crash';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
/** A request not answered within this is given up (not acknowledged). */
const REQUEST_TIMEOUT_MS = 10_000;
/** Both replicas ready again within this of the restarted member being healthy. */
const READY_BOUND_MS = 15_000;
/** Writers come to rest (their operations answered or resolved) within this. */
const REST_BOUND_MS = 60_000;
/** A watcher reaches the fence write within this of its acknowledgement. */
const WATCH_BOUND_MS = 15_000;
const SERVER_ARGS = ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0'];

type Answer = { status: number; body: { metadata?: { resourceVersion?: string }; data?: { v?: string }; items?: unknown[] } };

/** One request with a timeout; throws when it is not answered. */
async function call(srv: Server, method: string, p: string, body?: unknown, contentType = 'application/json'): Promise<Answer> {
  const res = await srv.fetch(p, {
    method,
    headers: body === undefined ? {} : { 'content-type': contentType },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  let parsed: Answer['body'] = {};
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON (a proxy's or a dying server's answer)
  }
  return { status: res.status, body: parsed };
}

/** Writers stop here between operations while a check runs. */
class Gate {
  paused = false;
  resting = 0;
  private opened: Promise<void> = Promise.resolve();
  private open: () => void = () => {};
  pause(): void {
    this.paused = true;
    this.opened = new Promise((r) => {
      this.open = r;
    });
  }
  resume(): void {
    this.paused = false;
    this.open();
  }
  async rest(): Promise<void> {
    this.resting++;
    await this.opened;
    this.resting--;
  }
}

interface Writer {
  log: WriterLog;
  refused: number;
  refusedBy: Record<string, number>;
  refusedButDone: number;
  problems: string[];
}

/**
 * One writer's loop over its own keys through `srvs[0]` (reading back through either replica);
 * `known` is what it knows of its keys, kept exact: after an unacknowledged operation it reads the
 * key back before going on, and what it finds is logged as that operation's outcome.
 */
async function writer(
  srvs: [Server, Server],
  id: number,
  keys: number,
  random: () => number,
  gate: Gate,
  stopped: () => boolean,
  known: Map<string, StoredState>,
  out: Writer,
): Promise<void> {
  const [srv] = srvs;
  let n = 0;
  while (!stopped()) {
    if (gate.paused) {
      await gate.rest();
      continue;
    }
    const key = `w${id}-k${Math.floor(random() * keys)}`;
    const cur = known.get(key);
    const value = `${id}-${++n}-${Math.floor(random() * 1e6)}`;
    const r = random();
    const op: InFlight['op'] = !cur ? (r < 0.5 ? 'create' : 'apply') : r < 0.4 ? 'patch' : r < 0.75 ? 'apply' : 'delete';
    out.log.inflight = { key, op, value: op === 'delete' ? undefined : value };
    let res: Answer | undefined;
    try {
      if (op === 'create') res = await call(srv, 'POST', CMS, { metadata: { name: key }, data: { v: value } });
      else if (op === 'patch') res = await call(srv, 'PATCH', `${CMS}/${key}`, { data: { v: value } }, 'application/merge-patch+json');
      else if (op === 'apply')
        res = await call(
          srv,
          'PATCH',
          `${CMS}/${key}?fieldManager=crash&force=true`,
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: key }, data: { v: value } },
          'application/apply-patch+yaml',
        );
      else res = await call(srv, 'DELETE', `${CMS}/${key}`);
    } catch {
      res = undefined; // not answered in time, or the connection broke
    }
    if (res && res.status < 300) {
      out.log.inflight = undefined;
      if (op === 'delete') {
        out.log.acks.push({ key, op, rv: cur?.rv ?? 0 });
        known.delete(key);
      } else {
        const rv = Number(res.body.metadata?.resourceVersion);
        out.log.acks.push({ key, op, rv, value: res.body.data?.v });
        known.set(key, { rv, value: res.body.data?.v as string });
      }
      continue;
    }
    // Not acknowledged: did it happen? The key is the writer's alone, so a quorum read tells.
    out.refused++;
    const why = res ? String(res.status) : 'no answer';
    out.refusedBy[why] = (out.refusedBy[why] ?? 0) + 1;
    let got: StoredState | undefined | 'unknown' = 'unknown';
    for (let i = 0; got === 'unknown' && !stopped(); i++) {
      try {
        const g = await call(srvs[i % 2] as Server, 'GET', `${CMS}/${key}`);
        if (g.status === 200) got = { rv: Number(g.body.metadata?.resourceVersion), value: g.body.data?.v as string };
        else if (g.status === 404) got = undefined;
      } catch {
        // not answered: again
      }
      if (got === 'unknown') await Bun.sleep(200);
    }
    if (got === 'unknown') return; // stopped: the operation stays in flight
    out.log.inflight = undefined;
    const unchanged = got === undefined ? cur === undefined : cur !== undefined && got.rv === cur.rv && got.value === cur.value;
    const happened =
      op === 'delete' ? got === undefined && cur !== undefined : got !== undefined && got.value === value && got.rv > (cur?.rv ?? 0);
    if (happened) {
      // Durable though not acknowledged: from here on it is the key's history like any other write.
      out.refusedButDone++;
      if (op === 'delete') out.log.acks.push({ key, op, rv: cur?.rv ?? 0 });
      else out.log.acks.push({ key, op, rv: (got as StoredState).rv, value });
    } else if (!unchanged) {
      const show = (s: StoredState | undefined) => (s ? `v=${s.value} rv=${s.rv}` : 'absent');
      out.problems.push(
        `writer ${id}: after its unacknowledged ${op} ${key} (${res ? `answered ${res.status}` : 'not answered'}) the key is ${show(got)}, known before as ${show(cur)}`,
      );
    }
    if (got === undefined) known.delete(key);
    else known.set(key, got);
  }
}

/** A watcher through the whole run, resuming from the last resourceVersion it saw. */
interface Watcher {
  events: WatchEvent[];
  reached(): number;
  resumptions(): number;
  /** A resumption refused with 410: the sequence would have a gap. */
  gap(): string | undefined;
  stop(): Promise<void>;
}

function watcher(srv: Server, fromRv: number): Watcher {
  const events: WatchEvent[] = [];
  let reached = fromRv;
  let resumptions = -1;
  let gap: string | undefined;
  let stopped = false;
  const ac = new AbortController();
  const done = (async () => {
    let refusedInARow = 0;
    while (!stopped && gap === undefined) {
      resumptions++;
      let expired = false;
      let seen = 0;
      try {
        const res = await srv.fetch(`${CMS}?watch=true&resourceVersion=${reached}&allowWatchBookmarks=true`, { signal: ac.signal });
        if (res.status === 410) expired = true;
        else if (res.status === 200 && res.body) {
          for await (const e of watchLines(res.body)) {
            const rv = Number(e.object?.metadata?.resourceVersion ?? 0);
            if (e.type === 'ERROR') expired = e.object?.code === 410;
            else if (e.type === 'BOOKMARK') reached = Math.max(reached, rv);
            else if (e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED') {
              events.push({ type: e.type, key: e.object.metadata.name, rv, value: e.object.data?.v });
              reached = Math.max(reached, rv);
              seen++;
            }
          }
        } else await res.text();
      } catch {
        // stopped, or the stream broke: resume
      }
      if (stopped) break;
      // Expired right away, more than once: the server cannot resume from here (a client relists).
      refusedInARow = expired && seen === 0 ? refusedInARow + 1 : 0;
      if (refusedInARow >= 3) gap = `resuming the watch from rv=${reached} was refused with 410 Expired ${refusedInARow} times`;
      await Bun.sleep(expired ? 500 : 200);
    }
  })();
  return {
    events,
    reached: () => reached,
    resumptions: () => Math.max(0, resumptions),
    gap: () => gap,
    stop: async () => {
      stopped = true;
      ac.abort();
      await done;
    },
  };
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** What etcd's gateway shows of a key-value (base64 fields, int64 as strings). */
interface GatewayKv {
  key: string;
  value?: string;
  create_revision?: string;
  mod_revision?: string;
}

/**
 * The store's history of the namespace's ConfigMaps in (fromRv, untilRv], from etcd itself: a
 * watch through its JSON gateway from fromRv + 1, read until an event at untilRv (the fence,
 * which is in the range). The value is data.v where the stored object is JSON, else undefined.
 */
async function etcdHistory(endpoints: string[], prefix: string, fromRv: number, untilRv: number): Promise<WatchEvent[]> {
  let lastError = '';
  for (const ep of endpoints) {
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), 15_000);
    const events: WatchEvent[] = [];
    try {
      const res = await fetch(`${ep}/v3/watch`, {
        method: 'POST',
        body: JSON.stringify({
          create_request: { key: b64(prefix), range_end: b64(`${prefix.slice(0, -1)}0`), start_revision: String(fromRv + 1) },
        }),
        signal: ac.signal,
      });
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const dec = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) throw new Error('the watch ended');
        buf += dec.decode(value, { stream: true });
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line) continue;
          const msg = JSON.parse(line);
          if (msg.error) throw new Error(JSON.stringify(msg.error));
          const r = msg.result ?? {};
          if (r.canceled) throw new Error(`watch canceled: ${r.cancel_reason ?? ''} (compacted to ${r.compact_revision ?? '?'})`);
          for (const e of (r.events ?? []) as { type?: string; kv: GatewayKv }[]) {
            const rv = Number(e.kv.mod_revision);
            if (rv > untilRv) continue;
            const name = Buffer.from(e.kv.key, 'base64').toString().slice(prefix.length);
            let v: string | undefined;
            const raw = e.kv.value ? Buffer.from(e.kv.value, 'base64') : undefined;
            if (raw && raw[0] === 0x7b) v = JSON.parse(raw.toString()).data?.v;
            const type = e.type === 'DELETE' ? 'DELETED' : e.kv.create_revision === e.kv.mod_revision ? 'ADDED' : 'MODIFIED';
            events.push({ type, key: name, rv, value: type === 'DELETED' ? undefined : v });
          }
          if (events.length > 0 && (events.at(-1) as WatchEvent).rv >= untilRv) {
            ac.abort();
            return events;
          }
        }
      }
    } catch (e) {
      lastError = `${ep}: ${String(e)}`;
    } finally {
      clearTimeout(timer);
    }
  }
  throw new Error(`could not read the store's history (${fromRv}, ${untilRv}] from etcd: ${lastError}`);
}

/**
 * The etcd key prefix under which the server keeps the namespace's ConfigMaps, found from where
 * the fence ConfigMap is (so the tool does not depend on the server's key layout).
 */
async function etcdPrefix(endpoint: string): Promise<string> {
  const r = await fetch(`${endpoint}/v3/kv/range`, {
    method: 'POST',
    body: JSON.stringify({ key: b64('\0'), range_end: b64('\0'), keys_only: true }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await r.json()) as { kvs?: { key: string }[] };
  const suffix = `/${NS}/fence`;
  for (const kv of body.kvs ?? []) {
    const key = Buffer.from(kv.key, 'base64').toString();
    if (key.includes('configmaps') && key.endsWith(suffix)) return key.slice(0, -'fence'.length);
  }
  throw new Error(`no key ending in ${suffix} in etcd`);
}

/** Whether `m` is the cluster's leader now (its status through the gateway). */
async function isLeader(m: EtcdServer): Promise<boolean> {
  try {
    const r = await fetch(`${m.endpoint}/v3/maintenance/status`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(2000) });
    const s = (await r.json()) as { header?: { member_id?: string }; leader?: string };
    return s.leader !== undefined && s.leader === s.header?.member_id;
  } catch {
    return false;
  }
}

/** ms until every replica answers /readyz 200 (at most `bound`); undefined when one did not. */
async function readyWithin(srvs: Server[], bound: number): Promise<{ ms: number; stuck?: string }> {
  const t0 = Date.now();
  const ready = srvs.map(() => false);
  for (;;) {
    await Promise.all(
      srvs.map(async (s, i) => {
        if (ready[i]) return;
        const r = await s.fetch('/readyz', { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
        ready[i] = r?.status === 200;
        await r?.text();
      }),
    );
    if (ready.every(Boolean)) return { ms: Date.now() - t0 };
    if (Date.now() - t0 > bound) {
      const i = ready.indexOf(false);
      const v = await (srvs[i] as Server)
        .fetch('/readyz?verbose', { signal: AbortSignal.timeout(2000) })
        .then((r) => r.text())
        .catch((e) => String(e));
      return {
        ms: Date.now() - t0,
        stuck: `replica ${i} not ready ${bound} ms after the member was back: ${v.replace(/\s+/g, ' ').slice(0, 400)}`,
      };
    }
    await Bun.sleep(100);
  }
}

/** Retry `f` until it answers 2xx, for at most `bound` ms. */
async function until2xx(f: () => Promise<Answer>, bound: number): Promise<Answer | undefined> {
  for (const t0 = Date.now(); Date.now() - t0 < bound; await Bun.sleep(200)) {
    const r = await f().catch(() => undefined);
    if (r && r.status < 300) return r;
  }
  return undefined;
}

export async function runEtcdCrashCycles(o: CrashOptions): Promise<EtcdCrashTotals> {
  const random = rng(o.seed);
  const totals: EtcdCrashTotals = {
    cycles: 0,
    acknowledged: 0,
    problems: [],
    memberKills: 0,
    refused: 0,
    refusedBy: {},
    refusedButDone: 0,
    resumptions: 0,
    maxReadyMs: 0,
  };
  const members = await startEtcdCluster(3);
  if (!members) throw new Error('no etcd (apt-get install etcd-server)');
  const endpoints = members.map((m) => m.endpoint);
  const srvs: Server[] = [];
  const stopAll = async () => {
    await Promise.all(srvs.map((s) => s.stop()));
    await Promise.all(members.map((m) => m.stop()));
  };
  try {
    for (let i = 0; i < 2; i++) srvs.push(await startServer({ args: [`--etcd-servers=${endpoints.join(',')}`, ...SERVER_ARGS] }));
    const pair = srvs as [Server, Server];
    const ns = await until2xx(() => call(pair[0], 'POST', '/api/v1/namespaces', { metadata: { name: NS } }), 30_000);
    if (!ns) throw new Error('could not create the namespace');
    let fences = 0;
    const fence = () =>
      until2xx(
        () =>
          call(
            pair[0],
            'PATCH',
            `${CMS}/fence?fieldManager=crash&force=true`,
            {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: 'fence' },
              data: { v: `fence-${++fences}` },
            },
            'application/apply-patch+yaml',
          ),
        30_000,
      );
    const first = await fence();
    if (!first) throw new Error('could not write the first fence');
    let from = Number(first.body.metadata?.resourceVersion);
    const prefix = await etcdPrefix(endpoints[0] as string);
    const allKeys = Array.from({ length: o.writers }, (_, w) => Array.from({ length: o.keys }, (_, k) => `w${w}-k${k}`)).flat();
    const watchers = srvs.map((s) => watcher(s, from));
    const gate = new Gate();
    let stopped = false;
    const writers: Writer[] = Array.from({ length: o.writers }, () => ({
      log: { acks: [] },
      refused: 0,
      refusedBy: {},
      refusedButDone: 0,
      problems: [],
    }));
    const running = writers.map((out, w) =>
      writer(
        w % 2 === 0 ? pair : [pair[1], pair[0]],
        w,
        o.keys,
        rng(o.seed ^ Math.imul(w + 1, 0x9e3779b1)),
        gate,
        () => stopped,
        new Map(),
        out,
      ),
    );
    const carried = writers.map(() => 0);
    try {
      for (let cycle = 1; cycle <= o.cycles; cycle++) {
        const problems: string[] = [];
        // Writers run; a random member dies and comes back on its data dir.
        await Bun.sleep(1000 + Math.floor(random() * 2000));
        const victim = Math.floor(random() * members.length);
        const m = members[victim] as EtcdServer;
        const leader = await isLeader(m);
        await m.kill();
        totals.memberKills++;
        const downMs = 200 + Math.floor(random() * 1800);
        await Bun.sleep(downMs);
        try {
          await m.restart();
        } catch (e) {
          problems.push(`member m${victim} did not come back: ${String(e).slice(0, 300)}`);
        }
        const ready = await readyWithin(srvs, READY_BOUND_MS);
        totals.maxReadyMs = Math.max(totals.maxReadyMs, ready.ms);
        if (ready.stuck) problems.push(ready.stuck);
        // Writers to rest, a fence write, then the checks.
        gate.pause();
        const t0 = Date.now();
        while (gate.resting < o.writers && Date.now() - t0 < REST_BOUND_MS) await Bun.sleep(20);
        if (gate.resting < o.writers)
          problems.push(`${o.writers - gate.resting} writers still busy ${REST_BOUND_MS} ms after being paused`);
        const f = await fence();
        const logs = writers.map((w) => w.log);
        for (const w of writers) problems.push(...w.problems.splice(0));
        let history: WatchEvent[] = [];
        let until = from;
        if (!f) problems.push('no fence write acknowledged within 30 s');
        else {
          until = Number(f.body.metadata?.resourceVersion);
          const list = await until2xx(() => call(pair[cycle % 2] as Server, 'GET', CMS), 30_000);
          if (!list) problems.push('no list answered within 30 s');
          else {
            const after = new Map<string, StoredState>();
            for (const i of (list.body.items ?? []) as { metadata: { name: string; resourceVersion: string }; data?: { v?: string } }[])
              after.set(i.metadata.name, { rv: Number(i.metadata.resourceVersion), value: i.data?.v as string });
            problems.push(...checkState(logs, after, allKeys));
          }
          try {
            history = await etcdHistory(endpoints, prefix, from, until);
            problems.push(...checkWatch("etcd's history", history, logs, from, until));
          } catch (e) {
            problems.push(String(e));
          }
          for (const [i, w] of watchers.entries()) {
            for (const t = Date.now(); w.reached() < until && !w.gap() && Date.now() - t < WATCH_BOUND_MS; ) await Bun.sleep(20);
            const gap = w.gap();
            if (gap) problems.push(`watcher ${i}: ${gap}`);
            else if (w.reached() < until)
              problems.push(`watcher ${i}: at rv=${w.reached()} ${WATCH_BOUND_MS} ms after the fence at rv=${until}`);
            // Order over the whole run: nothing at or before the last check's fence comes again.
            problems.push(...checkWatch(`watcher ${i}`, w.events, [], from, until));
            if (history.length > 0) problems.push(...checkHistory(`watcher ${i}`, w.events, history, from, Math.min(until, w.reached())));
          }
        }
        const acked = writers.reduce((n, w, i) => n + w.log.acks.length - (carried[i] as number), 0);
        const refused = writers.reduce((n, w) => n + w.refused, 0) - totals.refused;
        totals.cycles++;
        totals.acknowledged += acked;
        totals.refused += refused;
        const resumptions = watchers.reduce((n, w) => n + w.resumptions(), 0);
        o.log(
          `cycle ${cycle}: killed m${victim}${leader ? ' (leader)' : ''} for ${downMs} ms, replicas ready ${ready.ms} ms after it was back; ${acked} acknowledged, ${refused} refused; history ${history.length} events, watchers ${watchers.map((w) => w.events.filter((e) => e.rv > from && e.rv <= until).length).join('/')} (${resumptions - totals.resumptions} resumptions); ${problems.length === 0 ? 'ok' : `${problems.length} problems`}`,
        );
        totals.resumptions = resumptions;
        if (problems.length > 0) {
          totals.problems.push(...problems.map((p) => `cycle ${cycle} (seed ${o.seed}): ${p}`));
          // What the replicas said about etcd and their watch caches, for the diagnosis.
          for (const [i, s] of srvs.entries()) {
            const said = s
              .logs()
              .split('\n')
              .filter((l) => /etcd|watch cache/i.test(l));
            if (said.length > 0)
              o.log(`replica ${i}'s log (etcd, watch caches; last 10 of ${said.length}):\n  ${said.slice(-10).join('\n  ')}`);
          }
          break;
        }
        // Keep only what the next checks need: each key's last acknowledged write, events past the fence.
        writers.forEach((w, i) => {
          const last = new Map(w.log.acks.map((a) => [a.key, a]));
          w.log.acks = [...last.values()].sort((a, b) => a.rv - b.rv);
          carried[i] = w.log.acks.length;
        });
        for (const w of watchers) w.events.splice(0, w.events.filter((e) => e.rv <= until).length);
        from = until;
        gate.resume();
      }
    } finally {
      stopped = true;
      gate.resume();
      await Promise.all(watchers.map((w) => w.stop()));
      // The writers' requests time out at the latest REQUEST_TIMEOUT_MS after the servers stop.
      await stopAll();
      await Promise.all(running);
      totals.refusedButDone = writers.reduce((n, w) => n + w.refusedButDone, 0);
      for (const w of writers) for (const [why, n] of Object.entries(w.refusedBy)) totals.refusedBy[why] = (totals.refusedBy[why] ?? 0) + n;
    }
  } catch (e) {
    await stopAll();
    throw e;
  }
  return totals;
}
