/**
 * bench/api.ts --quick before and after a change, in one run (issue 33's bench):
 *
 *   bun bench/ab-api.ts <before-rev> [--rounds=N] [--script=bench/pod-create.ts]
 *
 * (--script: run that bench instead, copied into the old tree too, so a bench written with the
 * change measures the code before it; its figures are the `FIGURES_OF` entry of the script.)
 *
 * checks <before-rev> out into a temporary git worktree (sharing this tree's node_modules), then
 * runs `bun bench/api.ts --quick` in it and in this tree, alternating, N rounds (default 2), and
 * prints each figure's median per tree and the ratio after/before. Alternating rounds see the same
 * machine conditions, so a ratio is meaningful where a single run's figure is ±20%.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(import.meta.dir, '..');
const BEFORE = process.argv[2];
const ROUNDS = Number(process.argv.find((a) => a.startsWith('--rounds='))?.split('=')[1] ?? 2);
const SCRIPT = process.argv.find((a) => a.startsWith('--script='))?.split('=')[1] ?? 'bench/api.ts';
if (!BEFORE || BEFORE.startsWith('--')) {
  console.error('usage: bun bench/ab-api.ts <before-rev> [--rounds=N]');
  process.exit(2);
}

/** The figures compared: name → pattern of api.ts's report line (first group: the number). */
const API_FIGURES: [string, RegExp][] = [
  ['GET req/s', /^server GET configmap .*?: (\d+) req\/s/m],
  ['GET server CPU us/req', /^GET CPU per request: server ([\d.]+) us/m],
  ['create req/s', /^server create 1 KB configmap .*?: (\d+) req\/s/m],
  ['create server CPU us/req', /^create CPU per request: server ([\d.]+) us/m],
  ['SMP req/s', /^server strategic merge patch .*?: (\d+) req\/s/m],
  ['SMP server CPU us/req', /^strategic merge patch CPU per request: server ([\d.]+) us/m],
  ['apply req/s', /^server apply patch .*?: (\d+) req\/s/m],
  ['apply server CPU us/req', /^apply patch CPU per request: server ([\d.]+) us/m],
  ['LIST 10k full ms', /^LIST 10000 pods \(full.*?median (\d+) ms/m],
  ['LIST 10k page ms', /^LIST 10000 pods, page of 500: median ([\d.]+) ms/m],
];
/** Each script's figures (it prints one line per figure per round; the medians are compared). */
const FIGURES_OF: Record<string, [string, RegExp][]> = {
  'bench/api.ts': API_FIGURES,
  'bench/apply-fn.ts': [['apply() CPU us/op', /^apply\(\): ([\d.]+) us CPU per apply/gm]],
  'bench/managed-fields.ts': [
    ['managedFields create us/write', /^managedFields create \/ status 1 \/ status 2: ([\d.]+) \//gm],
    ['managedFields status 1 us/write', /^managedFields create \/ status 1 \/ status 2: [\d.]+ \/ ([\d.]+) \//gm],
    ['managedFields status 2 us/write', /^managedFields create \/ status 1 \/ status 2: [\d.]+ \/ [\d.]+ \/ ([\d.]+) us/gm],
  ],
  'bench/pod-create.ts': [
    ['pod create CPU us/op', /^pod create: ([\d.]+) us CPU\/op/gm],
    ['pod create ops/s', /^pod create: [\d.]+ us CPU\/op, (\d+) ops\/s/gm],
    ['pod LIST ms', /^pod LIST \d+: median ([\d.]+) ms/gm],
  ],
};
const FIGURES = FIGURES_OF[SCRIPT];
if (!FIGURES) {
  console.error(`no figures known for ${SCRIPT}: one of ${Object.keys(FIGURES_OF).join(', ')}`);
  process.exit(2);
}

function run(cwd: string): Record<string, number[]> {
  const args = SCRIPT === 'bench/api.ts' ? ['--quick'] : [];
  const p = Bun.spawnSync(['bun', SCRIPT, ...args], { cwd, stdout: 'pipe', stderr: 'pipe', env: process.env });
  const out = p.stdout.toString();
  if (p.exitCode !== 0) throw new Error(`${SCRIPT} in ${cwd} failed (${p.exitCode}): ${p.stderr.toString().slice(-2000)}`);
  const got: Record<string, number[]> = {};
  for (const [name, re] of FIGURES as [string, RegExp][]) {
    const all = re.global ? [...out.matchAll(re)] : [re.exec(out)].filter((m): m is RegExpExecArray => m !== null);
    if (all.length > 0) got[name] = all.map((m) => Number(m[1]));
  }
  return got;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? Number.NaN : n % 2 ? (s[(n - 1) / 2] as number) : ((s[n / 2 - 1] as number) + (s[n / 2] as number)) / 2;
};

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ab-'));
const tree = path.join(dir, 'before');
const git = (...args: string[]) => Bun.spawnSync(['git', ...args], { cwd: ROOT });
if (git('worktree', 'add', '--detach', tree, BEFORE).exitCode !== 0) throw new Error(`cannot check out ${BEFORE}`);
fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(tree, 'node_modules'));
if (SCRIPT !== 'bench/api.ts') fs.copyFileSync(path.join(ROOT, SCRIPT), path.join(tree, SCRIPT));
const results: Record<'before' | 'after', Record<string, number[]>[]> = { before: [], after: [] };
try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [which, cwd] of [
      ['before', tree],
      ['after', ROOT],
    ] as const) {
      const r = run(cwd);
      results[which].push(r);
      console.log(`round ${round} ${which}: ${JSON.stringify(r)}`);
    }
  }
} finally {
  git('worktree', 'remove', '--force', tree);
  fs.rmSync(dir, { recursive: true, force: true });
}
console.log(`\n| figure | before (${BEFORE}) | after | after/before |\n|---|---:|---:|---:|`);
for (const [name] of FIGURES) {
  const b = median(results.before.flatMap((r) => r[name] ?? []));
  const a = median(results.after.flatMap((r) => r[name] ?? []));
  console.log(`| ${name} | ${b} | ${a} | ${(a / b).toFixed(2)} |`);
}
