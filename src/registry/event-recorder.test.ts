import { describe, expect, test } from 'bun:test';
import type { Obj } from '../api/meta';
import type { Resources } from './api-registry';
import { EventQueue, EventRecorder } from './event-recorder';
import type { WriteOptions } from './options';

/** An events resource whose creates wait until released, recording what they were given. */
function heldEvents() {
  const created: { body: Obj; w: WriteOptions }[] = [];
  const gates: (() => void)[] = [];
  const events = {
    create: (_ns: string, body: Obj, w: WriteOptions) => {
      created.push({ body, w });
      return new Promise<Obj>((r) => gates.push(() => r(body)));
    },
  };
  const resources = { lookup: () => events } as unknown as Pick<Resources, 'lookup'>;
  return {
    resources,
    created,
    release: () => {
      for (const g of gates.splice(0)) g();
    },
  };
}

const pod = (name: string): Obj => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns', uid: `uid-${name}` } });

describe('EventRecorder', () => {
  test('events beyond the queue limit are dropped and logged, as client-go drops past maxQueuedEvents', async () => {
    const h = heldEvents();
    const logs: string[] = [];
    const queue = new EventQueue(3);
    // Two recorders (two simulated kubelets) sharing one queue.
    const a = new EventRecorder(h.resources, { component: 'kubelet', host: 'n1' }, (m) => logs.push(m), Date.now, queue);
    const b = new EventRecorder(h.resources, { component: 'kubelet', host: 'n2' }, (m) => logs.push(m), Date.now, queue);
    const done = [
      a.event(pod('p1'), 'Normal', 'Pulled', 'm'),
      b.event(pod('p2'), 'Normal', 'Pulled', 'm'),
      a.event(pod('p3'), 'Normal', 'Pulled', 'm'),
    ];
    done.push(b.event(pod('p4'), 'Normal', 'Started', 'm'), a.event(pod('p5'), 'Normal', 'Started', 'm'));
    await Bun.sleep(1);
    expect(h.created.map((c) => c.body.involvedObject as { name: string }).map((o) => o.name)).toEqual(['p1', 'p2', 'p3']);
    expect(queue.pending).toBe(3);
    expect(queue.dropped).toBe(2);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toContain('unable to record event: too many queued events (3), dropped event Started on Pod/p4');
    // Events are background writes: behind the server's other own writes.
    expect(h.created.every((c) => c.w.background === true)).toBe(true);
    h.release();
    await Promise.all(done);
    expect(queue.pending).toBe(0);
    // With room again, the next event is written.
    const next = a.event(pod('p6'), 'Normal', 'Pulled', 'm');
    await Bun.sleep(1);
    expect(h.created).toHaveLength(4);
    h.release();
    await next;
  });

  test('a failed write leaves the queue too', async () => {
    const logs: string[] = [];
    const events = { create: () => Promise.reject(new Error('etcd unavailable')) };
    const resources = { lookup: () => events } as unknown as Pick<Resources, 'lookup'>;
    const queue = new EventQueue(1);
    const r = new EventRecorder(resources, { component: 'job-controller' }, (m) => logs.push(m), Date.now, queue);
    await r.event(pod('p1'), 'Warning', 'Failed', 'm');
    await r.event(pod('p2'), 'Warning', 'Failed', 'm');
    expect(queue.pending).toBe(0);
    expect(queue.dropped).toBe(0);
    expect(logs).toEqual(['event Failed on Pod/p1: etcd unavailable', 'event Failed on Pod/p2: etcd unavailable']);
  });

  test('the same event again is counted on the first (a merge patch), a different one is new; past the window it is new again', async () => {
    const created: Obj[] = [];
    const patched: { name: string; patch: unknown }[] = [];
    const events = {
      create: (_ns: string, body: Obj) => {
        created.push(body);
        return Promise.resolve(body);
      },
      patch: (_ns: string, name: string, _type: string, patch: unknown) => {
        patched.push({ name, patch });
        return Promise.resolve({});
      },
    };
    const resources = { lookup: () => events } as unknown as Pick<Resources, 'lookup'>;
    let now = Date.parse('2026-11-27T10:00:00Z');
    const r = new EventRecorder(
      resources,
      { component: 'kubelet', host: 'n1' },
      () => {},
      () => now,
    );
    await r.event(pod('p1'), 'Warning', 'BackOff', 'Back-off restarting failed container c', 'spec.containers{c}');
    now += 1000;
    await r.event(pod('p1'), 'Warning', 'BackOff', 'Back-off restarting failed container c', 'spec.containers{c}');
    now += 1000;
    await r.event(pod('p1'), 'Warning', 'BackOff', 'Back-off restarting failed container c', 'spec.containers{c}');
    // Any part of the key differing makes another event: the message, the object, the field path.
    await r.event(pod('p1'), 'Warning', 'BackOff', 'Back-off restarting failed container d', 'spec.containers{c}');
    await r.event(pod('p2'), 'Warning', 'BackOff', 'Back-off restarting failed container c', 'spec.containers{c}');
    await r.event(pod('p1'), 'Warning', 'BackOff', 'Back-off restarting failed container c', 'spec.containers{d}');
    const first = created[0]?.metadata.name as string;
    expect(created).toHaveLength(4);
    expect(patched).toEqual([
      { name: first, patch: { count: 2, lastTimestamp: '2026-11-27T10:00:01Z' } },
      { name: first, patch: { count: 3, lastTimestamp: '2026-11-27T10:00:02Z' } },
    ]);
    // Ten minutes after the first record, a repeat is recorded anew.
    now += 10 * 60_000;
    await r.event(pod('p1'), 'Warning', 'BackOff', 'Back-off restarting failed container c', 'spec.containers{c}');
    expect(created).toHaveLength(5);
    expect(patched).toHaveLength(2);
  });
});
