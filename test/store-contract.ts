/**
 * The store contract: one suite every KV backend must pass (the embedded MVCC store in memory
 * and on disk now, the etcd backend later). Call storeContract() from a *.test.ts file.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test';
import { create, get, remove, update } from '../src/store/ops';
import { type ChangeEvent, type ChangeStream, isStoreError, type KV, prefixEnd, type StoreError } from '../src/store/types';

export interface Backend {
  kv: KV;
  /** Close and reopen on the same data (persistent backends only). */
  reopen?: () => Promise<KV>;
  cleanup: () => Promise<void>;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
export const b = (s: string): Uint8Array => enc.encode(s);
export const s = (u: Uint8Array | undefined): string | undefined => (u === undefined ? undefined : dec.decode(u));

async function expectStoreError(p: Promise<unknown> | (() => unknown), code: StoreError['code']): Promise<StoreError> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    if (!isStoreError(e)) throw e;
    expect(e.code).toBe(code);
    return e;
  }
  throw new Error(`expected StoreError ${code}, got success`);
}

/** Collect events from a stream until `n` have arrived (or time out). */
async function take(stream: ChangeStream, n: number, ms = 2000): Promise<ChangeEvent[]> {
  const out: ChangeEvent[] = [];
  const deadline = Date.now() + ms;
  while (out.length < n) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`timed out with ${out.length}/${n} events`);
    const batch = await Promise.race([stream.next(), Bun.sleep(left).then(() => undefined)]);
    if (batch === undefined) throw new Error(`timed out with ${out.length}/${n} events`);
    out.push(...batch);
  }
  return out;
}

export interface ContractOptions {
  persistent: boolean;
  /** The revision of an empty store (0 embedded; 1 for a new etcd, whose first write is 2). */
  base?: number;
  /** A watch may start at the compacted revision itself (etcd: no, a delete made there is gone). */
  watchesAtCompacted?: boolean;
  /** The backend cuts off a consumer that falls behind compaction (the embedded store buffers for it; etcd pushes every event to the client at once). */
  cutsSlowConsumers?: boolean;
}

