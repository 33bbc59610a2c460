/**
 * A full list of pods once every pod is cold (held packed, src/watch/cold.ts) against the same
 * list while none is: what inflating each object as it is listed costs.
 *
 *   bun bench/cold-list.ts [--pods=30000] [--after=3s]
 *
 * A server with `--pack-cold-values-after=AFTER` gets PODS pods (bench/api.ts's shape, 64 creates
 * in flight); five full lists right away (median), then, AFTER and 5 s more later, five lists
 * once cold, each after AFTER and 1 s more unread (a second list within AFTER makes the objects
 * hot again: src/watch/cold.ts); then two more at once (the second makes up to 64 MiB of them
 * hot) and three more; then the same with packing off (`--pack-cold-values-after=0`), the baseline.
 */
import { startServer } from '../test/helpers/server';
import { listPod as pod } from './fixtures';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const PODS = Number(arg('pods') ?? 30_000);
const AFTER = arg('after') ?? '3s';
const AFTER_MS = Number.parseFloat(AFTER) * (AFTER.endsWith('ms') ? 1 : AFTER.endsWith('m') ? 60_000 : 1000);

async function run(pack: string): Promise<void> {
  const srv = await startServer({
    args: [`--pack-cold-values-after=${pack}`, '--max-requests-inflight=0', '--max-mutating-requests-inflight=0'],
  });
  try {
    await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'bench' } });
    for (let i = 0; i < PODS; i += 64)
      await Promise.all(
        Array.from({ length: Math.min(64, PODS - i) }, (_, j) => srv.json('POST', '/api/v1/namespaces/bench/pods', pod(i + j))),
      );
    const once = async () => {
      const t = performance.now();
      await (await srv.fetch('/api/v1/namespaces/bench/pods')).arrayBuffer();
      return performance.now() - t;
    };
    const list = async (label: string, n: number, gapMs: number) => {
      const ts: number[] = [];
      for (let r = 0; r < n; r++) {
        if (r > 0) await Bun.sleep(gapMs);
        ts.push(await once());
      }
      const sorted = [...ts].sort((a, b) => a - b);
      console.log(
        `--pack-cold-values-after=${pack}: ${PODS} pods ${label}: median ${(sorted[Math.floor(n / 2)] as number).toFixed(0)} ms (${ts.map((t) => t.toFixed(0)).join(', ')})`,
      );
    };
    await list('right after the creates', 5, 0);
    await Bun.sleep(AFTER_MS + 5000);
    await list(`once cold (${AFTER} and 5 s later, then ${AFTER} and 1 s apart)`, 5, AFTER_MS + 1000);
    const first = await once();
    const second = await once();
    console.log(
      `--pack-cold-values-after=${pack}: ${PODS} pods listed twice at once: ${first.toFixed(0)} ms, then ${second.toFixed(0)} ms${pack === '0' ? '' : ' (the second makes up to 64 MiB of them hot again)'}`,
    );
    await list('listed again (up to 64 MiB of them hot again)', 3, 0);
  } finally {
    await srv.stop();
  }
}

await run(AFTER);
await run('0');
