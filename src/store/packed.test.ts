/**
 * Packed values: the same bytes come back, small and incompressible values are left alone, and
 * an embedded store holds a packed newest version only when it is exactly the bytes packed.
 */
import { expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MvccStore } from './mvcc';
import { create, update } from './ops';
import { PackedKeyValue, ValuePacker } from './packed';
import { SpilledValue } from './spill';

const enc = new TextEncoder();
const pod = (i: number) =>
  enc.encode(
    JSON.stringify({
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: `web-${i}`, namespace: 'ns', uid: crypto.randomUUID(), labels: { app: 'web' } },
      spec: { nodeName: `node-${i % 7}`, containers: [{ name: 'c', image: 'registry.example/app:1', imagePullPolicy: 'IfNotPresent' }] },
      status: {
        phase: 'Running',
        conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True' })),
      },
    }),
  );

/** A pod created in `kv`, and its stored bytes packed (not yet adopted by the store). */
async function podPacked(kv: MvccStore) {
  const key = '/registry/core/pods/ns/web-1';
  const v1 = pod(1);
  const r1 = await create(kv, key, v1);
  const held1 = kv.latest(key)?.value as Uint8Array;
  const p1 = new ValuePacker().pack('/registry/core/pods/', held1);
  if (!p1) throw new Error('not packed');
  return { key, v1, r1, held1, p1 };
}

test('a packed value inflates to the same bytes; the first value of a resource is its dictionary', () => {
  const packer = new ValuePacker();
  const a = pod(1);
  const b = pod(2);
  const pa = packer.pack('/registry/core/pods/', a);
  const pb = packer.pack('/registry/core/pods/', b);
  expect(pa).toBeDefined();
  expect(pb).toBeDefined();
  expect(Buffer.from(pa?.inflate() ?? []).equals(Buffer.from(a))).toBe(true);
  expect(Buffer.from(pb?.inflate() ?? []).equals(Buffer.from(b))).toBe(true);
  expect(pb?.length).toBe(b.length);
  // The second pod is mostly the first (the dictionary): a fraction of its size.
  expect(pb?.bytes.length ?? Number.POSITIVE_INFINITY).toBeLessThan(b.length / 3);
  expect(packer.stats.values).toBe(2);
});

test('small values and values that do not compress stay as they are', () => {
  const packer = new ValuePacker();
  expect(packer.pack('/registry/core/configmaps/', enc.encode('{"kind":"ConfigMap"}'))).toBeUndefined();
  // The first value of a resource is its dictionary (and so packs against itself); other noise
  // does not compress.
  expect(packer.pack('/registry/core/secrets/', crypto.getRandomValues(new Uint8Array(2048)))).toBeDefined();
  expect(packer.pack('/registry/core/secrets/', crypto.getRandomValues(new Uint8Array(2048)))).toBeUndefined();
  expect(packer.stats.values).toBe(1);
});

test('the store adopts a packed value only for the newest version with those very bytes', async () => {
  const kv = await MvccStore.open({});
  const { key, v1, r1, held1, p1 } = await podPacked(kv);
  // Another buffer with equal bytes, or another revision: not adopted.
  kv.adoptPacked(key, r1, held1.slice(), p1);
  expect(kv.latest(key)).not.toBeInstanceOf(PackedKeyValue);
  kv.adoptPacked(key, r1 + 1, held1, p1);
  expect(kv.latest(key)).not.toBeInstanceOf(PackedKeyValue);
  kv.adoptPacked(key, r1, held1, p1);
  const latest = kv.latest(key);
  expect(latest).toBeInstanceOf(PackedKeyValue);
  expect(latest?.modRevision).toBe(r1);
  expect(latest?.createRevision).toBe(r1);
  expect(latest?.version).toBe(1);
  expect(Buffer.from(latest?.value ?? []).equals(Buffer.from(v1))).toBe(true);
  const got = await kv.range(key);
  expect(Buffer.from(got.kvs[0]?.value ?? []).equals(Buffer.from(v1))).toBe(true);

  // Written again: the new version is raw, the packed one is history, readable at its revision.
  const v2 = pod(2);
  const r2 = await update(kv, key, v2, r1);
  expect(kv.latest(key)).not.toBeInstanceOf(PackedKeyValue);
  expect(kv.latest(key)?.version).toBe(2);
  const old = await kv.range(key, { revision: r1 });
  expect(Buffer.from(old.kvs[0]?.value ?? []).equals(Buffer.from(v1))).toBe(true);
  const now = await kv.range(key, { revision: r2 });
  expect(Buffer.from(now.kvs[0]?.value ?? []).equals(Buffer.from(v2))).toBe(true);
  await kv.close();
});

test('a packed version superseded and spilled to the history files is inflated once, and reads back', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'packed-spill-'));
  try {
    // Every superseded value spilled at the next write (no age, no bytes held).
    const kv = await MvccStore.open({ dir, fsync: 'none', spill: { afterMs: 0, maxPendingBytes: 0 } });
    const { key, v1, r1, held1, p1 } = await podPacked(kv);
    kv.adoptPacked(key, r1, held1, p1);
    let inflated = 0;
    const inflate = p1.inflate.bind(p1);
    p1.inflate = () => {
      inflated++;
      return inflate();
    };
    const r2 = await update(kv, key, pod(2), r1);
    // Spilled at the next write: the packed version's bytes are read once, to be written out.
    await update(kv, key, pod(3), r2);
    expect(kv.stats().spilledVersions).toBe(2);
    expect(inflated).toBe(1);
    const old = await kv.range(key, { revision: r1 });
    expect(old.kvs[0]).toBeInstanceOf(SpilledValue);
    expect(Buffer.from(old.kvs[0]?.value ?? []).equals(Buffer.from(v1))).toBe(true);
    await kv.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
