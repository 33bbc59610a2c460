/**
 * The child process of the crash test (test/store-crash.test.ts), and the workload definitions it
 * shares with the parent.
 *
 *     bun test/helpers/crash-writer.ts <dir> <cycle> <seed> [fsync]
 *
 * Opens the embedded store at <dir> with small segments and a low snapshot threshold (so segment
 * rollover and snapshots happen while it runs), then runs WRITERS concurrent writers until it is
 * killed. Every writer owns its keys and writes them strictly one operation at a time, so at any
 * moment each writer has at most one operation in flight. Protocol on stdout, one JSON object per
 * line, written synchronously (nothing is buffered in this process when it is killed):
 *
 *     {"t":"ready","rev":R}                                      store opened (recovery done)
 *     {"t":"begin","w":W,"id":ID,"kind":K,"keys":[..],"base":B} before the operation is issued
 *     {"t":"ack","w":W,"id":ID,"op":"put"|"delete","keys":[..],"rev":R,"valueHash":H}
 *                                                                after the operation resolved
 *     {"t":"err","msg":M}                                        a check failed; the process exits 1
 *
 * Writes: creates of unique keys (`/u/`, removed again later so the key space stays small),
 * create/update/delete of per-writer slot keys (`/k/`, ops.create / ops.update / ops.remove),
 * and two-key transactions on pair keys (`/t/…/a` and `/t/…/b`: both put with the same value,
 * or both deleted, in one kv.txn).
 * A put's value is makeValue(base, id): deterministic, so the parent can check the bytes.
 */
import * as fs from 'node:fs';
import { crc32c } from '@node-rs/crc32';
import { MvccStore } from '../../src/store/mvcc';
import * as ops from '../../src/store/ops';
import { type KeyValue, prefixEnd } from '../../src/store/types';
import { rng } from './rng';

export { rng };

export const WRITERS = 32;
export const SLOTS = 8;
export const PAIRS = 4;
export const MAX_UNIQUE = 12;
export const SEGMENT_BYTES = 256 << 10;
export const SNAPSHOT_MIN_BYTES = 128 << 10;

export type OpKind = 'create' | 'update' | 'delete' | 'pair-create' | 'pair-update' | 'pair-delete';

export interface BeginLine {
  t: 'begin';
  w: number;
  id: string;
  kind: OpKind;
  keys: string[];
  /** makeValue(base, id) is the value every key of a put operation gets. */
  base: string;
}

export interface AckLine {
  t: 'ack';
  w: number;
  id: string;
  op: 'put' | 'delete';
  keys: string[];
  rev: number;
  /** crc32c of the value written (puts); 0 for deletes. */
  valueHash: number;
}

export type Line = { t: 'ready'; rev: number } | BeginLine | AckLine | { t: 'err'; msg: string };

export const slotKey = (w: number, s: number): string => `/k/w${w}/s${s}`;
export const pairBase = (w: number, p: number): string => `/t/w${w}/p${p}`;
export const uniqueKey = (w: number, cycle: number, n: number): string => `/u/w${w}/c${cycle}-${n}`;

/** Whether a key written by this workload puts the same value under every key of its operation. */
export function baseOf(key: string): string {
  return key.startsWith('/t/') ? key.slice(0, key.lastIndexOf('/')) : key;
}

