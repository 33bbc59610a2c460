/**
 * Large answers that complete after their request's turn of the event loop (src/http/respond.ts
 * `lateReply`): sent as a stream, they must arrive whole and equal to the same answer sent at
 * once, for every client. A LIST waiting for a newer resourceVersion completes when a later write
 * reaches the watch cache: a later turn.
 */
import { expect, setDefaultTimeout, test } from 'bun:test';
import { KUBECTL, serverForFile } from './helpers/server';

setDefaultTimeout(60_000);

const srv = serverForFile();
const NS = 'late-reply';
const LIST = `/api/v1/namespaces/${NS}/configmaps`;

test('a large LIST that completes on a later write arrives whole and equal to one answered at once', async () => {
  expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: NS } })).status).toBe(201);
  for (let i = 0; i < 40; i++) {
    const r = await srv.json('POST', LIST, { metadata: { name: `cm-${i}` }, data: { v: 'x'.repeat(1000) } });
    expect(r.status).toBe(201);
  }
  const now = await srv.fetch(LIST);
  const nowText = await now.text();
  expect(nowText.length).toBeGreaterThan(40_000);
  expect(now.headers.get('content-length')).toBe(String(Buffer.byteLength(nowText)));
  const rv = Number(JSON.parse(nowText).metadata.resourceVersion);

  // Waits for a revision the store does not have yet; the write below brings it.
  const waiting = srv.fetch(`${LIST}?resourceVersion=${rv + 1}&resourceVersionMatch=NotOlderThan`);
  await Bun.sleep(200);
  const other = await srv.json('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'late-reply-trigger' } });
  expect(other.status).toBe(201);
  const late = await waiting;
  expect(late.status).toBe(200);
  expect(late.headers.get('content-type')).toBe('application/json');
  expect(late.headers.get('audit-id')).toBeTruthy();
  // Sent as a stream: no Content-Length (chunked), the same items.
  expect(late.headers.get('content-length')).toBeNull();
  const lateList = (await late.json()) as { metadata: { resourceVersion: string }; items: unknown[] };
  const nowList = JSON.parse(nowText) as { items: unknown[] };
  expect(Number(lateList.metadata.resourceVersion)).toBeGreaterThan(rv);
  expect(lateList.items).toEqual(nowList.items);

  // kubectl (client-go) reads a late answer too: a LIST waiting for the next write.
  const rv2 = Number(lateList.metadata.resourceVersion) + 1;
  const kubectl = Bun.spawn(
    [KUBECTL, `--kubeconfig=${srv.kubeconfig}`, 'get', '--raw', `${LIST}?resourceVersion=${rv2}&resourceVersionMatch=NotOlderThan`],
    { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, HOME: srv.dataDir } },
  );
  await Bun.sleep(1000);
  expect((await srv.json('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'late-reply-trigger-2' } })).status).toBe(
    201,
  );
  expect(await kubectl.exited).toBe(0);
  const byKubectl = JSON.parse(await new Response(kubectl.stdout).text()) as { metadata: { resourceVersion: string }; items: unknown[] };
  expect(Number(byKubectl.metadata.resourceVersion)).toBeGreaterThanOrEqual(rv2);
  expect(byKubectl.items).toEqual(nowList.items);
});
