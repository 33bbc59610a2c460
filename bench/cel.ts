/**
 * CEL evaluation rates inline (issue 12 bench): typical admission expressions through
 * src/cel (compile once, evaluate per call, JSON activation converted per call), with a baseline
 * of the same check written in plain TypeScript. The pool round trip is the worker-pool helper's.
 * Each expression also on an activation already in CEL form, with and without the runtime cost
 * tracker (src/cel/cost.ts; admission policies and CRD rules evaluate this way): what counting
 * the cost adds.
 *
 *     bun bench/cel.ts
 */

import { Bench } from 'tinybench';
import { PER_CALL_LIMIT } from '../src/cel/budget.ts';
import { celEnv, compile, costedExecutable, evaluate, executable, type Program, toCel } from '../src/cel/index.ts';

const env = celEnv({ object: 'dyn' });

function program(expr: string): Program {
  const c = compile(expr, env);
  if (!c.ok) throw new Error(c.errors.join('; '));
  return c.program;
}

const small = { object: { spec: { replicas: 3 } } };
const containers = Array.from({ length: 100 }, (_, i) => ({ name: `c${i}`, image: `registry.example/app-${i}:1.0` }));
const big = { object: { spec: { containers } } };
const named = { object: { metadata: { name: 'web-frontend-7f9c' } } };
const withLimit = { object: { spec: { resources: { limits: { memory: '256Mi' } } } } };
const data = { object: { data: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, `v${i}`])) } };

const cases: [string, Program, Record<string, unknown>][] = [
  ['object.spec.replicas <= 5', program('object.spec.replicas <= 5'), small],
  ['all() over 100 containers', program("object.spec.containers.all(c, c.image.startsWith('registry.example/'))"), big],
  ['regex matches', program("object.metadata.name.matches('^[a-z]+(-[a-z0-9]+)*$')"), named],
  ['quantity comparison', program("quantity(object.spec.resources.limits.memory).isLessThan(quantity('1Gi'))"), withLimit],
  // A policy's nested comprehension (test/admission-policy-pool.test.ts): 10,000 visits.
  ['distinct values of 100 keys', program('object.data.all(k, !object.data.exists(j, j != k && object.data[j] == object.data[k]))'), data],
];

const bench = new Bench({ time: 1000 });
bench.add('baseline: plain TS replicas <= 5', () => {
  if (!((small.object.spec.replicas as number) <= 5)) throw new Error('unexpected');
});
for (const [name, p, act] of cases) {
  const check = evaluate(p, act);
  if (!check.ok || check.value !== true) throw new Error(`${name}: ${JSON.stringify(check)}`);
  bench.add(name, () => {
    evaluate(p, act);
  });
  const celAct = toCel(act) as Record<string, unknown>;
  const plain = executable(p);
  const costed = costedExecutable(p);
  bench.add(`  ${name}: CEL activation, no cost tracking`, () => {
    plain(celAct);
  });
  bench.add(`  ${name}: CEL activation, cost tracked`, () => {
    costed.run(celAct, PER_CALL_LIMIT);
  });
}

const cpu0 = process.cpuUsage();
await bench.run();
const cpu = process.cpuUsage(cpu0);
function opsPerSecond(i: number): number {
  const r = bench.tasks[i]?.result;
  return r && 'throughput' in r ? r.throughput.mean : 0;
}
const base = opsPerSecond(0);
console.log(`cpu user+sys ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms over the run`);
bench.tasks.forEach((t, i) => {
  const hz = opsPerSecond(i);
  console.log(
    `${t.name.padEnd(72)} ${hz.toFixed(0).padStart(10)} ops/s  ${(1e6 / hz).toFixed(2).padStart(8)} us/op  x${(base / hz).toFixed(0)} baseline`,
  );
});
