/**
 * The layering of src/, checked from the import lines of every non-test .ts file:
 *
 *   1. no import cycles between files (type-only imports count: they are design dependencies);
 *   2. imports point down: a top-level folder of src/ imports only folders on lower levels of
 *      LAYERS (folders on one level are independent: they do not import each other);
 *   3. the rules of FORBIDDEN hold (edges the order allows but the design does not).
 *
 * An exception is named import by import in ALLOWED, with why; an exception no longer used fails
 * the test too, so it is deleted when its import goes. `import`/`export ... from`, `import()` and
 * `new URL('./worker.ts', import.meta.url)` (a worker script) all count as imports.
 *
 *     bun test test/layering.test.ts
 */
import { expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The levels of src/, lowest first. Folders on one level may not import each other. */
const LAYERS: readonly (readonly string[])[] = [
  // The API's own types: ObjectMeta, Status and field errors, users, selectors, quantities, CIDRs;
  // wire formats below every encoding (protobuf's varints and fields).
  ['api', 'wire'],
  // Flags -> Config; one schema description per kind; the store (bytes and revisions only).
  ['config', 'schema', 'store'],
  // CEL; encodings (stored objects, the negotiated codecs, brand views, table helpers, list chunks).
  ['cel', 'codec'],
  // The watch cache: event history and fan-out over the store.
  ['watch'],
  // CRUD written once over storage; the admission chain's contract; CRDs, apply, patches.
  ['registry'],
  // Authentication, authorization, RBAC; the built-in kinds (strategies, validation, columns).
  ['auth', 'kinds'],
  // Worker pools (the generic pool, the codec pool).
  ['workers'],
  // Admission plugins (quota, limits, policies, RBAC escalation); priority and fairness; the scheduler; simulated nodes and
  // kubelets; aggregated APIs (the proxy to APIServices' backends, their availability).
  ['admission', 'apf', 'scheduler', 'simulation', 'aggregation'],
  // Fault injection (matches requests as priority and fairness does; the front end applies it).
  ['faults'],
  // Controllers; the HTTP front (request chain, negotiation, handlers).
  ['controllers', 'http'],
  // The dashboard (/ui): reads the front end's metrics and the lower layers' counters; main mounts it.
  ['ui'],
  // The load harness (scenarios, measurements, reports): a client of the API; nothing in the server imports it.
  ['load'],
  // The composition root: nothing imports it.
  ['main.ts'],
];

/** Imports the order allows but the design does not. */
const FORBIDDEN: readonly { from: string; to: readonly string[]; why: string }[] = [
  {
    from: 'http',
    to: ['store', 'watch'],
    why: 'the registry hands storage (the watch cache included) to the HTTP layer; http reaches neither itself (issue 33 item 3)',
  },
];

/** Exceptions, each one import (paths under src/), with why. None today: add one only with a reason. */
const ALLOWED: readonly { from: string; to: string; why: string }[] = [];

const SRC = path.resolve(import.meta.dir, '..', 'src');

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) sourceFiles(p, out);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

/** Statement-leading imports and re-exports (multi-line ones too), import(), and worker scripts. */
const IMPORTS = [
  /^[ \t]*import\s+(?:type\s+)?[^;'"]*?\bfrom\s*['"]([^'"]+)['"]/gm,
  /^[ \t]*import\s*['"]([^'"]+)['"]/gm,
  /^[ \t]*export\s+(?:type\s+)?(?:\*(?:\s+as\s+\w+)?|\{[^}]*\})\s*from\s*['"]([^'"]+)['"]/gm,
  /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
  /\bnew\s+URL\(\s*['"]([^'"]+)['"]\s*,\s*import\.meta\.url\s*\)/g,
];

/** The src/ file a relative specifier names (undefined for packages and node: modules). */
function resolve(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(from), spec);
  for (const p of [base, `${base}.ts`, path.join(base, 'index.ts')]) if (fs.existsSync(p) && fs.statSync(p).isFile()) return p;
  throw new Error(`${rel(from)}: cannot resolve import '${spec}'`);
}