/** The writer owning a workload key, or -1. */
export function ownerOf(key: string): number {
  const m = /^\/[kut]\/w(\d+)\//.exec(key);
  return m ? Number(m[1]) : -1;
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

const enc = new TextEncoder();

/** The value an operation `id` puts under `base`: a readable header, then seeded random bytes. */
export function makeValue(base: string, id: string): Uint8Array {
  const head = enc.encode(`${base}|${id}|`);
  const h = fnv1a(`${base}#${id}`);
  // Mostly small values; one in 16 spans several 512-byte sectors.
  const bodyLen = h % 16 === 0 ? 1500 + (h % 1000) : 16 + (h % 500);
  const out = new Uint8Array(head.length + bodyLen);
  out.set(head);
  const r = rng(h);
  for (let i = head.length; i < out.length; i++) out[i] = 1 + Math.floor(r() * 255);
  return out;
}

export const valueHash = (v: Uint8Array): number => crc32c(v);

// ---- the child process ----------------------------------------------------------------------

function emit(line: Line): void {
  const buf = enc.encode(`${JSON.stringify(line)}\n`);
  let done = 0;
  while (done < buf.length) {
    try {
      done += fs.writeSync(1, buf, done, buf.length - done);
    } catch (e) {
      // A non-blocking pipe that is full: wait for the parent to read.
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      Bun.sleepSync(1);
    }
  }
}

function fail(msg: string): never {
  emit({ t: 'err', msg });
  process.exit(1);
}

interface WriterState {
  slots: (KeyValue | undefined)[];
  /** modRevision of each pair's keys, 0 when absent. */
  pairs: number[];
  uniques: KeyValue[];
}

async function main(): Promise<void> {
  const [dir, cycleArg, seedArg, fsyncArg] = process.argv.slice(2);
  if (dir === undefined || cycleArg === undefined || seedArg === undefined) fail('usage: crash-writer <dir> <cycle> <seed> [fsync]');
  const cycle = Number(cycleArg);
  const seed = Number(seedArg);
  // Never outlive a parent that failed to kill us.
  setTimeout(() => fail('not killed within 30 s'), 30_000).unref();

  const kv = await MvccStore.open({
    dir,
    fsync: fsyncArg === 'none' ? 'none' : 'always',
    segmentBytes: SEGMENT_BYTES,
    snapshotMinBytes: SNAPSHOT_MIN_BYTES,
  });

  // Learn the owned keys from the store itself: it is the state the parent verified.
  const writers: WriterState[] = Array.from({ length: WRITERS }, () => ({
    slots: new Array<KeyValue | undefined>(SLOTS).fill(undefined),
    pairs: new Array<number>(PAIRS).fill(0),
    uniques: [],
  }));
  const all = await kv.range('/', { end: prefixEnd('/') });
  for (const item of all.kvs) {
    const w = ownerOf(item.key);
    const st = writers[w];
    if (st === undefined) continue;
    const slot = /^\/k\/w\d+\/s(\d+)$/.exec(item.key);
    const pair = /^\/t\/w\d+\/p(\d+)\/a$/.exec(item.key);
    if (slot) st.slots[Number(slot[1])] = item;
    else if (pair) st.pairs[Number(pair[1])] = item.modRevision;
    else if (item.key.startsWith('/u/')) st.uniques.push(item);
  }
  emit({ t: 'ready', rev: kv.currentRevision() });

  const run = async (w: number): Promise<void> => {
    const st = writers[w] as WriterState;
    const r = rng(seed ^ Math.imul(cycle + 1, 0x9e3779b1) ^ Math.imul(w + 1, 0x85ebca6b));
    for (let n = 0; ; n++) {
      const id = `${cycle}.${w}.${n}`;
      const x = r();
      if (x < 0.3) {
        if (st.uniques.length >= MAX_UNIQUE) {
          const victim = st.uniques.splice(Math.floor(r() * st.uniques.length), 1)[0] as KeyValue;
          emit({ t: 'begin', w, id, kind: 'delete', keys: [victim.key], base: victim.key });
          const res = await ops.remove(kv, victim.key, victim.modRevision);
          emit({ t: 'ack', w, id, op: 'delete', keys: [victim.key], rev: res.revision, valueHash: 0 });
        } else {
          const key = uniqueKey(w, cycle, n);
          const value = makeValue(key, id);
          emit({ t: 'begin', w, id, kind: 'create', keys: [key], base: key });
          const rev = await ops.create(kv, key, value);
          st.uniques.push({ key, value, createRevision: rev, modRevision: rev, version: 1 });
          emit({ t: 'ack', w, id, op: 'put', keys: [key], rev, valueHash: valueHash(value) });
        }
      } else if (x < 0.65) {
        const s = Math.floor(r() * SLOTS);
        const key = slotKey(w, s);
        const cur = st.slots[s];
        const value = makeValue(key, id);
        if (cur === undefined) {
          emit({ t: 'begin', w, id, kind: 'create', keys: [key], base: key });
          const rev = await ops.create(kv, key, value);
          st.slots[s] = { key, value, createRevision: rev, modRevision: rev, version: 1 };
          emit({ t: 'ack', w, id, op: 'put', keys: [key], rev, valueHash: valueHash(value) });
        } else if (r() < 0.65) {
          emit({ t: 'begin', w, id, kind: 'update', keys: [key], base: key });
          const rev = await ops.update(kv, key, value, cur.modRevision);
          st.slots[s] = { ...cur, value, modRevision: rev, version: cur.version + 1 };
          emit({ t: 'ack', w, id, op: 'put', keys: [key], rev, valueHash: valueHash(value) });
        } else {
          emit({ t: 'begin', w, id, kind: 'delete', keys: [key], base: key });
          const res = await ops.remove(kv, key, cur.modRevision);
          st.slots[s] = undefined;
          emit({ t: 'ack', w, id, op: 'delete', keys: [key], rev: res.revision, valueHash: 0 });
        }
      } else {
        const p = Math.floor(r() * PAIRS);
        const base = pairBase(w, p);
        const keys = [`${base}/a`, `${base}/b`];
        const [a, b] = keys as [string, string];
        const mod = st.pairs[p] as number;
        const value = makeValue(base, id);
        const kind: OpKind = mod === 0 ? 'pair-create' : r() < 0.5 ? 'pair-update' : 'pair-delete';
        emit({ t: 'begin', w, id, kind, keys, base });
        const res = await kv.txn({
          compare: [
            { key: a, target: 'mod', result: '=', value: mod },
            { key: b, target: 'mod', result: '=', value: mod },
          ],
          success:
            kind === 'pair-delete'
              ? [
                  { op: 'delete', key: a },
                  { op: 'delete', key: b },
                ]
              : [
                  { op: 'put', key: a, value },
                  { op: 'put', key: b, value },
                ],
        });
        if (!res.succeeded) fail(`pair ${base} changed under its owner (expected modRevision ${mod})`);
        st.pairs[p] = kind === 'pair-delete' ? 0 : res.revision;
        const del = kind === 'pair-delete';
        emit({ t: 'ack', w, id, op: del ? 'delete' : 'put', keys, rev: res.revision, valueHash: del ? 0 : valueHash(value) });
      }
    }
  };

  // Compaction records in the log as well (replay must apply them in order).
  const compactor = async (): Promise<void> => {
    for (;;) {
      await Bun.sleep(20);
      const target = kv.currentRevision() - 200;
      if (target > kv.compactedRevision()) await kv.compact(target);
    }
  };

  await Promise.all([...Array.from({ length: WRITERS }, (_, w) => run(w)), compactor()]);
}

if (import.meta.main) {
  main().catch((e) => fail(e instanceof Error ? (e.stack ?? e.message) : String(e)));
}
