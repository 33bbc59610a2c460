/**
 * What compressing the store's values would save (issue 36's RSS ≤ 2 GiB with 150,000 pods):
 * the values the embedded store keeps in memory are about half of the server's RSS at that
 * scale (newest values ~880-917 MiB of 1.8-2.5 GiB after a full collection, bench/history.md),
 * and nearly all of them are simulated pods (~3.9 KB stored, 1.3 KB of it managedFields) and
 * their kubelets' Events (~1.0 KB, three per pod). This measures, on real objects of the server
 * (pods run to Ready by simulated kubelets, and their Events, as listed), each codec's stored
 * size and CPU per compression and decompression, and projects the value bytes at 150,000 pods
 * and 450,000 Events:
 *
 *   bun bench/value-compression.ts [--pods=200] [--nodes=10]
 *
 * Codecs: deflate (node:zlib, raw) at level 1 alone and with a preset dictionary (another object
 * of the same kind: a store could keep one per resource, as recent values are alike), and zstd at
 * level 1 alone and with the same dictionary when this Bun has it. The dictionary object is not among those measured.
 */
import * as zlib from 'node:zlib';
import { startServer } from '../test/helpers/server';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const PODS = Number(arg('pods') ?? 200);
const NODES = Number(arg('nodes') ?? 10);
const enc = new TextEncoder();

interface Item {
  metadata: { resourceVersion?: string };
}

/** The object as the store keeps it: JSON without resourceVersion (the revision is the key's). */
function stored(o: Item): Uint8Array {
  const c = structuredClone(o);
  delete c.metadata.resourceVersion;
  return enc.encode(JSON.stringify(c));
}

type Codec = [string, (b: Uint8Array) => Uint8Array, (b: Uint8Array) => Uint8Array];

function codecs(dict: Uint8Array): Codec[] {
  const out: Codec[] = [
    ['deflate 1', (b) => zlib.deflateRawSync(b, { level: 1 }), (b) => zlib.inflateRawSync(b)],
    [
      'deflate 1 + dictionary',
      (b) => zlib.deflateRawSync(b, { level: 1, dictionary: dict }),
      (b) => zlib.inflateRawSync(b, { dictionary: dict }),
    ],
  ];
  const z = Bun as unknown as {
    zstdCompressSync?: (b: Uint8Array, o: { level: number }) => Uint8Array;
    zstdDecompressSync?: (b: Uint8Array) => Uint8Array;
  };
  if (z.zstdCompressSync && z.zstdDecompressSync) {
    const c = z.zstdCompressSync;
    const d = z.zstdDecompressSync;
    out.push(['zstd 1', (b) => c(b, { level: 1 }), (b) => d(b)]);
  }
  // node:zlib's zstd takes a dictionary (raw content) in this Bun; the output size is given as a
  // hint (the store knows each value's raw length), as src/store/packed.ts does.
  const zz = zlib as unknown as {
    zstdCompressSync?: (b: Uint8Array, o: object) => Uint8Array;
    zstdDecompressSync?: (b: Uint8Array, o: object) => Uint8Array;
  };
  if (zz.zstdCompressSync && zz.zstdDecompressSync) {
    const c = zz.zstdCompressSync;
    const d = zz.zstdDecompressSync;
    const level = (zlib.constants as unknown as Record<string, number>).ZSTD_c_compressionLevel as number;
    out.push([
      'zstd 1 + dictionary',
      (b) => c(b, { params: { [level]: 1 }, dictionary: dict }),
      (b) => d(b, { dictionary: dict, chunkSize: 8192 }),
    ]);
  }
  return out;
}

function measure(kind: string, items: Item[], count150k: number): void {
  if (items.length < 2) throw new Error(`${kind}: ${items.length} objects, need 2 or more`);
  const [first, ...rest] = items.map(stored) as [Uint8Array, ...Uint8Array[]];
  const raw = rest.reduce((a, b) => a + b.length, 0) / rest.length;
  console.log(
    `${kind}: ${rest.length} objects, ${raw.toFixed(0)} B stored on average; ${((raw * count150k) / 2 ** 20).toFixed(0)} MiB for ${count150k.toLocaleString()}`,
  );
  for (const [name, compress, decompress] of codecs(first)) {
    const packed = rest.map(compress);
    for (let i = 0; i < rest.length; i++)
      if (Buffer.compare(Buffer.from(decompress(packed[i] as Uint8Array)), Buffer.from(rest[i] as Uint8Array)) !== 0)
        throw new Error(`${kind} ${name}: round trip differs`);
    const size = packed.reduce((a, b) => a + b.length, 0) / packed.length;
    const N = Math.max(5000, rest.length);
    let t = performance.now();
    for (let i = 0; i < N; i++) compress(rest[i % rest.length] as Uint8Array);
    const cUs = ((performance.now() - t) * 1000) / N;
    t = performance.now();
    for (let i = 0; i < N; i++) decompress(packed[i % packed.length] as Uint8Array);
    const dUs = ((performance.now() - t) * 1000) / N;
    console.log(
      `  ${name}: ${size.toFixed(0)} B (x${(raw / size).toFixed(2)}), ${((size * count150k) / 2 ** 20).toFixed(0)} MiB for ${count150k.toLocaleString()}; compress ${cUs.toFixed(1)} us, decompress ${dUs.toFixed(1)} us`,
    );
  }
}

const srv = await startServer({ args: [`--simulated-nodes=${NODES}`] });
try {
  await srv.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
  for (let i = 0; i < PODS; i += 20)
    await Promise.all(
      Array.from({ length: Math.min(20, PODS - i) }, (_, j) =>
        srv.json('POST', '/api/v1/namespaces/bench/pods', {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: `web-${i + j}`, labels: { app: 'web', tier: 'frontend' } },
          spec: {
            containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests: { cpu: '100m', memory: '128Mi' } } }],
          },
        }),
      ),
    );
  let pods: (Item & { status?: { conditions?: { type: string; status: string }[] } })[] = [];
  const deadline = Date.now() + 60_000;
  for (;;) {
    pods = ((await srv.json('GET', '/api/v1/namespaces/bench/pods')).body as { items: typeof pods }).items;
    const ready = pods.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
    if (ready === PODS) break;
    if (Date.now() > deadline) throw new Error(`${ready} of ${PODS} pods Ready after 60 s`);
    await Bun.sleep(200);
  }
  const events = ((await srv.json('GET', '/api/v1/namespaces/bench/events')).body as { items: Item[] }).items;
  measure('Pods (Ready, simulated kubelets)', pods, 150_000);
  measure("their kubelets' Events", events, 450_000);
} finally {
  await srv.stop();
}
