/**
 * Crash tests of the embedded store: a child process (helpers/crash-writer.ts) writes with many
 * concurrent writers and reports every acknowledged write on stdout; the parent SIGKILLs it at a
 * random moment, reopens the store in-process and checks that
 *
 * - every acknowledged write is there with its value and revision, unless the writer's one
 *   operation that was in flight (begun, not acknowledged) changed the key afterwards;
 * - acknowledged deletes are gone (unless that in-flight operation re-created the key);
 * - both keys of every two-key transaction are there with the same value, or both are absent;
 * - nothing else is there, currentRevision() >= every acknowledged revision, and a new write gets
 *   a revision above every revision seen so far.
 *
 * The next cycle writes on into the same directory, so recovery after recovery is tested, with
 * segment rollover, snapshots, compaction records and the removal of old segments along the way.
 */
import { expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MvccStore } from '../src/store/mvcc';
import { type KeyValue, prefixEnd } from '../src/store/types';
import {
  type AckLine,
  type BeginLine,
  baseOf,
  type Line,
  makeValue,
  ownerOf,
  rng,
  SEGMENT_BYTES,
  SNAPSHOT_MIN_BYTES,
  valueHash,
} from './helpers/crash-writer';

const CYCLES = 60;
const WRITER = path.join(import.meta.dir, 'helpers', 'crash-writer.ts');
const PARENT_KEY = '/p/last';

/** The expected state of one key: absent, or the value operation `id` put under `base` at `rev`. */
type Expect = { present: false } | { present: true; id: string; base: string; rev: number };

interface CycleLog {
  cycle: number;
  delayMs: number;
  killedBeforeReady: boolean;
  lines: number;
  acks: number;
  inFlight: number;
  appliedInFlight: number;
  torn: string;
  recoveredRev: number;
  recoverMs: number;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}

/** Spawn the writer, kill it after a random delay, and return every complete line it wrote. */
async function runChild(
  dir: string,
  cycle: number,
  seed: number,
  delayMs: number,
  killEarly: boolean,
): Promise<{ lines: Line[]; sawReady: boolean; stderr: string; signal: unknown; exitCode: number | null }> {
  const proc = Bun.spawn([process.execPath, WRITER, dir, String(cycle), String(seed)], {
    stdout: 'pipe',
    stderr: 'pipe',
    stdin: 'ignore',
  });
  const lines: Line[] = [];
  let sawReady = false;
  let onReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
  });
  const reader = (async () => {
    const dec = new TextDecoder();
    let pending = '';
    for await (const chunk of proc.stdout) {
      pending += dec.decode(chunk, { stream: true });
      let nl = pending.indexOf('\n');
      while (nl >= 0) {
        const line = JSON.parse(pending.slice(0, nl)) as Line;
        pending = pending.slice(nl + 1);
        lines.push(line);
        if (line.t === 'ready') {
          sawReady = true;
          onReady();
        }
        nl = pending.indexOf('\n');
      }
    }
    // A partial last line (cut by the kill) is not an acknowledgement: ignore it.
  })();
  const stderrText = new Response(proc.stderr).text();
  try {
    // Usually kill while writing; sometimes while the child is still starting or recovering.
    if (!killEarly) await Promise.race([ready, proc.exited]);
    await Bun.sleep(delayMs);
    proc.kill('SIGKILL');
    await proc.exited;
    await reader;
  } finally {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  }
  return { lines, sawReady, stderr: await stderrText, signal: proc.signalCode, exitCode: proc.exitCode };
}

