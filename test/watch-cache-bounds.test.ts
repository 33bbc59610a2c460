/**
 * The watch cache's history bounded by bytes and by events (issue 17 item 2:
 * --watch-cache-max-bytes, --watch-cache-max-events), whatever the time window: the oldest
 * events go first; a watch resuming from an evicted resourceVersion gets the 410 Expired ERROR
 * event, one from a retained version gets what followed it.
 */
import { describe, expect, test } from 'bun:test';
import { serverForFile } from './helpers/server';
import { openWatch } from './helpers/watch';

const srv = serverForFile({ args: ['--watch-cache-max-bytes=100000', '--watch-cache-max-events=20'] });

async function create(ns: string, name: string, size: number): Promise<string> {
  const r = await srv.json('POST', `/api/v1/namespaces/${ns}/configmaps`, { metadata: { name }, data: { v: 'x'.repeat(size) } });
  expect(r.status).toBe(201);
  return r.body.metadata.resourceVersion as string;
}

async function firstEvent(ns: string, rv: string) {
  const w = await openWatch(srv, `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${rv}`);
  try {
    const [e] = await w.take(1, 5000);
    return e;
  } finally {
    await w.close();
  }
}

describe('watch cache bounds', () => {
  test('by bytes: 30 events of 10 KB in a 100 KB history keep only the newest', async () => {
    await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'wb' } });
    const rvs: string[] = [];
    for (let i = 0; i < 30; i++) rvs.push(await create('wb', `big-${i}`, 10_000));
    const old = await firstEvent('wb', rvs[0] as string);
    expect(old?.type).toBe('ERROR');
    expect(old?.object).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
    const recent = await firstEvent('wb', rvs[27] as string);
    expect(recent?.type).toBe('ADDED');
    expect(recent?.object.metadata.name).toBe('big-28');
  });

  test('by events: 30 small events in a history of 20 keep only the newest 20', async () => {
    await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'we' } });
    const rvs: string[] = [];
    for (let i = 0; i < 30; i++) rvs.push(await create('we', `small-${i}`, 10));
    const old = await firstEvent('we', rvs[5] as string);
    expect(old?.type).toBe('ERROR');
    expect(old?.object).toMatchObject({ code: 410, reason: 'Expired' });
    const recent = await firstEvent('we', rvs[15] as string);
    expect(recent?.type).toBe('ADDED');
    expect(recent?.object.metadata.name).toBe('small-16');
  });
});
