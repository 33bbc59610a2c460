/**
 * The crash tool (bench/crash.ts, issue 42 item 3): its invariant checker finds a planted lost
 * write, a planted missing, duplicated or reordered watch event, and accepts an in-flight
 * operation's result; a watcher's sequence is held to the store's history exactly; and a short
 * run (a few kill-and-restart cycles under 16 writers) finds nothing lost. The etcd mode's short
 * run is test/crash-etcd.test.ts. The long runs are the tool's, not CI's.
 */
import { describe, expect, test } from 'bun:test';
import { runCrashCycles } from '../bench/crash';
import { checkHistory, checkState, checkWatch, type WriterLog } from '../bench/crash-check';

const writers: WriterLog[] = [
  {
    acks: [
      { key: 'a', op: 'create', rv: 10, value: '1' },
      { key: 'a', op: 'patch', rv: 12, value: '2' },
      { key: 'b', op: 'create', rv: 13, value: '3' },
      { key: 'b', op: 'delete', rv: 13 },
      { key: 'b', op: 'apply', rv: 16, value: '4' },
    ],
    inflight: { key: 'a', op: 'patch', value: '5' },
  },
];

describe('the checker', () => {
  test('state: the acknowledged state passes; a lost write is found; the in-flight result is accepted', () => {
    const good = new Map([
      ['a', { rv: 12, value: '2' }],
      ['b', { rv: 16, value: '4' }],
    ]);
    expect(checkState(writers, good, ['a', 'b'])).toEqual([]);
    const lost = new Map([
      ['a', { rv: 10, value: '1' }],
      ['b', { rv: 16, value: '4' }],
    ]);
    expect(checkState(writers, lost, ['a', 'b'])).toEqual(['lost write: a is v=1 rv=10, acknowledged v=2 rv=12 (in flight: patch 5)']);
    const gone = new Map([['a', { rv: 12, value: '2' }]]);
    expect(checkState(writers, gone, ['a', 'b'])[0]).toStartWith('lost write: b is absent');
    const flown = new Map([
      ['a', { rv: 17, value: '5' }],
      ['b', { rv: 16, value: '4' }],
    ]);
    expect(checkState(writers, flown, ['a', 'b'])).toEqual([]);
  });

  test('watch: the history passes; a missing, duplicated or reordered event is found', () => {
    const history = [
      { type: 'ADDED' as const, key: 'a', rv: 10, value: '1' },
      { type: 'MODIFIED' as const, key: 'a', rv: 12, value: '2' },
      { type: 'ADDED' as const, key: 'b', rv: 13, value: '3' },
      { type: 'DELETED' as const, key: 'b', rv: 14, value: '3' },
      { type: 'ADDED' as const, key: 'b', rv: 16, value: '4' },
    ];
    expect(checkWatch('w', history, writers, 9, 16)).toEqual([]);
    expect(
      checkWatch(
        'w',
        history.filter((e) => e.rv !== 12),
        writers,
        9,
        16,
      ),
    ).toEqual(['w: missing event for patch a rv=12 v=2']);
    expect(
      checkWatch(
        'w',
        history.filter((e) => e.rv !== 14),
        writers,
        9,
        16,
      ),
    ).toEqual(['w: missing DELETED event for b between rv=13 and rv=16']);
    const dup = [...history.slice(0, 3), history[2] as (typeof history)[number], ...history.slice(3)];
    expect(checkWatch('w', dup, writers, 9, 16)[0]).toContain('duplicate or out of order');
    // A watcher that stopped at rv 12 is not blamed for what came after.
    expect(checkWatch('w', history.slice(0, 2), writers, 9, 12)).toEqual([]);
  });

  test("history: a watcher's sequence must be the store's, event for event", () => {
    const store = [
      { type: 'ADDED' as const, key: 'a', rv: 10, value: '1' },
      { type: 'MODIFIED' as const, key: 'a', rv: 12, value: '2' },
      { type: 'ADDED' as const, key: 'x', rv: 13, value: '9' },
      { type: 'DELETED' as const, key: 'a', rv: 14 },
    ];
    const seen = store.map((e) => ({ ...e, value: e.type === 'DELETED' ? '2' : e.value }));
    expect(checkHistory('w', seen, store, 9, 14)).toEqual([]);
    // Only the window counts.
    expect(checkHistory('w', seen.slice(2), store, 12, 14)).toEqual([]);
    // An unacknowledged write's event (x) missing is found too.
    expect(
      checkHistory(
        'w',
        seen.filter((e) => e.key !== 'x'),
        store,
        9,
        14,
      ),
    ).toEqual(['w: missing ADDED x rv=13 v=9 (next event seen: DELETED a rv=14 v=2)']);
    expect(checkHistory('w', [...seen.slice(0, 2), seen[1], ...seen.slice(2)] as typeof seen, store, 9, 14)).toEqual([
      "w: event MODIFIED a rv=12 v=2 where the store's history has ADDED x rv=13 v=9",
    ]);
    const changed = seen.map((e) => (e.rv === 12 ? { ...e, value: '7' } : e));
    expect(checkHistory('w', changed, store, 9, 14)).toEqual([
      "w: event MODIFIED a rv=12 v=7 where the store's history has MODIFIED a rv=12 v=2",
    ]);
    const swapped = [seen[0], seen[2], seen[1], seen[3]] as typeof seen;
    expect(checkHistory('w', swapped, store, 9, 14).length).toBeGreaterThan(0);
  });
});

test('a short run: servers killed under 16 writers lose nothing', async () => {
  const lines: string[] = [];
  const totals = await runCrashCycles({ cycles: 4, writers: 16, keys: 4, seed: 4242, log: (l) => lines.push(l) });
  expect(totals.problems).toEqual([]);
  expect(totals.cycles).toBe(4);
  expect(totals.acknowledged).toBeGreaterThan(50);
}, 120_000);
