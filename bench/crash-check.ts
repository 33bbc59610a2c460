/**
 * The invariants bench/crash.ts checks after each kill and restart of the server (issue 42 item
 * 3), as pure functions of what the writers were told and what the server shows afterwards:
 *
 * - state: each key is as its writer's last acknowledged write left it (present with that value
 *   and resourceVersion, or absent after a delete), unless that writer's one unacknowledged
 *   operation (in flight at the kill) also happened: then as that operation left it;
 * - watch: a watcher's events come in strictly increasing resourceVersion (no duplicate, no
 *   reordering), and every acknowledged create/update with a resourceVersion in the range the
 *   watcher covered is among them with its value; an acknowledged delete has a DELETED event of
 *   its key between the key's neighbouring acknowledged versions.
 *
 * Each writer owns its keys, so a key's history is the one writer's sequence.
 */

export type Op = 'create' | 'patch' | 'apply' | 'delete';

/** One acknowledged write: its key, what it did, the resourceVersion answered, the value written. */
export interface Ack {
  key: string;
  op: Op;
  /** The object's resourceVersion in the answer (for a delete: the version it had, not the deletion's). */
  rv: number;
  /** data.v after the write (absent for a delete). */
  value?: string;
}

export interface InFlight {
  key: string;
  op: Op;
  value?: string;
}

export interface WriterLog {
  acks: Ack[];
  /** The operation sent and not answered when the server died. */
  inflight?: InFlight;
}

export interface StoredState {
  rv: number;
  value: string;
}

export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  key: string;
  rv: number;
  value?: string;
}

/** State after the restart: a lost or invented write is named. */
export function checkState(writers: WriterLog[], after: Map<string, StoredState>, keys: Iterable<string>): string[] {
  const problems: string[] = [];
  const last = new Map<string, Ack>();
  const inflight = new Map<string, InFlight>();
  for (const w of writers) {
    for (const a of w.acks) last.set(a.key, a);
    if (w.inflight) inflight.set(w.inflight.key, w.inflight);
  }
  for (const key of keys) {
    const ack = last.get(key);
    const got = after.get(key);
    const fly = inflight.get(key);
    const expected = ack ? (ack.op === 'delete' ? undefined : { value: ack.value as string, rv: ack.rv }) : 'unknown';
    const matchesAck =
      expected === 'unknown' ||
      (expected === undefined ? got === undefined : got !== undefined && got.value === expected.value && got.rv === expected.rv);
    if (matchesAck) continue;
    // The in-flight operation may have been applied (durable, not acknowledged).
    if (fly) {
      const flown = fly.op === 'delete' ? got === undefined : got !== undefined && got.value === fly.value && got.rv > (ack?.rv ?? 0);
      if (flown) continue;
    }
    const want = expected === undefined ? 'absent' : `v=${(expected as StoredState).value} rv=${(expected as StoredState).rv}`;
    problems.push(
      `lost write: ${key} is ${got ? `v=${got.value} rv=${got.rv}` : 'absent'}, acknowledged ${want}${fly ? ` (in flight: ${fly.op} ${fly.value ?? ''})` : ''}`,
    );
  }
  return problems;
}

/**
 * One watcher's events against the acknowledged writes: `fromRv` the version it watched from
 * (exclusive), `untilRv` the highest version it is known to have reached (its last event or a
 * bookmark).
 */
export function checkWatch(name: string, events: WatchEvent[], writers: WriterLog[], fromRv: number, untilRv: number): string[] {
  const problems: string[] = [];
  let prev = fromRv;
  for (const e of events) {
    if (e.rv <= prev) problems.push(`${name}: event ${e.type} ${e.key} rv=${e.rv} after rv=${prev} (duplicate or out of order)`);
    prev = Math.max(prev, e.rv);
  }
  const byRv = new Map<number, WatchEvent>();
  for (const e of events) byRv.set(e.rv, e);
  for (const w of writers) {
    const perKey = new Map<string, Ack[]>();
    for (const a of w.acks) {
      const l = perKey.get(a.key) ?? [];
      l.push(a);
      perKey.set(a.key, l);
    }
    for (const [key, acks] of perKey) {
      acks.forEach((a, i) => {
        if (a.op !== 'delete') {
          if (a.rv <= fromRv || a.rv > untilRv) return;
          const e = byRv.get(a.rv);
          if (!e || e.key !== key || e.type === 'DELETED' || e.value !== a.value)
            problems.push(
              `${name}: missing event for ${a.op} ${key} rv=${a.rv} v=${a.value}${e ? ` (rv ${a.rv} is ${e.type} ${e.key} v=${e.value})` : ''}`,
            );
          return;
        }
        // A delete's revision is not answered: a DELETED event of the key must lie between the
        // version it deleted and the key's next acknowledged write.
        const after = a.rv;
        const next = acks[i + 1]?.rv;
        if (after < fromRv || next === undefined || next > untilRv) return;
        if (!events.some((e) => e.type === 'DELETED' && e.key === key && e.rv > after && e.rv < next))
          problems.push(`${name}: missing DELETED event for ${key} between rv=${after} and rv=${next}`);
      });
    }
  }
  return problems;
}

/**
 * A watcher's events against the store's own history (the etcd mode reads it from etcd): in the
 * window (fromRv, untilRv] both sequences must be the same events (type, key, resourceVersion,
 * and value where the history has one), in the same order: nothing missing, nothing extra or
 * repeated. Names at most `limit` differences, from the first.
 */
export function checkHistory(
  name: string,
  events: WatchEvent[],
  history: WatchEvent[],
  fromRv: number,
  untilRv: number,
  limit = 5,
): string[] {
  const inWindow = (e: WatchEvent) => e.rv > fromRv && e.rv <= untilRv;
  const got = events.filter(inWindow);
  const want = history.filter(inWindow);
  const show = (e: WatchEvent | undefined) =>
    e ? `${e.type} ${e.key} rv=${e.rv}${e.value === undefined ? '' : ` v=${e.value}`}` : 'nothing';
  const problems: string[] = [];
  for (let i = 0, j = 0; (i < got.length || j < want.length) && problems.length < limit; ) {
    const g = got[i];
    const w = want[j];
    if (g && w && g.rv === w.rv && g.key === w.key && g.type === w.type && (w.value === undefined || g.value === w.value)) {
      i++;
      j++;
    } else if (g && (!w || g.rv <= w.rv)) {
      // An event the store does not have at that point (a duplicate, a reordering, a changed one).
      problems.push(`${name}: event ${show(g)} where the store's history has ${show(w)}`);
      i++;
      if (w && g.rv === w.rv) j++;
    } else {
      problems.push(`${name}: missing ${show(w)} (next event seen: ${show(g)})`);
      j++;
    }
  }
  return problems;
}
