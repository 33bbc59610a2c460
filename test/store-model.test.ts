/**
 * Randomized operation sequences against the embedded store, checked step by step against a
 * simple reference model (a full copy of the key space per revision). Seeds are fixed so a
 * failure reproduces; the seed is in the test name.
 */
import { describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startEtcd } from '../bench/etcd';
import { EtcdStore } from '../src/store/etcd';
import { MvccStore } from '../src/store/mvcc';
import { type ChangeEvent, type ChangeStream, isStoreError, type KV, prefixEnd, type TxnOp } from '../src/store/types';
import { needs } from './helpers/needs';
import { rng } from './helpers/rng';

interface MKey {
  value: string;
  create: number;
  mod: number;
  version: number;
}
type State = Map<string, MKey>;

const enc = new TextEncoder();
const dec = new TextDecoder();

class Model {
  /** states[r - base] is the key space after revision r (base: the empty store's revision). */
  states: State[] = [new Map()];
  events: { rev: number; type: 'put' | 'delete'; key: string; value?: string }[] = [];

  constructor(readonly base: number) {}

  get rev(): number {
    return this.base + this.states.length - 1;
  }

  get now(): State {
    return this.states[this.states.length - 1] as State;
  }

  at(rev: number): State {
    return this.states[Math.max(0, rev - this.base)] as State;
  }

  commit(ops: ({ op: 'put'; key: string; value: string } | { op: 'delete'; key: string })[]): void {
    const next = new Map(this.now);
    const rev = this.rev + 1;
    for (const o of ops) {
      const prev = next.get(o.key);
      if (o.op === 'put') {
        next.set(o.key, { value: o.value, create: prev ? prev.create : rev, mod: rev, version: prev ? prev.version + 1 : 1 });
        this.events.push({ rev, type: 'put', key: o.key, value: o.value });
      } else if (prev) {
        next.delete(o.key);
        this.events.push({ rev, type: 'delete', key: o.key });
      }
    }
    this.states.push(next);
  }
}

