/**
 * Self and inclusive time per function of a .cpuprofile (the server's, from
 * SVC_SERVER_BUN_ARGS="--cpu-prof --cpu-prof-dir=DIR", or any `bun --cpu-prof` run):
 *
 *   bun bench/cpuprofile.ts FILE [--from=S] [--to=S] [--n=40] [--under=TEXT]
 *
 * --from/--to: a window in seconds from the profile's start; --under: only samples whose stack
 * has a frame whose label contains TEXT (a function's share of its caller's cost).
 *
 * Each sample is weighed by the time to the next one, capped at 1.5 ms. The sampler takes a
 * sample about every millisecond only while the thread runs JavaScript: an idle stretch is one
 * long gap, and weighing by the raw gap gave it to whatever ran just before (a timer's callback
 * took 42% of a lightly loaded server's time, and a thread 45% busy showed as 100%). The summary
 * line gives the busy time so counted against the window's length.
 */
export {};

const file = process.argv[2];
if (!file) {
  console.error('usage: bun bench/cpuprofile.ts FILE [--from=S] [--to=S] [--n=40] [--under=TEXT]');
  process.exit(2);
}
const arg = (n: string) => process.argv.find((a) => a.startsWith(`--${n}=`))?.slice(n.length + 3);
const from = Number(arg('from') ?? 0) * 1e6;
const to = Number(arg('to') ?? 1e9) * 1e6;
const N = Number(arg('n') ?? 40);
const under = arg('under');
const CAP_US = 1500;

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const profile = JSON.parse(await Bun.file(file).text()) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const byId = new Map<number, Node>();
const parent = new Map<number, number>();
for (const n of profile.nodes) {
  byId.set(n.id, n);
  for (const c of n.children ?? []) parent.set(c, n.id);
}
const labels = new Map<number, string>();
const label = (id: number): string => {
  let l = labels.get(id);
  if (l === undefined) {
    const cf = (byId.get(id) as Node).callFrame;
    const url = cf.url
      .replace(/^file:\/\//, '')
      .replace(/.*\/node_modules\//, 'nm/')
      .replace(`${process.cwd()}/`, '');
    l = `${cf.functionName || '(anon)'} ${url}:${cf.lineNumber + 1}`;
    labels.set(id, l);
  }
  return l;
};
const stack = (id: number): number[] => {
  const out: number[] = [];
  for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) out.push(x);
  return out;
};

const { samples, timeDeltas: dt } = profile;
const self = new Map<string, number>();
const incl = new Map<string, number>();
let busy = 0;
let t = 0;
let first = -1;
let last = 0;
for (let i = 0; i < samples.length; i++) {
  t += dt[i] ?? 0;
  if (t < from || t > to) continue;
  if (first < 0) first = t;
  last = t;
  const id = samples[i] as number;
  const top = label(id);
  if (top.startsWith('(idle)') || top.startsWith('(program)')) continue;
  const frames = stack(id).map(label);
  if (under && !frames.some((f) => f.includes(under))) continue;
  const w = Math.min(dt[i + 1] ?? dt[i] ?? 0, CAP_US);
  busy += w;
  self.set(top, (self.get(top) ?? 0) + w);
  for (const f of new Set(frames)) incl.set(f, (incl.get(f) ?? 0) + w);
}
const pct = (v: number) => ((100 * v) / busy).toFixed(1).padStart(5);
console.log(`busy ${(busy / 1e6).toFixed(2)} s of a ${((last - first) / 1e6).toFixed(2)} s window${under ? ` (under ${under})` : ''}`);
console.log('--- self');
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, N)) console.log(pct(v), k);
console.log('--- inclusive (project code)');
for (const [k, v] of [...incl]
  .filter(([k]) => k.includes('src/'))
  .sort((a, b) => b[1] - a[1])
  .slice(0, N))
  console.log(pct(v), k);
