/**
 * Long lists streamed against built whole (issue 15 item 4): p99 of small GETs from 16 clients
 * while 4 clients LIST 20,000 ConfigMaps of ~1 KB (JSON, gzip as client-go asks), against the
 * same GETs unloaded, with streaming on (the default) and off (SVC_LIST_STREAM_MIN_ITEMS huge) in
 * one run, each on its own server; plus the server's peak RSS.
 *
 *   bun bench/list-stream.ts [--objects=N] [--phase-ms=MS]
 */
import * as fs from 'node:fs';
import { startServer } from '../test/helpers/server';
import { load, smallGets } from './harness';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const OBJECTS = Number(arg('objects') ?? 20_000);
const PHASE_MS = Number(arg('phase-ms') ?? 8000);

const peakRss = (pid: number): number => {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
};

for (const mode of ['streamed', 'built whole']) {
  process.env.SVC_LIST_STREAM_MIN_ITEMS = mode === 'streamed' ? '' : '1000000000';
  const srv = await startServer({ args: ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0'] });
  try {
    const auth = { authorization: `Bearer ${srv.token}` };
    await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'big' } });
    const value = 'v'.repeat(900);
    for (let i = 0; i < OBJECTS; i += 200) {
      await Promise.all(
        Array.from({ length: 200 }, (_, j) =>
          srv.json('POST', '/api/v1/namespaces/big/configmaps', { metadata: { name: `cm-${i + j}` }, data: { v: value } }),
        ),
      );
    }
    const get = smallGets(srv, PHASE_MS);
    const unloaded = await load(get);
    const [loaded, lists] = await Promise.all([
      load(get),
      load({
        url: `${srv.url}/api/v1/namespaces/big/configmaps`,
        method: 'GET',
        headers: { ...auth, 'accept-encoding': process.env.LIST_ENCODING ?? 'gzip' },
        ca: srv.ca,
        concurrency: 4,
        durationMs: PHASE_MS,
      }),
    ]);
    console.log(
      `${mode}: small GET p99 unloaded ${unloaded.p99.toFixed(2)} ms, under 4 listers ${loaded.p99.toFixed(2)} ms ` +
        `(x${(loaded.p99 / unloaded.p99).toFixed(2)}; ${loaded.ops} GETs/s), lists ${lists.ops}/s (${lists.errors} errors), ` +
        `server peak RSS ${peakRss(srv.proc.pid).toFixed(0)} MiB`,
    );
  } finally {
    await srv.stop();
  }
}