function sorted(state: State, from: string, end: string): [string, MKey][] {
  return [...state.entries()].filter(([k]) => k >= from && (end === '\0' || k < end)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** How a backend differs from the embedded store in what the model checks. */
interface Flavour {
  /** The empty store's revision (etcd: 1). */
  base: number;
  /** A branch whose writes change nothing (deletes of absent keys) still takes a revision (etcd: no). */
  noopWrites: boolean;
  /** A watch may start at the compacted revision itself (etcd: no). */
  watchesAtCompacted: boolean;
}
const EMBEDDED: Flavour = { base: 0, noopWrites: true, watchesAtCompacted: true };

async function run(seed: number, kvIn: KV, steps: number, reopen?: () => Promise<KV>, flavour = EMBEDDED): Promise<void> {
  const { base, noopWrites } = flavour;
  let kv = kvIn;
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const keys = Array.from({ length: 12 }, (_, i) => `/m/${String.fromCharCode(97 + (i % 6))}/${i}`);
  const m = new Model(base);
  // Standing change streams (as the watch caches hold them), one per range, read now and then:
  // every event of their range since they opened, none of any other, in order.
  const RANGES = ['/m/a/', '/m/b/', '/m/', '/m/a', ''];
  const fmt = (e: ChangeEvent) => [e.kv.modRevision, e.type, e.kv.key, e.type === 'put' ? dec.decode(e.kv.value) : undefined];
  const openStanding = (from: number) =>
    RANGES.map((prefix) => ({
      prefix,
      from,
      seen: 0,
      stream: kv.watch(from, prefix ? { key: prefix, end: prefixEnd(prefix) } : {}) as ChangeStream,
    }));
  let standing = openStanding(base + 1);
  const drainStanding = async (ctx: string) => {
    for (const s of standing) {
      const want = m.events.filter((e) => e.rev >= s.from && e.key.startsWith(s.prefix));
      const got: ChangeEvent[] = [];
      while (s.seen + got.length < want.length) got.push(...(await s.stream.next()));
      expect(got.map(fmt), `${ctx} range ${s.prefix}`).toEqual(want.slice(s.seen).map((e) => [e.rev, e.type, e.key, e.value]));
      s.seen = want.length;
    }
  };
  for (let step = 0; step < steps; step++) {
    const what = r();
    const ctx = `seed ${seed} step ${step}`;
    if (what < 0.45) {
      // A transaction: a random compare on one key, random writes in each branch.
      const key = pick(keys);
      const cur = m.now.get(key);
      const target = pick(['mod', 'version', 'create'] as const);
      const have = cur ? (target === 'mod' ? cur.mod : target === 'version' ? cur.version : cur.create) : 0;
      const value = r() < 0.6 ? have : Math.floor(r() * (m.rev + 2));
      const result = pick(['=', '!=', '<', '>'] as const);
      const ok = result === '=' ? have === value : result === '!=' ? have !== value : result === '<' ? have < value : have > value;
      const branch = (): TxnOp[] => {
        const used = new Set<string>();
        const ops: TxnOp[] = [];
        const n = Math.floor(r() * 3);
        for (let i = 0; i < n; i++) {
          const k = pick(keys);
          if (used.has(k)) continue;
          used.add(k);
          ops.push(r() < 0.7 ? { op: 'put', key: k, value: enc.encode(`${k}@${step}.${i}`) } : { op: 'delete', key: k });
        }
        if (r() < 0.3) ops.push({ op: 'get', key: pick(keys) });
        return ops;
      };
      const success = branch();
      const failure = branch();
      const res = await kv.txn({ compare: [{ key, target, result, value }], success, failure });
      expect(res.succeeded, ctx).toBe(ok);
      const ops = ok ? success : failure;
      const writes = ops.filter((o) => o.op !== 'get' && (o.op === 'put' || m.now.has(o.key)));
      const hadWrites = ops.some((o) => o.op !== 'get');
      if (hadWrites && (noopWrites || writes.length > 0)) {
        m.commit(
          writes.map((o) => (o.op === 'put' ? { op: 'put', key: o.key, value: dec.decode(o.value) } : { op: 'delete', key: o.key })),
        );
      }
      expect(res.revision, ctx).toBe(m.rev);
    } else if (what < 0.85) {
      // A range at a random retained revision with a random limit.
      const at = r() < 0.5 ? 0 : Math.max(kv.compactedRevision(), Math.floor(r() * (m.rev + 1)));
      const prefix = pick(['/m/', '/m/a/', '/m/b/', '/m/c/', '']);
      const end = prefix === '' ? '\0' : prefixEnd(prefix);
      const limit = pick([0, 1, 2, 5]);
      const res = await kv.range(prefix, { end, revision: at, limit });
      const want = sorted(m.at(at || m.rev), prefix, end);
      expect(res.count, ctx).toBe(want.length);
      const shown = limit ? want.slice(0, limit) : want;
      expect(
        res.kvs.map((x) => [x.key, dec.decode(x.value), x.createRevision, x.modRevision, x.version]),
        ctx,
      ).toEqual(shown.map(([k, v]) => [k, v.value, v.create, v.mod, v.version]));
      expect(res.more, ctx).toBe(shown.length < want.length);
    } else if (what < 0.92) {
      const lo = kv.compactedRevision() + 1;
      if (m.rev >= lo) {
        const at = lo + Math.floor(r() * (m.rev - lo + 1));
        await drainStanding(ctx);
        await kv.compact(at);
        expect(kv.compactedRevision(), ctx).toBe(at);
      }
    } else if (what < 0.97) {
      await drainStanding(ctx);
      // Watch from a random retained revision: exactly the model's events, in order.
      const from = Math.max(kv.compactedRevision(), 1) + Math.floor(r() * 5);
      if (from <= m.rev) {
        const stream = kv.watch(from);
        const want = m.events.filter((e) => e.rev >= from);
        const got: ChangeEvent[] = [];
        try {
          while (got.length < want.length) got.push(...(await stream.next()));
        } catch (e) {
          // A reopened store keeps no history before its snapshot, and etcd refuses a watch from
          // the compacted revision itself: both are reported as compacted.
          const atCompacted = !flavour.watchesAtCompacted && from <= kv.compactedRevision();
          if (!((reopen || atCompacted) && isStoreError(e, 'compacted'))) throw e;
          stream.close();
          continue;
        }
        stream.close();
        expect(
          got.map((e) => [e.kv.modRevision, e.type, e.kv.key, e.type === 'put' ? dec.decode(e.kv.value) : undefined]),
          ctx,
        ).toEqual(want.map((e) => [e.rev, e.type, e.key, e.value]));
      }
    } else if (reopen) {
      await drainStanding(ctx);
      for (const st of standing) st.stream.close();
      kv = await reopen();
      expect(kv.currentRevision(), ctx).toBe(m.rev);
      standing = openStanding(m.rev + 1);
    }
  }
  await drainStanding(`seed ${seed} end`);
  for (const st of standing) st.stream.close();
  expect(kv.currentRevision()).toBe(m.rev);
}

describe('store model check', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    test(`in memory, seed ${seed}`, async () => {
      const kv = await MvccStore.open();
      await run(seed, kv, 1500);
      await kv.close();
    });
  }
  for (const seed of [11, 12, 13]) {
    test(`on disk with reopens, snapshots and rollover, seed ${seed}`, async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-model-'));
      // Seed 13 also spills every superseded value at once (history read back from spill files).
      const spill = seed === 13 ? { afterMs: 0, maxPendingBytes: 0, minValueBytes: 0, fileBytes: 2048 } : undefined;
      const opts = { dir, segmentBytes: 16 << 10, snapshotMinBytes: 8 << 10, spill };
      let kv = await MvccStore.open(opts);
      try {
        await run(seed, kv, 1500, async () => {
          await kv.close();
          kv = await MvccStore.open(opts);
          return kv;
        });
      } finally {
        await kv.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }, 60_000);
  }
});

needs('etcd').describe('store model check: etcd', () => {
  for (const seed of [21, 22]) {
    test(`a real etcd, seed ${seed}`, async () => {
      const etcd = await startEtcd();
      if (!etcd) throw new Error('etcd did not start');
      const kv = await EtcdStore.open({ endpoints: [etcd.endpoint], prefix: '/registry' });
      try {
        await run(seed, kv, 1000, undefined, { base: 1, noopWrites: false, watchesAtCompacted: false });
      } finally {
        await kv.close();
        await etcd.stop();
      }
    }, 120_000);
  }
});
