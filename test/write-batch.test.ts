/**
 * Writes started a turn's batch at a time (src/http/write-batch.ts), over real HTTP: concurrent
 * writes share batches, each keeps its own answer (a conflict or an invalid object next to
 * successes in one batch), reads and failed writes change nothing they should not, and reads are
 * never batched.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type Server, startServer } from './helpers/server';

let srv: Server;
const NS = 'batched';
const P = `/api/v1/namespaces/${NS}/configmaps`;

const counters = async () => {
  const m = await (await srv.fetch('/metrics')).text();
  return {
    batches: Number(/^svc_write_batches_total (\d+)$/m.exec(m)?.[1]),
    batched: Number(/^svc_write_batched_requests_total (\d+)$/m.exec(m)?.[1]),
  };
};

beforeAll(async () => {
  srv = await startServer();
  expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: NS } })).status).toBe(201);
});
afterAll(async () => {
  await srv?.stop();
});

describe('write batches', () => {
  test('concurrent creates share batches, and every one is answered and stored', async () => {
    const before = await counters();
    expect(Number.isFinite(before.batches)).toBe(true);
    const N = 64;
    const rs = await Promise.all(
      Array.from({ length: N }, (_, i) => srv.json('POST', P, { metadata: { name: `c-${i}` }, data: { i: String(i) } })),
    );
    expect(rs.map((r) => r.status)).toEqual(Array(N).fill(201));
    const after = await counters();
    // The 64 creates, and nothing else (the metrics GETs are not writes).
    expect(after.batched - before.batched).toBe(N);
    // Fewer batches than writes: some turn started more than one.
    expect(after.batches - before.batches).toBeLessThan(N);
    const list = (await srv.json('GET', P)).body as { items: { metadata: { name: string }; data: { i: string } }[] };
    expect(list.items.length).toBe(N);
    for (const o of list.items) expect(o.metadata.name).toBe(`c-${o.data.i}`);
  });

  test('each write of a batch gets its own answer: conflicts and invalid objects beside successes', async () => {
    const before = await counters();
    const rs = await Promise.all([
      srv.json('POST', P, { metadata: { name: 'fresh-1' } }),
      srv.json('POST', P, { metadata: { name: 'c-0' } }),
      srv.json('POST', P, { metadata: { name: 'Not_Valid' } }),
      srv.json('PATCH', `${P}/c-1`, { data: { patched: 'yes' } }, { 'content-type': 'application/merge-patch+json' }),
      srv.json('DELETE', `${P}/c-2`),
      srv.json('DELETE', `${P}/never-was`),
      srv.json('POST', P, { metadata: { name: 'fresh-2' } }),
    ]);
    expect(rs.map((r) => r.status)).toEqual([201, 409, 422, 200, 200, 404, 201]);
    expect((rs[1]?.body as { reason?: string } | undefined)?.reason).toBe('AlreadyExists');
    expect((rs[2]?.body as { reason?: string } | undefined)?.reason).toBe('Invalid');
    expect((await srv.json('GET', `${P}/c-1`)).body).toMatchObject({ data: { i: '1', patched: 'yes' } });
    expect((await srv.json('GET', `${P}/c-2`)).status).toBe(404);
    expect((await srv.json('GET', `${P}/Not_Valid`)).status).toBe(404);
    expect((await counters()).batched - before.batched).toBe(7);
  });

  test('reads are not batched', async () => {
    const before = await counters();
    const rs = await Promise.all(Array.from({ length: 20 }, () => srv.json('GET', `${P}/c-3`)));
    expect(rs.map((r) => r.status)).toEqual(Array(20).fill(200));
    const after = await counters();
    expect(after.batched).toBe(before.batched);
    expect(after.batches).toBe(before.batches);
  });
});
