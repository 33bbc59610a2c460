/**
 * Malformed requests against a live server (issue 42 item 4), `--per-decoder` of each kind
 * (bench/fuzz-gen.ts: JSON, YAML, protobuf, CBOR bodies, the four patch types, query parameters,
 * headers, paths), one at a time so that each can be checked:
 *
 * - the answer is not a 5xx (but for the reference's own 500s on some patch inputs) and a 4xx is
 *   a Status in the type it was served in (bench/fuzz-gen.ts `judge`);
 * - a write answered 4xx (or one of those 500s) changed nothing: the collection's
 *   resourceVersion (the store's revision) is the same after it;
 * - the server is alive at the end and its RSS grew by less than 256 MiB.
 *
 *   bun bench/fuzz.ts [--per-decoder=N] [--seed=N] [--decoders=json,smp,...]
 *
 * A problem names its decoder, its index and the seed: `--seed=S --decoders=D --per-decoder=I+1`
 * replays it (each decoder's requests come from their own generator seeded from S).
 *
 * Prints the answers by code per decoder; exits 1 with the seed and the request on any problem.
 */
import { rng } from '../test/helpers/rng';
import { type Server, startServer } from '../test/helpers/server';
import { DECODERS, type Decoder, type FuzzRequest, generate, judge, type Samples } from './fuzz-gen';
import { rssMiB } from './harness';

export interface FuzzTotals {
  requests: number;
  codes: Record<Decoder, Record<number, number>>;
  problems: string[];
  rssGrowthMiB: number;
}

const CM = '/api/v1/namespaces/default/configmaps';

async function samples(srv: Server): Promise<Samples> {
  const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fuzz', labels: { a: 'b' } }, data: { a: '1', b: 'two' } };
  await srv.json('POST', CM, obj);
  const bytes = async (accept: string) => new Uint8Array(await (await srv.fetch(`${CM}/fuzz`, { headers: { accept } })).arrayBuffer());
  return {
    collection: CM,
    name: 'fuzz',
    json: JSON.stringify(obj),
    yaml: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fuzz\n  labels:\n    a: b\ndata:\n  a: "1"\n  b: two\n',
    protobuf: await bytes('application/vnd.kubernetes.protobuf'),
    cbor: await bytes('application/cbor'),
  };
}

const revision = async (srv: Server) => String((await srv.json('GET', CM)).body.metadata?.resourceVersion);

export async function runFuzz(o: { perDecoder: number; seed: number; decoders?: Decoder[] }): Promise<FuzzTotals> {
  const srv = await startServer({
    args: ['--feature-gates=CBORServingAndStorage=true', '--max-requests-inflight=0', '--max-mutating-requests-inflight=0'],
  });
  const totals: FuzzTotals = { requests: 0, codes: {} as FuzzTotals['codes'], problems: [], rssGrowthMiB: 0 };
  try {
    const s = await samples(srv);
    const rss0 = rssMiB(srv.proc.pid);
    for (const decoder of o.decoders ?? DECODERS) {
      const r = rng(o.seed + DECODERS.indexOf(decoder));
      const codes: Record<number, number> = {};
      totals.codes[decoder] = codes;
      for (let i = 0; i < o.perDecoder; i++) {
        const req: FuzzRequest = generate(r, decoder, s);
        const before = req.write ? await revision(srv) : '';
        let status = 0;
        let text = '';
        let type = '';
        try {
          const res = await srv.fetch(req.path, {
            method: req.method,
            headers: req.headers,
            body: req.body,
            signal: AbortSignal.timeout(10_000),
          });
          status = res.status;
          type = res.headers.get('content-type') ?? '';
          text = await res.text().catch(() => '');
        } catch (e) {
          if (srv.proc.exitCode !== null) {
            totals.problems.push(`${decoder} #${i} (seed ${o.seed}): the server died: ${(e as Error).message}`);
            return totals;
          }
          // A watch cut by our timeout, or a connection the server refused to parse: not an answer.
          status = -1;
        }
        totals.requests++;
        codes[status] = (codes[status] ?? 0) + 1;
        const bodyText = typeof req.body === 'string' ? req.body.slice(0, 300) : req.body ? `${req.body.byteLength} bytes` : '';
        const wrong = status > 0 ? judge(req, status, type, text) : undefined;
        if (wrong)
          totals.problems.push(
            `${decoder} #${i} (seed ${o.seed}): ${req.method} ${req.path.slice(0, 200)} ${JSON.stringify(req.headers)} ${bodyText}\n    -> ${wrong}`,
          );
        if (req.write && status >= 400) {
          const after = await revision(srv);
          if (after !== before)
            totals.problems.push(
              `${decoder} #${i} (seed ${o.seed}): answered ${status} but the store changed (${before} -> ${after}): ${req.method} ${req.path.slice(0, 200)} ${bodyText}`,
            );
        }
        if (totals.problems.length >= 20) return totals;
      }
    }
    totals.rssGrowthMiB = rssMiB(srv.proc.pid) - rss0;
    if (totals.rssGrowthMiB > 256) totals.problems.push(`RSS grew by ${totals.rssGrowthMiB} MiB`);
    if (srv.proc.exitCode !== null) totals.problems.push('the server is not running at the end');
  } finally {
    await srv.stop();
  }
  return totals;
}

if (import.meta.main) {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const seed = Number(arg('seed') ?? Date.now() % 1_000_000);
  const t0 = Date.now();
  const decoders = arg('decoders')?.split(',') as Decoder[] | undefined;
  for (const d of decoders ?? []) if (!DECODERS.includes(d)) throw new Error(`--decoders: no decoder ${d} (${DECODERS.join(', ')})`);
  const t = await runFuzz({ perDecoder: Number(arg('per-decoder') ?? 10_000), seed, decoders });
  for (const [d, codes] of Object.entries(t.codes)) console.log(`${d.padEnd(12)} ${JSON.stringify(codes)}`);
  console.log(
    `${t.requests} requests, ${t.problems.length} problems, RSS +${t.rssGrowthMiB} MiB (seed ${seed}, ${((Date.now() - t0) / 1000).toFixed(0)} s)`,
  );
  for (const p of t.problems) console.log(`  ${p}`);
  process.exit(t.problems.length > 0 ? 1 : 0);
}