test('acknowledged writes survive SIGKILL during concurrent writing, cycle after cycle', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-crash-'));
  const seed = (Date.now() ^ (process.pid << 8)) >>> 0;
  const rand = rng(seed);
  const log: CycleLog[] = [];
  const model = new Map<string, Expect>();
  let maxSeen = 0; // every revision acknowledged or observed so far
  let totalAcks = 0;
  let tornCount = 0;
  let killedEarly = 0;
  const opts = { dir, segmentBytes: SEGMENT_BYTES, snapshotMinBytes: SNAPSHOT_MIN_BYTES };
  const context = () => `seed ${seed}, dir ${dir}\n${log.map((l) => JSON.stringify(l)).join('\n')}`;
  try {
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const killEarly = cycle > 0 && rand() < 0.1;
      const delayMs = killEarly ? Math.floor(rand() * 150) : 50 + Math.floor(rand() * 350);
      const child = await runChild(dir, cycle, seed, delayMs, killEarly);
      const entry: CycleLog = {
        cycle,
        delayMs,
        killedBeforeReady: !child.sawReady,
        lines: child.lines.length,
        acks: 0,
        inFlight: 0,
        appliedInFlight: 0,
        torn: '',
        recoveredRev: 0,
        recoverMs: 0,
      };
      log.push(entry);
      if (child.signal !== 'SIGKILL') {
        throw new Error(`cycle ${cycle}: writer exited by itself (code ${child.exitCode}):\n${child.stderr}\n${context()}`);
      }
      if (!child.sawReady) killedEarly++;

      // Fold the acknowledgements into the model; remember each writer's in-flight operation.
      const prevMax = maxSeen;
      const inFlight = new Map<number, BeginLine>();
      for (const line of child.lines) {
        if (line.t === 'err') throw new Error(`cycle ${cycle}: writer failed: ${line.msg}\n${context()}`);
        if (line.t === 'begin') inFlight.set(line.w, line);
        else if (line.t === 'ack') {
          const a: AckLine = line;
          const begun = inFlight.get(a.w);
          if (begun?.id !== a.id) throw new Error(`cycle ${cycle}: ack ${a.id} without begin\n${context()}`);
          inFlight.delete(a.w);
          for (const key of a.keys) {
            if (a.op === 'delete') model.set(key, { present: false });
            else {
              if (valueHash(makeValue(begun.base, a.id)) !== a.valueHash) throw new Error(`cycle ${cycle}: value hash of ${a.id}`);
              model.set(key, { present: true, id: a.id, base: begun.base, rev: a.rev });
            }
          }
          // Revisions never repeat one an earlier cycle (or the parent's write) acknowledged.
          if (a.rev <= prevMax) throw new Error(`cycle ${cycle}: ack ${a.id} at revision ${a.rev} <= ${prevMax} seen before\n${context()}`);
          entry.acks++;
          totalAcks++;
          maxSeen = Math.max(maxSeen, a.rev);
        }
      }
      entry.inFlight = inFlight.size;

      // Recover in-process.
      const t0 = performance.now();
      const { store, report } = await MvccStore.openWithReport(opts);
      entry.recoverMs = Math.round(performance.now() - t0);
      try {
        if (report?.torn) {
          tornCount++;
          entry.torn = `${path.basename(report.torn.file)}@${report.torn.offset}`;
        }
        const rev = store.currentRevision();
        entry.recoveredRev = rev;
        if (rev < maxSeen) throw new Error(`cycle ${cycle}: recovered revision ${rev} < acknowledged ${maxSeen}\n${context()}`);

        const actual = new Map<string, KeyValue>();
        for (const kv of (await store.range('/', { end: prefixEnd('/') })).kvs) actual.set(kv.key, kv);

        const problems: string[] = [];
        const matches = (key: string, e: Expect | undefined): boolean => {
          const kv = actual.get(key);
          if (e === undefined || !e.present) return kv === undefined;
          return kv !== undefined && kv.modRevision === e.rev && sameBytes(kv.value, makeValue(e.base, e.id));
        };
        // Keys an in-flight operation may have changed: they must show the operation wholly or not at all.
        const covered = new Set<string>();
        for (const op of inFlight.values()) {
          const before = op.keys.map((k) => matches(k, model.get(k)));
          const del = op.kind === 'delete' || op.kind === 'pair-delete';
          const after = op.keys.map((k) => {
            const kv = actual.get(k);
            if (del) return kv === undefined;
            const prev = model.get(k);
            return (
              kv !== undefined &&
              sameBytes(kv.value, makeValue(op.base, op.id)) &&
              kv.modRevision > (prev?.present ? prev.rev : 0) &&
              kv.modRevision <= rev
            );
          });
          const applied = after.every(Boolean);
          if (!(before.every(Boolean) || applied)) {
            problems.push(
              `in-flight ${op.kind} ${op.id} on ${op.keys.join(',')}: half applied or wrong (before ${before}, after ${after}; ` +
                `found ${op.keys.map((k) => show(actual.get(k))).join(' | ')})`,
            );
          }
          if (applied) {
            entry.appliedInFlight++;
            for (const k of op.keys) {
              const kv = actual.get(k);
              model.set(k, kv ? { present: true, id: op.id, base: op.base, rev: kv.modRevision } : { present: false });
            }
          }
          for (const k of op.keys) covered.add(k);
        }
        for (const [key, e] of model) {
          if (covered.has(key) || matches(key, e)) continue;
          problems.push(`${key}: expected ${e.present ? `${e.id}@${e.rev}` : 'absent'}, found ${show(actual.get(key))}`);
        }
        for (const [key, kv] of actual) {
          if (!model.has(key) && !covered.has(key)) problems.push(`${key}: unexpected ${show(kv)}`);
          if (kv.modRevision > rev) problems.push(`${key}: modRevision ${kv.modRevision} > currentRevision ${rev}`);
          if (ownerOf(key) >= 0 && key.startsWith('/t/')) {
            const other = key.endsWith('/a') ? `${baseOf(key)}/b` : `${baseOf(key)}/a`;
            const o = actual.get(other);
            if (o === undefined || !sameBytes(o.value, kv.value) || o.modRevision !== kv.modRevision) {
              problems.push(`${key}: transaction partner ${other} is ${show(o)}, this is ${show(kv)}`);
            }
          }
        }
        if (problems.length > 0) {
          throw new Error(`cycle ${cycle}: ${problems.length} problems after recovery:\n${problems.slice(0, 20).join('\n')}\n${context()}`);
        }

        // One more write: its revision must be above everything seen.
        maxSeen = Math.max(maxSeen, rev);
        const value = makeValue(PARENT_KEY, `p.${cycle}`);
        const r = await store.txn({ success: [{ op: 'put', key: PARENT_KEY, value }] });
        if (r.revision <= maxSeen) throw new Error(`cycle ${cycle}: new write got revision ${r.revision} <= ${maxSeen}\n${context()}`);
        maxSeen = r.revision;
        model.set(PARENT_KEY, { present: true, id: `p.${cycle}`, base: PARENT_KEY, rev: r.revision });
      } finally {
        await store.close();
      }
    }

    // The run exercised what it is meant to: rollover, removal of old segments, snapshots, kills mid-write.
    const segments = fs.readdirSync(path.join(dir, 'wal')).filter((n) => n.endsWith('.wal'));
    const firstSeq = Math.min(...segments.map((n) => Number.parseInt(n.slice(0, 16), 16)));
    const snaps = fs.existsSync(path.join(dir, 'snap')) ? fs.readdirSync(path.join(dir, 'snap')) : [];
    expect(firstSeq).toBeGreaterThan(0);
    expect(snaps.filter((n) => n.endsWith('.snap')).length).toBe(1);
    expect(log.filter((l) => l.inFlight > 0).length).toBeGreaterThan(CYCLES / 2);

    const recoverMs = log.map((l) => l.recoverMs);
    console.log(
      `store-crash: ${CYCLES} kills (${killedEarly} before ready), ${totalAcks} acked writes, ` +
        `${log.reduce((n, l) => n + l.appliedInFlight, 0)} unacked writes found applied, ${tornCount} torn tails, ` +
        `final revision ${maxSeen}, ${[...model.values()].filter((e) => e.present).length} live keys, recovery max ${Math.max(...recoverMs)} ms`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 180_000);

function show(kv: KeyValue | undefined): string {
  if (kv === undefined) return 'absent';
  const head = new TextDecoder().decode(kv.value.subarray(0, Math.min(kv.value.length, 60))).split('|');
  return `${head[1] ?? '?'}@${kv.modRevision}`;
}