export function storeContract(name: string, open: () => Promise<Backend>, opts: ContractOptions): void {
  const base = opts.base ?? 0;
  /** The n-th revision after the empty store's. */
  const R = (n: number) => base + n;
  describe(`store contract: ${name}`, () => {
    let be: Backend;
    let kv: KV;
    beforeEach(async () => {
      be = await open();
      kv = be.kv;
    });
    afterEach(async () => {
      await be.cleanup();
    });

    test('an empty store has revision 0 and no keys', async () => {
      expect(kv.currentRevision()).toBe(base);
      const r = await kv.range('', { end: '\0' });
      expect(r).toEqual({ kvs: [], count: 0, more: false, revision: base });
    });

    test('each write takes the next revision; create/mod/version follow the key generations', async () => {
      const r1 = await create(kv, '/a', b('1'));
      expect(r1).toBe(R(1));
      const r2 = await update(kv, '/a', b('2'), r1);
      expect(r2).toBe(R(2));
      let a = await get(kv, '/a');
      expect(a).toMatchObject({ key: '/a', createRevision: R(1), modRevision: R(2), version: 2 });
      expect(s(a?.value)).toBe('2');
      const d = await remove(kv, '/a', r2);
      expect(d.revision).toBe(R(3));
      expect(d.deleted.modRevision).toBe(R(2));
      expect(await get(kv, '/a')).toBeUndefined();
      const r4 = await create(kv, '/a', b('new'));
      a = await get(kv, '/a');
      expect(a).toMatchObject({ createRevision: r4, modRevision: r4, version: 1 });
      expect(kv.currentRevision()).toBe(R(4));
    });

    test('create of an existing key fails with exists and the current value; nothing changes', async () => {
      await create(kv, '/k', b('v1'));
      const e = await expectStoreError(create(kv, '/k', b('v2')), 'exists');
      expect(s(e.current?.value)).toBe('v1');
      expect(kv.currentRevision()).toBe(R(1));
      expect(s((await get(kv, '/k'))?.value)).toBe('v1');
    });

    test('update with a stale revision conflicts (with the current value); of an absent key is not-found', async () => {
      const r1 = await create(kv, '/k', b('v1'));
      await update(kv, '/k', b('v2'), r1);
      const e = await expectStoreError(update(kv, '/k', b('v3'), r1), 'conflict');
      expect(s(e.current?.value)).toBe('v2');
      await expectStoreError(update(kv, '/missing', b('x'), 1), 'not-found');
      expect(s((await get(kv, '/k'))?.value)).toBe('v2');
      expect(kv.currentRevision()).toBe(R(2));
    });

    test('remove checks the expected revision; remove of an absent key is not-found', async () => {
      const r1 = await create(kv, '/k', b('v1'));
      await update(kv, '/k', b('v2'), r1);
      await expectStoreError(remove(kv, '/k', r1), 'conflict');
      await expectStoreError(remove(kv, '/nope'), 'not-found');
      const d = await remove(kv, '/k');
      expect(s(d.deleted.value)).toBe('v2');
      expect(kv.currentRevision()).toBe(R(3));
    });

    test('range returns keys in order with limit, count and more; a prefix excludes its neighbours', async () => {
      for (const k of ['/p/c', '/p/a', '/q/x', '/p/b', '/p', '/o/z', '/p/d']) await create(kv, k, b(k));
      const all = await kv.range('/p/', { end: prefixEnd('/p/') });
      expect(all.kvs.map((x) => x.key)).toEqual(['/p/a', '/p/b', '/p/c', '/p/d']);
      expect(all.count).toBe(4);
      expect(all.more).toBe(false);
      const page = await kv.range('/p/', { end: prefixEnd('/p/'), limit: 2 });
      expect(page.kvs.map((x) => x.key)).toEqual(['/p/a', '/p/b']);
      expect(page).toMatchObject({ count: 4, more: true, revision: R(7) });
      // Continue after the last key, as paging does.
      const next = await kv.range('/p/b\0', { end: prefixEnd('/p/'), limit: 2 });
      expect(next.kvs.map((x) => x.key)).toEqual(['/p/c', '/p/d']);
      expect(next.count).toBe(2);
      const skip = await kv.range('/p/', { end: prefixEnd('/p/'), limit: 1, skipCount: true });
      expect(skip.kvs.length).toBe(1);
      expect(skip.more).toBe(true);
      const everything = await kv.range('', { end: '\0' });
      expect(everything.count).toBe(7);
      const single = await kv.range('/p');
      expect(single.kvs.map((x) => x.key)).toEqual(['/p']);
    });

    test('range at a past revision sees the state of that revision', async () => {
      const r1 = await create(kv, '/h/a', b('a1'));
      const r2 = await create(kv, '/h/b', b('b1'));
      await update(kv, '/h/a', b('a2'), r1);
      await remove(kv, '/h/b', r2);
      const at2 = await kv.range('/h/', { end: prefixEnd('/h/'), revision: R(2) });
      expect(at2.kvs.map((x) => [x.key, s(x.value)])).toEqual([
        ['/h/a', 'a1'],
        ['/h/b', 'b1'],
      ]);
      expect(at2.revision).toBe(R(2));
      const now = await kv.range('/h/', { end: prefixEnd('/h/') });
      expect(now.kvs.map((x) => [x.key, s(x.value)])).toEqual([['/h/a', 'a2']]);
      expect(now.revision).toBe(R(4));
    });

    test('reading a future revision fails with future-revision', async () => {
      await create(kv, '/x', b('1'));
      await expectStoreError(kv.range('/x', { revision: R(5) }), 'future-revision');
    });

    test('compaction drops old revisions but keeps the newest version of every live key', async () => {
      const r1 = await create(kv, '/c/a', b('a1'));
      await update(kv, '/c/a', b('a2'), r1); // 2
      await create(kv, '/c/b', b('b1')); // 3
      await remove(kv, '/c/b'); // 4
      await create(kv, '/c/c', b('c1')); // 5
      await kv.compact(R(4));
      expect(kv.compactedRevision()).toBe(R(4));
      await expectStoreError(kv.range('/c/a', { revision: R(3) }), 'compacted');
      const at4 = await kv.range('/c/', { end: prefixEnd('/c/'), revision: R(4) });
      expect(at4.kvs.map((x) => [x.key, s(x.value)])).toEqual([['/c/a', 'a2']]);
      const now = await kv.range('/c/', { end: prefixEnd('/c/') });
      expect(now.kvs.map((x) => x.key)).toEqual(['/c/a', '/c/c']);
      await expectStoreError(kv.compact(R(4)), 'compacted');
      await expectStoreError(kv.compact(R(99)), 'future-revision');
      // Writes continue from the same revision counter.
      expect(await create(kv, '/c/d', b('d'))).toBe(R(6));
    });

    test('a transaction commits all its operations under one revision', async () => {
      await create(kv, '/t/x', b('x'));
      const r = await kv.txn({
        compare: [{ key: '/t/x', target: 'version', result: '=', value: 1 }],
        success: [
          { op: 'put', key: '/t/a', value: b('A') },
          { op: 'put', key: '/t/b', value: b('B') },
          { op: 'delete', key: '/t/x' },
          { op: 'get', key: '/t/a' },
        ],
        failure: [{ op: 'get', key: '/t/x' }],
      });
      expect(r.succeeded).toBe(true);
      expect(r.revision).toBe(R(2));
      expect(r.responses.map((x) => x.op)).toEqual(['put', 'put', 'delete', 'get']);
      const got = r.responses[3];
      expect(got?.op === 'get' && s(got.kv?.value)).toBe('A');
      const all = await kv.range('/t/', { end: prefixEnd('/t/') });
      expect(all.kvs.map((x) => [x.key, x.modRevision])).toEqual([
        ['/t/a', R(2)],
        ['/t/b', R(2)],
      ]);
    });

    test('a failed compare runs the failure branch and writes nothing', async () => {
      await create(kv, '/f/x', b('x'));
      const r = await kv.txn({
        compare: [{ key: '/f/x', target: 'mod', result: '=', value: R(7) }],
        success: [{ op: 'put', key: '/f/y', value: b('y') }],
        failure: [{ op: 'get', key: '/f/x' }],
      });
      expect(r.succeeded).toBe(false);
      expect(r.revision).toBe(R(1));
      const got = r.responses[0];
      expect(got?.op === 'get' && got.kv?.modRevision).toBe(R(1));
      expect(kv.currentRevision()).toBe(R(1));
      expect(await get(kv, '/f/y')).toBeUndefined();
    });

    test.each([
      ['mod', '=', 2, true],
      ['mod', '>', 0, true],
      ['mod', '<', 1, false],
      ['create', '=', 1, true],
      ['version', '=', 2, true],
      ['version', '!=', 2, false],
      ['value', '=', 'v2', true],
      ['value', '!=', 'v1', true],
      ['value', '>', 'v1', true],
      ['value', '<', 'v1', false],
    ] as const)('compare %s %s %p is %p', async (target, result, value, want) => {
      // After these two writes: create 1, mod 2, version 2, value v2.
      await create(kv, '/cmp', b('v1'));
      await kv.txn({ compare: [], success: [{ op: 'put', key: '/cmp', value: b('v2') }] });
      // Revisions (mod, create) count from the empty store's; versions and 0 do not.
      const v = target === 'value' ? b(String(value)) : target === 'version' || value === 0 ? (value as number) : R(value as number);
      const r = await kv.txn({ compare: [{ key: '/cmp', target, result, value: v }] });
      expect(r.succeeded).toBe(want);
    });

    test('an absent key compares as revision 0 and never matches on value', async () => {
      const r = await kv.txn({ compare: [{ key: '/none', target: 'create', result: '=', value: 0 }] });
      expect(r.succeeded).toBe(true);
      const v = await kv.txn({ compare: [{ key: '/none', target: 'value', result: '!=', value: b('x') }] });
      expect(v.succeeded).toBe(false);
    });

    test('a range delete in a transaction removes every key in the range and reports them', async () => {
      for (const k of ['/d/1', '/d/2', '/d/3', '/e/1']) await create(kv, k, b(k));
      const r = await kv.txn({ success: [{ op: 'delete', key: '/d/', end: prefixEnd('/d/') }] });
      const del = r.responses[0];
      expect(del?.op === 'delete' && del.deleted.map((x) => x.key)).toEqual(['/d/1', '/d/2', '/d/3']);
      expect((await kv.range('', { end: '\0' })).kvs.map((x) => x.key)).toEqual(['/e/1']);
      expect(r.revision).toBe(R(5));
    });

    test('the same key twice in one transaction is refused before anything is applied', async () => {
      await expect(
        kv.txn({
          success: [
            { op: 'put', key: '/dup', value: b('1') },
            { op: 'put', key: '/dup', value: b('2') },
          ],
        }),
      ).rejects.toThrow(/duplicate/);
      expect(kv.currentRevision()).toBe(base);
    });

    test('watch delivers every change in order with previous values, from any retained revision', async () => {
      const r1 = await create(kv, '/w/a', b('1'));
      const stream = kv.watch(r1 + 1);
      await update(kv, '/w/a', b('2'), r1);
      await create(kv, '/w/b', b('b'));
      await remove(kv, '/w/a');
      const ev = await take(stream, 3);
      expect(ev.map((e) => [e.type, e.kv.key, e.kv.modRevision, s(e.prev?.value)])).toEqual([
        ['put', '/w/a', R(2), '1'],
        ['put', '/w/b', R(3), undefined],
        ['delete', '/w/a', R(4), '2'],
      ]);
      // Handed out up to 4; position moves past it once the consumer asks for more.
      const more = stream.next();
      expect(stream.position).toBe(R(5));
      stream.close();
      void more.catch(() => {});
      // Replay from the start.
      const again = kv.watch(R(1));
      const all = await take(again, 4);
      expect(all.map((e) => e.kv.modRevision)).toEqual([R(1), R(2), R(3), R(4)]);
      again.close();
    });

    test('position never passes a change the consumer has not been handed, however many batches wait', async () => {
      const stream = kv.watch(R(1), { key: '/q/', end: prefixEnd('/q/') });
      // Five transactions while the consumer is away: the backend may hold them as five batches.
      for (let i = 0; i < 5; i++) await create(kv, `/q/${i}`, b(String(i)));
      await Bun.sleep(300);
      const seen: number[] = [];
      while (seen.length < 5) {
        const batch = await stream.next();
        // Coming back for more says only that what was handed out before is applied.
        expect(stream.position).toBeLessThanOrEqual((batch[0] as ChangeEvent).kv.modRevision);
        for (const e of batch) seen.push(e.kv.modRevision);
      }
      expect(seen).toEqual([R(1), R(2), R(3), R(4), R(5)]);
      stream.close();
    });

    test('watch filters by key range and does not split a transaction', async () => {
      const stream = kv.watch(R(1), { key: '/in/', end: prefixEnd('/in/') });
      await create(kv, '/out/1', b('x'));
      await kv.txn({
        success: [
          { op: 'put', key: '/in/1', value: b('1') },
          { op: 'put', key: '/in/2', value: b('2') },
          { op: 'put', key: '/out/2', value: b('2') },
        ],
      });
      const first = await stream.next();
      expect(first.map((e) => e.kv.key)).toEqual(['/in/1', '/in/2']);
      expect(first.every((e) => e.kv.modRevision === R(2))).toBe(true);
      stream.close();
    });

    test('watch waits for future revisions', async () => {
      const stream = kv.watch(R(1));
      const pending = stream.next();
      await Bun.sleep(20);
      await create(kv, '/later', b('x'));
      const ev = await pending;
      expect(ev.map((e) => e.kv.key)).toEqual(['/later']);
      stream.close();
    });

    test('watch from a compacted revision fails with compacted', async () => {
      const r1 = await create(kv, '/wc', b('1'));
      const r2 = await update(kv, '/wc', b('2'), r1);
      const r3 = await update(kv, '/wc', b('3'), r2);
      await update(kv, '/wc', b('4'), r3);
      await kv.compact(R(3));
      await expectStoreError(kv.watch(R(2)).next(), 'compacted');
      const from = opts.watchesAtCompacted === false ? R(4) : R(3);
      if (opts.watchesAtCompacted === false) await expectStoreError(kv.watch(R(3)).next(), 'compacted');
      const ok = kv.watch(from);
      const ev = await ok.next();
      expect(ev[0]?.kv.modRevision).toBe(from);
      ok.close();
    });

    test.if(opts.cutsSlowConsumers !== false)(
      'a watcher that falls behind compaction is cut off with compacted, writers unaffected',
      async () => {
        const stream = kv.watch(R(1));
        let rev = await create(kv, '/slow', b('0'));
        for (let i = 1; i <= 20; i++) rev = await update(kv, '/slow', b(String(i)), rev);
        await kv.compact(rev);
        await expectStoreError(stream.next(), 'compacted');
      },
    );

    test('concurrent writers each get a distinct revision and all writes are visible', async () => {
      const n = 200;
      const revs = await Promise.all(Array.from({ length: n }, (_, i) => create(kv, `/conc/${String(i).padStart(4, '0')}`, b(String(i)))));
      expect(new Set(revs).size).toBe(n);
      expect(Math.max(...revs)).toBe(R(n));
      const all = await kv.range('/conc/', { end: prefixEnd('/conc/') });
      expect(all.count).toBe(n);
    });

    test('only one of many racing creates of the same key wins', async () => {
      const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => create(kv, '/race', b(String(i)))));
      expect(results.filter((r) => r.status === 'fulfilled').length).toBe(1);
      for (const r of results) if (r.status === 'rejected') expect(isStoreError(r.reason, 'exists')).toBe(true);
    });

    test('a guarded create happens only while the guard key is at its revision', async () => {
      const ns = await create(kv, '/ns/a', b('active'));
      expect(await create(kv, '/ns/a/obj-1', b('1'), { key: '/ns/a', revision: ns })).toBeGreaterThan(ns);
      // The guard key changed: nothing is written, and the failure says so (not `exists`).
      const changed = await update(kv, '/ns/a', b('terminating'), ns);
      const e = await create(kv, '/ns/a/obj-2', b('2'), { key: '/ns/a', revision: ns }).catch((x) => x);
      expect(isStoreError(e, 'conflict')).toBe(true);
      expect(await get(kv, '/ns/a/obj-2')).toBeUndefined();
      // The key itself taken: `exists` with its value, whatever the guard.
      const taken = await create(kv, '/ns/a/obj-1', b('again'), { key: '/ns/a', revision: changed }).catch((x) => x);
      expect(isStoreError(taken, 'exists')).toBe(true);
      expect(s((taken as StoreError).current?.value)).toBe('1');
      // A guard on an absent key (revision 0) holds while it stays absent.
      expect(await create(kv, '/ns/b/obj', b('x'), { key: '/ns/b', revision: 0 })).toBeGreaterThan(changed);
      await create(kv, '/ns/b', b('made'));
      expect(isStoreError(await create(kv, '/ns/b/obj2', b('y'), { key: '/ns/b', revision: 0 }).catch((x) => x), 'conflict')).toBe(true);
      expect(await create(kv, '/ns/a/obj-3', b('3'), { key: '/ns/a', revision: changed })).toBeGreaterThan(changed);
    });

    test.if(opts.persistent)('persists across reopen', async () => {
      if (!be.reopen) throw new Error('a persistent backend must offer reopen');
      const r1 = await create(kv, '/p/1', b('one'));
      await update(kv, '/p/1', b('two'), r1);
      await create(kv, '/p/2', b('x'));
      await remove(kv, '/p/2');
      kv = await be.reopen();
      expect(kv.currentRevision()).toBe(4);
      const a = await get(kv, '/p/1');
      expect(a).toMatchObject({ createRevision: 1, modRevision: 2, version: 2 });
      expect(s(a?.value)).toBe('two');
      expect(await get(kv, '/p/2')).toBeUndefined();
      expect(await create(kv, '/p/3', b('y'))).toBe(5);
    });
  });
}
