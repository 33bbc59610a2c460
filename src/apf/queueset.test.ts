import { describe, expect, test } from 'bun:test';
import { FakeClock } from './clock';
import { Dealer, hashFlow, validDeal } from './dealer';
import { ONE_SEAT, type QueuedRequest, QueueSet, type WorkEstimate } from './queueset';

const Q = { queues: 8, handSize: 2, queueLengthLimit: 50 };
const wide = (seats: number): WorkEstimate => ({ initialSeats: seats, finalSeats: 0, additionalLatencyMs: 0 });

describe('dealer', () => {
  test('the same hash deals the same hand; hands are distinct cards of the deck', () => {
    const d = new Dealer(128, 6);
    const h = hashFlow('service-accounts', 'system:serviceaccount:default:x');
    const a = [...d.deal(h)];
    expect(d.deal(h)).toEqual(a);
    expect(new Set(a).size).toBe(6);
    for (const c of a) expect(c >= 0 && c < 128).toBe(true);
  });

  test('hands spread over the deck', () => {
    const d = new Dealer(64, 4);
    const hits = new Array(64).fill(0);
    for (let i = 0; i < 4000; i++) for (const c of d.deal(hashFlow('fs', `user-${i}`))) hits[c]++;
    // 16,000 cards over 64 queues: 250 each on average; none starved or crowded.
    expect(Math.min(...hits)).toBeGreaterThan(150);
    expect(Math.max(...hits)).toBeLessThan(350);
  });

  test('a worked example: deck 8, hand 3, hash 100 deals [4, 6, 1]', () => {
    expect(new Dealer(8, 3).deal({ hi: 0, lo: 100 })).toEqual([4, 6, 1]);
  });

  test('the entropy bound of the reference', () => {
    expect(validDeal(128, 6)).toBe(true);
    expect(validDeal(2 ** 20, 3)).toBe(true);
    expect(validDeal(2 ** 20, 4)).toBe(false);
    expect(validDeal(4, 5)).toBe(false);
  });
});

