/**
 * A 100k-Pod protobuf list streaming while small requests are answered (issue 15 item 4's test):
 * the list is encoded in the codec pool's worker a chunk at a time (its first pass, sizing the
 * chunks, runs before the answer starts), and a small GET never waits behind it.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { ProtobufCodec } from '../src/codec/protobuf';
import { SchemaSet } from '../src/schema/engine';
import definitions from '../src/schema/generated/definitions.json';
import { overlays } from '../src/schema/overlays';
import type { Definitions } from '../src/schema/types';
import { type Server, startServer } from './helpers/server';

const pb = new ProtobufCodec(new SchemaSet(definitions as unknown as Definitions, overlays));
const PODS = 100_000;
let srv: Server;

beforeAll(async () => {
  srv = await startServer({ args: ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0'] });
  expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'many' } })).status).toBe(201);
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      for (let i = next++; i < PODS; i = next++) {
        const r = await srv.json('POST', '/api/v1/namespaces/many/pods', {
          metadata: { name: `p-${i}`, labels: { app: `a-${i % 10}` } },
          spec: { nodeName: `node-${i % 100}`, containers: [{ name: 'c', image: 'registry.example/app:1' }] },
        });
        if (r.status !== 201) throw new Error(`create: ${r.status} ${JSON.stringify(r.body)}`);
      }
    }),
  );
}, 180_000);
afterAll(async () => {
  await srv?.stop();
});

test('small GETs are answered while a 100k-Pod protobuf list streams to a slow reader', async () => {
  const r = await srv.fetch('/api/v1/namespaces/many/pods', {
    headers: { accept: 'application/vnd.svc.protobuf', 'accept-encoding': 'identity' },
  });
  expect(r.status).toBe(200);
  const reader = (r.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let done = false;
  const reading = (async () => {
    for (let c = await reader.read(); !c.done; c = await reader.read()) {
      chunks.push(c.value);
      await Bun.sleep(2); // a slow client
    }
    done = true;
  })();
  let gets = 0;
  let worst = 0;
  while (!done && gets < 200) {
    const t = performance.now();
    const g = await srv.json('GET', '/api/v1/namespaces/many/pods/p-7');
    expect(g.status).toBe(200);
    worst = Math.max(worst, performance.now() - t);
    gets++;
    await Bun.sleep(10);
  }
  await reading;
  expect(gets).toBeGreaterThan(20);
  // Generous for a loaded CI machine: the point is that no GET waits for the list (seconds).
  expect(worst).toBeLessThan(500);
  const body = Buffer.concat(chunks);
  const list = pb.decode(body, 'io.svc.api.core.v1.PodList') as { items: { metadata: { name: string } }[] };
  expect(list.items).toHaveLength(PODS);
  expect(new Set(list.items.map((p) => p.metadata.name)).size).toBe(PODS);
}, 120_000);
