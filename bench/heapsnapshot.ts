/**
 * Reads a V8-format heap snapshot (the server writes one on SIGUSR2 with SVC_DEBUG_HEAP_SIGNAL=1
 * and SVC_DEBUG_HEAP_SNAPSHOT=DIR; `Bun.generateHeapSnapshot('v8')`) and prints where the objects
 * are: the most numerous kinds of node (type and constructor or shape name) with their count and
 * self size, and for each of the first --retainers kinds, who holds them (the holder's kind and
 * the edge's name, over every edge that points at one).
 *
 *   bun bench/heapsnapshot.ts FILE [--n=30] [--retainers=8] [--per=6] [--depth=1]
 *
 * --depth=D: holders as chains of D edges (each node's first holder, from the heap's own edges),
 * e.g. `object:Object <- object:Array .[element] <- object:Foo .items`.
 */
import * as fs from 'node:fs';

const file = process.argv[2];
if (!file) {
  console.error('usage: bun bench/heapsnapshot.ts FILE [--n=30] [--retainers=8] [--per=6]');
  process.exit(2);
}
const arg = (n: string, d: number) => Number(process.argv.find((a) => a.startsWith(`--${n}=`))?.slice(n.length + 3) ?? d);
const N = arg('n', 30);
const RETAINERS = arg('retainers', 8);
const PER = arg('per', 6);
const DEPTH = arg('depth', 1);

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: unknown[][]; edge_fields: string[]; edge_types: unknown[][] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}
const s = JSON.parse(fs.readFileSync(file, 'utf8')) as Snapshot;
const meta = s.snapshot.meta;
const nf = meta.node_fields.length;
const ef = meta.edge_fields.length;
const nodeTypes = meta.node_types[0] as string[];
const edgeTypes = meta.edge_types[0] as string[];
const fType = meta.node_fields.indexOf('type');
const fName = meta.node_fields.indexOf('name');
const fSize = meta.node_fields.indexOf('self_size');
const fEdges = meta.node_fields.indexOf('edge_count');
const eType = meta.edge_fields.indexOf('type');
const eName = meta.edge_fields.indexOf('name_or_index');
const eTo = meta.edge_fields.indexOf('to_node');
const count = s.nodes.length / nf;

/** A node's kind: its type, and for objects and closures its name (strings are one kind). */
const kindOf = (i: number): string => {
  const t = nodeTypes[s.nodes[i * nf + fType] as number] ?? '?';
  if (t === 'string' || t === 'concatenated string' || t === 'sliced string' || t === 'number') return t;
  return `${t}:${(s.strings[s.nodes[i * nf + fName] as number] ?? '').slice(0, 60)}`;
};
const kinds = new Array<string>(count);
const byKind = new Map<string, { n: number; bytes: number }>();
let total = 0;
for (let i = 0; i < count; i++) {
  const k = kindOf(i);
  kinds[i] = k;
  const size = s.nodes[i * nf + fSize] as number;
  total += size;
  const g = byKind.get(k) ?? { n: 0, bytes: 0 };
  g.n++;
  g.bytes += size;
  byKind.set(k, g);
}
const top = [...byKind.entries()].sort((a, b) => b[1].n - a[1].n).slice(0, N);
console.log(`${count} nodes, ${(total / 2 ** 20).toFixed(1)} MiB self size`);
for (const [k, g] of top) console.log(`${String(g.n).padStart(10)} ${(g.bytes / 2 ** 20).toFixed(1).padStart(8)} MiB  ${k}`);

// Holders of the first kinds: every edge into a node of the kind, by the holder's kind and the
// edge's name; with --depth above 1, chains of each node's first holders instead.
const watched = new Map(top.slice(0, RETAINERS).map(([k]) => [k, new Map<string, number>()]));
const firstHolder = new Int32Array(count).fill(-1);
const firstEdge = new Array<string>(count);
let edge = 0;
for (let i = 0; i < count; i++) {
  const edges = s.nodes[i * nf + fEdges] as number;
  for (let e = 0; e < edges; e++, edge++) {
    const et = edgeTypes[s.edges[edge * ef + eType] as number];
    if (et === 'weak' || et === 'shortcut') continue;
    const to = (s.edges[edge * ef + eTo] as number) / nf;
    const nameOrIndex = s.edges[edge * ef + eName] as number;
    const name = et === 'element' || et === 'hidden' ? `[${et}]` : (s.strings[nameOrIndex] ?? '?');
    if (firstHolder[to] === -1 && DEPTH > 1) {
      firstHolder[to] = i;
      firstEdge[to] = name;
    }
    if (DEPTH > 1) continue;
    const held = watched.get(kinds[to] as string);
    if (!held) continue;
    const key = `${kinds[i]} .${name}`;
    held.set(key, (held.get(key) ?? 0) + 1);
  }
}
if (DEPTH > 1) {
  for (let i = 0; i < count; i++) {
    const held = watched.get(kinds[i] as string);
    if (!held) continue;
    let chain = '';
    let at = i;
    for (let d = 0; d < DEPTH && firstHolder[at] !== -1; d++) {
      const h = firstHolder[at] as number;
      chain += ` <- ${kinds[h]} .${firstEdge[at]}`;
      at = h;
    }
    held.set(chain, (held.get(chain) ?? 0) + 1);
  }
}
for (const [k, held] of watched) {
  console.log(`\nheld ${k}:`);
  for (const [h, n] of [...held.entries()].sort((a, b) => b[1] - a[1]).slice(0, PER)) console.log(`${String(n).padStart(10)}  ${h}`);
}