const rel = (p: string): string => path.relative(SRC, p).split(path.sep).join('/');
/** The top-level folder (or file) of src/ a file belongs to. */
const unitOf = (file: string): string => rel(file).split('/')[0] as string;

/** Every file's imports of other src/ files (rel paths), read once. */
function importGraph(): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const f of sourceFiles(SRC)) {
    const text = fs.readFileSync(f, 'utf8');
    const to = new Set<string>();
    for (const re of IMPORTS) {
      for (const m of text.matchAll(re)) {
        const r = resolve(f, m[1] as string);
        if (r?.endsWith('.ts')) to.add(rel(r));
      }
    }
    g.set(rel(f), [...to].sort());
  }
  return g;
}

const graph = importGraph();
const levelOf = new Map<string, number>();
LAYERS.forEach((level, i) => {
  for (const u of level) levelOf.set(u, i);
});
const allowed = (from: string, to: string) => ALLOWED.find((a) => a.from === from && a.to === to);
const used = new Set<(typeof ALLOWED)[number]>();

test('LAYERS names every top-level folder and file of src/, each once', () => {
  const units = new Set([...graph.keys()].map((f) => unitOf(path.join(SRC, f))));
  const listed = LAYERS.flat();
  expect(listed.filter((u, i) => listed.indexOf(u) !== i)).toEqual([]);
  expect([...units].filter((u) => !levelOf.has(u)).map((u) => `src/${u} is in no level of LAYERS`)).toEqual([]);
});

test('no import cycles between files', () => {
  // Tarjan's strongly connected components; each component of more than one file holds a cycle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) cycles.push(describeCycle(new Set(component)));
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  expect(cycles).toEqual([]);
});

/** One cycle through a strongly connected set of files, as `a.ts -> b.ts -> a.ts` (plus the set's other files). */
function describeCycle(files: Set<string>): string {
  const start = [...files].sort()[0] as string;
  const path: string[] = [start];
  const seen = new Set([start]);
  let at = start;
  for (;;) {
    const to = (graph.get(at) ?? []).filter((f) => files.has(f));
    const back = to.find((f) => f === start);
    if (back !== undefined && path.length > 1) break;
    const step = to.find((f) => !seen.has(f)) ?? back;
    if (step === undefined || step === start) break;
    path.push(step);
    seen.add(step);
    at = step;
  }
  const others = [...files].filter((f) => !seen.has(f));
  return `import cycle: src/${[...path, start].join(' -> src/')}${others.length ? ` (with ${others.map((f) => `src/${f}`).join(', ')})` : ''}`;
}

test('imports point down the levels of LAYERS, and FORBIDDEN holds', () => {
  const wrong: string[] = [];
  for (const [from, tos] of graph) {
    const a = unitOf(path.join(SRC, from));
    for (const to of tos) {
      const b = unitOf(path.join(SRC, to));
      if (a === b) continue;
      const la = levelOf.get(a);
      const lb = levelOf.get(b);
      if (la === undefined || lb === undefined) continue; // reported by the first test
      const rule =
        la < lb
          ? `${a} (level ${la}) is below ${b} (level ${lb})`
          : la === lb
            ? `${a} and ${b} are on one level (${la}) and may not import each other`
            : FORBIDDEN.find((f) => f.from === a && f.to.includes(b))?.why;
      if (rule === undefined) continue;
      const ok = allowed(from, to);
      if (ok) {
        used.add(ok);
        continue;
      }
      wrong.push(`src/${from} imports src/${to}: ${rule}`);
    }
  }
  expect(wrong).toEqual([]);
  // An exception whose import is gone is deleted with it.
  expect(ALLOWED.filter((a) => !used.has(a)).map((a) => `ALLOWED ${a.from} -> ${a.to} is no longer imported: delete it`)).toEqual([]);
});
