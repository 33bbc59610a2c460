/**
 * The CEL worker pool against inline evaluation (issue 12 item 4 bench), in one run:
 *
 * 1. the message protocol: structured clone (what postMessage does) against msgpackr
 *    pack + unpack, on real activations in CEL form (a small Deployment; a Pod with 100
 *    containers)
 * 2. per expression (the admission ones of bench/cel.ts): inline us/op; pool round trip, one at a
 *    time (latency) and 64 in flight (throughput, us of wall time per evaluation on 2 cores)
 * 3. the break-even: the inline cost above which sending the evaluation to the pool costs the
 *    request thread less (the request thread pays clone + post + wake-up instead of the
 *    evaluation)
 *
 *     bun bench/cel-pool.ts
 */
import { Packr } from 'msgpackr';
import { Bench } from 'tinybench';
import { CelPool } from '../src/admission/policy/cel-pool';
import { celEnv, compile, evaluate, type Program, toCel } from '../src/cel/index';

const env = celEnv({ object: 'dyn' });
const vars = { object: 'dyn' };
function program(expr: string): Program {
  const c = compile(expr, env);
  if (!c.ok) throw new Error(c.errors.join('; '));
  return c.program;
}

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default', labels: { app: 'web' }, uid: 'u', generation: 1 },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'nginx:1.25', ports: [{ containerPort: 80 }] }] },
    },
  },
};
const containers = Array.from({ length: 100 }, (_, i) => ({
  name: `c${i}`,
  image: `registry.example/app-${i}:1.0`,
  resources: { limits: { cpu: '500m', memory: '256Mi' } },
  ports: [{ containerPort: 8000 + i }],
}));
const bigPod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'big', namespace: 'default' }, spec: { containers } };

// 1. Protocol.
const packr = new Packr({ useRecords: false, largeBigIntToFloat: false });
const proto = new Bench({ time: 800 });
for (const [name, obj] of [
  ['Deployment', deployment],
  ['Pod, 100 containers', bigPod],
] as const) {
  const act = { object: toCel(obj), oldObject: null };
  proto.add(`structuredClone ${name}`, () => {
    structuredClone(act);
  });
  proto.add(`msgpackr pack+unpack ${name}`, () => {
    packr.unpack(packr.pack(act));
  });
}
await proto.run();
const us = (t: { result?: unknown }) => {
  const r = t.result as { latency?: { mean: number } } | undefined;
  return (r?.latency?.mean ?? Number.NaN) * 1000;
};
console.log('message protocol (us per activation, encode + decode):');
for (const t of proto.tasks) console.log(`  ${t.name.padEnd(40)} ${us(t).toFixed(2)} us`);

// 2. Inline against the pool.
const cases: [string, string, Record<string, unknown>][] = [
  ['object.spec.replicas <= 5', 'object.spec.replicas <= 5', { object: deployment }],
  ['all() over 100 containers', "object.spec.containers.all(c, c.image.startsWith('registry.example/'))", { object: bigPod }],
  ['regex matches', "object.metadata.name.matches('^[a-z]+(-[a-z0-9]+)*$')", { object: deployment }],
  [
    'quantity comparison',
    "object.spec.containers.all(c, quantity(c.resources.limits.memory).isLessThan(quantity('1Gi')))",
    { object: bigPod },
  ],
];
const inline = new Bench({ time: 800 });
for (const [name, expr, act] of cases) {
  const p = program(expr);
  inline.add(name, () => {
    evaluate(p, act);
  });
}
await inline.run();

const pool = new CelPool({ size: 1, deadlineMs: 5000 });
await pool.ready();
const rows: { name: string; inline: number; latency: number; throughput: number; mainCpu: number }[] = [];
for (const [i, [name, expr, act]] of cases.entries()) {
  for (let w = 0; w < 200; w++) await pool.evaluate(expr, vars, act);
  // Latency: one at a time.
  const n1 = 2000;
  let t0 = performance.now();
  for (let k = 0; k < n1; k++) await pool.evaluate(expr, vars, act);
  const latency = ((performance.now() - t0) / n1) * 1000;
  // Throughput: 64 in flight; and the request thread's own CPU per evaluation.
  const n2 = 20000;
  const cpu0 = process.threadCpuUsage ? process.threadCpuUsage() : process.cpuUsage();
  t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < n2) {
        next++;
        await pool.evaluate(expr, vars, act);
      }
    }),
  );
  const wall = ((performance.now() - t0) / n2) * 1000;
  const cpu1 = process.threadCpuUsage ? process.threadCpuUsage(cpu0) : process.cpuUsage(cpu0);
  const mainCpu = (cpu1.user + cpu1.system) / n2;
  rows.push({ name, inline: us(inline.tasks[i] as { result?: unknown }), latency, throughput: wall, mainCpu });
}
pool.close();
console.log(
  '\nper evaluation (us): inline | pool latency (1 in flight) | pool wall time (64 in flight, 1 worker) | request-thread CPU with the pool',
);
for (const r of rows) {
  console.log(
    `  ${r.name.padEnd(30)} ${r.inline.toFixed(2).padStart(8)} | ${r.latency.toFixed(1).padStart(8)} | ${r.throughput.toFixed(1).padStart(8)} | ${r.mainCpu.toFixed(1).padStart(8)}`,
  );
}
const overhead = rows.map((r) => r.mainCpu).sort((a, b) => a - b)[Math.floor(rows.length / 2)] as number;
console.log(
  `\nbreak-even: the pool costs the request thread ~${overhead.toFixed(1)} us per evaluation (median over the cases); ` +
    'an evaluation whose inline cost is below that is cheaper inline.',
);