describe('queue set', () => {
  test('dispatches at once while seats are free, then queues, then refuses a full queue', () => {
    const clock = new FakeClock();
    const qs = new QueueSet({ queues: 1, handSize: 1, queueLengthLimit: 2 }, 2, clock);
    const h = hashFlow('a', '');
    const r1 = qs.start(h, ONE_SEAT, 'a', 1000);
    const r2 = qs.start(h, ONE_SEAT, 'a', 1000);
    expect([r1.state, r2.state]).toEqual(['executing', 'executing']);
    const r3 = qs.start(h, ONE_SEAT, 'a', 1000);
    const r4 = qs.start(h, ONE_SEAT, 'a', 1000);
    expect([r3.state, r4.state]).toEqual(['waiting', 'waiting']);
    const r5 = qs.start(h, ONE_SEAT, 'a', 1000);
    expect([r5.state, r5.reason]).toEqual(['rejected', 'queue-full']);
    expect(qs.totals).toEqual({ waiting: 2, waitingSeats: 2, executing: 2, seatsInUse: 2 });
    qs.finish(r1);
    expect(r3.state).toBe('executing');
    expect(r4.state).toBe('waiting');
  });

  test('a request waits at most its wait limit, then is rejected time-out', async () => {
    const clock = new FakeClock();
    const qs = new QueueSet(Q, 1, clock);
    const busy = qs.start(hashFlow('a', ''), ONE_SEAT, 'a', 1000);
    const r = qs.start(hashFlow('b', ''), ONE_SEAT, 'b', 1000);
    expect(r.state).toBe('waiting');
    clock.advance(999);
    expect(r.state).toBe('waiting');
    clock.advance(1);
    await r.decided;
    expect([r.state, r.reason]).toEqual(['rejected', 'time-out']);
    expect(qs.totals.waiting).toBe(0);
    qs.finish(busy);
    expect(qs.totals).toEqual({ waiting: 0, waitingSeats: 0, executing: 0, seatsInUse: 0 });
  });

  test('a cancelled request leaves its queue', async () => {
    const clock = new FakeClock();
    const qs = new QueueSet(Q, 1, clock);
    qs.start(hashFlow('a', ''), ONE_SEAT, 'a', 1000);
    const ac = new AbortController();
    const r = qs.start(hashFlow('b', ''), ONE_SEAT, 'b', 1000, ac.signal);
    ac.abort();
    await r.decided;
    expect([r.state, r.reason]).toEqual(['rejected', 'cancelled']);
    expect(qs.totals.waiting).toBe(0);
  });

  test('a level without queues (Reject) refuses at once when its seats are taken', () => {
    const clock = new FakeClock();
    const qs = new QueueSet({ queues: 0, handSize: 0, queueLengthLimit: 0 }, 1, clock);
    const a = qs.start(hashFlow('a', ''), ONE_SEAT, 'a', 1000);
    const b = qs.start(hashFlow('b', ''), ONE_SEAT, 'b', 1000);
    expect(a.state).toBe('executing');
    expect([b.state, b.reason]).toEqual(['rejected', 'concurrency-limit']);
    qs.finish(a);
    expect(qs.start(hashFlow('b', ''), ONE_SEAT, 'b', 1000).state).toBe('executing');
  });

  /** Runs every dispatched request for exactly `serviceMs` (virtual), `steps` times; returns the dispatch order. */
  function run(qs: QueueSet, clock: FakeClock, all: QueuedRequest<string>[], serviceMs: number, steps: number): string[] {
    for (let i = 0; i < steps; i++) {
      const executing = all.filter((r) => r.state === 'executing');
      if (executing.length === 0) break;
      const end = Math.min(...executing.map((r) => r.startedAt + serviceMs));
      clock.advance(end - clock.now());
      for (const r of executing) if (r.startedAt + serviceMs <= clock.now()) qs.finish(r);
    }
    return all
      .filter((r) => r.state === 'executing' || r.state === 'done')
      .sort((a, b) => a.startedAt - b.startedAt)
      .map((r) => r.tag);
  }

  test('a heavy flow and a light flow share a seat equally, whatever their backlog', () => {
    const clock = new FakeClock();
    const qs = new QueueSet({ queues: 64, handSize: 1, queueLengthLimit: 1000 }, 1, clock);
    const all: QueuedRequest<string>[] = [];
    // The heavy flow queues 100 requests first; the light one 10 afterwards.
    for (let i = 0; i < 100; i++) all.push(qs.start(hashFlow('heavy', ''), ONE_SEAT, 'heavy', 60_000));
    for (let i = 0; i < 10; i++) all.push(qs.start(hashFlow('light', ''), ONE_SEAT, 'light', 60_000));
    const order = run(qs, clock, all, 3, 30);
    // Both flows alternate: the light flow is not behind the heavy one's 100.
    expect(order.slice(0, 21).filter((t) => t === 'light').length).toBeGreaterThanOrEqual(9);
  });

  test('a flow of 2-seat requests gets half as many dispatches as a flow of 1-seat requests', () => {
    const clock = new FakeClock();
    const qs = new QueueSet({ queues: 64, handSize: 1, queueLengthLimit: 1000 }, 2, clock);
    const all: QueuedRequest<string>[] = [];
    for (let i = 0; i < 300; i++) {
      all.push(qs.start(hashFlow('wide', ''), wide(2), 'wide', 600_000));
      all.push(qs.start(hashFlow('narrow', ''), ONE_SEAT, 'narrow', 600_000));
    }
    const order = run(qs, clock, all, 3, 200);
    const narrow = order.filter((t) => t === 'narrow').length;
    const ratio = narrow / (order.length - narrow);
    expect(ratio).toBeGreaterThan(1.8);
    expect(ratio).toBeLessThan(2.2);
  });

  test('a head request wider than the free seats waits for them; one wider than the limit runs alone', async () => {
    const clock = new FakeClock();
    const qs = new QueueSet(Q, 4, clock);
    const a = qs.start(hashFlow('a', ''), wide(3), 'a', 10_000);
    expect(a.state).toBe('executing');
    const b = qs.start(hashFlow('b', ''), wide(2), 'b', 10_000);
    expect(b.state).toBe('waiting');
    qs.finish(a);
    await b.decided;
    expect(b.state).toBe('executing');
    const huge = qs.start(hashFlow('c', ''), wide(10), 'c', 10_000);
    expect(huge.state).toBe('waiting');
    qs.finish(b);
    await huge.decided;
    expect(huge.state).toBe('executing');
    expect(qs.totals.seatsInUse).toBe(10);
  });

  test('final seats are held for the additional latency after the handler returns', () => {
    const clock = new FakeClock();
    const qs = new QueueSet(Q, 5, clock);
    const r = qs.start(hashFlow('a', ''), { initialSeats: 1, finalSeats: 5, additionalLatencyMs: 50 }, 'a', 10_000);
    expect(qs.totals.seatsInUse).toBe(5);
    const other = qs.start(hashFlow('b', ''), ONE_SEAT, 'b', 10_000);
    expect(other.state).toBe('waiting');
    qs.finish(r);
    expect(qs.totals.seatsInUse).toBe(5);
    expect(other.state).toBe('waiting');
    clock.advance(50);
    expect(other.state).toBe('executing');
    expect(qs.totals.seatsInUse).toBe(1);
  });

  test('a larger limit dispatches what waited; seat demand is reported', () => {
    const clock = new FakeClock();
    const demand: number[] = [];
    const qs = new QueueSet(Q, 1, clock, (d) => demand.push(d));
    qs.start(hashFlow('a', ''), ONE_SEAT, 'a', 10_000);
    const b = qs.start(hashFlow('b', ''), ONE_SEAT, 'b', 10_000);
    expect(demand.at(-1)).toBe(2);
    qs.setConcurrencyLimit(2);
    expect(b.state).toBe('executing');
  });

  test('reconfigured queues keep what waits, in order', () => {
    const clock = new FakeClock();
    const qs = new QueueSet({ queues: 4, handSize: 1, queueLengthLimit: 10 }, 1, clock);
    const busy = qs.start(hashFlow('x', ''), ONE_SEAT, 'x', 10_000);
    const w = [1, 2, 3].map(() => qs.start(hashFlow('y', ''), ONE_SEAT, 'y', 10_000));
    qs.reconfigure({ queues: 16, handSize: 2, queueLengthLimit: 10 });
    expect(qs.totals.waiting).toBe(3);
    qs.finish(busy);
    expect(w.map((r) => r.state)).toEqual(['executing', 'waiting', 'waiting']);
    qs.reconfigure({ queues: 0, handSize: 0, queueLengthLimit: 0 });
    expect(w.map((r) => r.state)).toEqual(['executing', 'rejected', 'rejected']);
    expect(qs.totals.waiting).toBe(0);
  });

  test('virtual time advances only while queues are active', () => {
    const clock = new FakeClock();
    const qs = new QueueSet(Q, 4, clock);
    clock.advance(1000);
    const r = qs.start(hashFlow('a', ''), ONE_SEAT, 'a', 10_000);
    expect(qs.currentR).toBe(0);
    clock.advance(10);
    qs.finish(r);
    // One active queue using one seat: R moved 10 seat-ms.
    expect(qs.currentR).toBe(10);
    clock.advance(1000);
    qs.start(hashFlow('a', ''), ONE_SEAT, 'a', 10_000);
    expect(qs.currentR).toBe(10);
  });
});
