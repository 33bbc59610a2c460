/**
 * What a custom resource costs against a built-in kind (issue 14 bench): creates of a custom
 * resource whose schema has 20 fields and 3 validation rules, against creates of a ConfigMap of
 * the same size (20 data keys with the same values), in one server run, alternating over rounds;
 * creates/s and the server's CPU per create (all threads, /proc).
 *
 *   bun bench/crd.ts [--rounds=N] [--phase-ms=MS]
 */
import { startServer } from '../test/helpers/server';
import { load, serverCpuPerRequest, threadCpu, WRK } from './harness';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const ROUNDS = Number(arg('rounds') ?? 3);
const PHASE_MS = Number(arg('phase-ms') ?? 6000);

const FIELDS = 20;
const properties: Record<string, unknown> = {};
for (let i = 0; i < FIELDS; i++) properties[`f${i}`] = i % 2 ? { type: 'integer', minimum: 0 } : { type: 'string', maxLength: 64 };
const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'benches.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'benches', singular: 'bench', kind: 'Bench' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties,
                'x-kubernetes-validations': [
                  { rule: 'self.f1 <= 1000000' },
                  { rule: "self.f0.startsWith('value')" },
                  { rule: 'self.f3 >= self.f1' },
                ],
              },
            },
          },
        },
      },
    ],
  },
};
const spec: Record<string, unknown> = {};
const data: Record<string, string> = {};
for (let i = 0; i < FIELDS; i++) {
  spec[`f${i}`] = i % 2 ? i * 10 : `value-${i}`;
  data[`f${i}`] = String(spec[`f${i}`]);
}

const srv = await startServer({ args: ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0'] });
try {
  const auth = { authorization: `Bearer ${srv.token}`, 'content-type': 'application/json' };
  await srv.json('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
  for (let i = 0; i < 100 && (await srv.json('GET', '/apis/example.com/v1/namespaces/default/benches')).status !== 200; i++)
    await Bun.sleep(20);
  const bodies: Record<string, { url: string; body: (p: string) => string }> = {
    'custom resource': {
      url: `${srv.url}/apis/example.com/v1/namespaces/default/benches`,
      body: (p) => JSON.stringify({ apiVersion: 'example.com/v1', kind: 'Bench', metadata: { name: `${p}-{{i}}` }, spec }),
    },
    ConfigMap: {
      url: `${srv.url}/api/v1/namespaces/default/configmaps`,
      body: (p) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${p}-{{i}}` }, data }),
    },
  };
  const phase = async (which: string, prefix: string, ms: number) => {
    const b = bodies[which] as { url: string; body: (p: string) => string };
    const before = threadCpu(srv.proc.pid);
    const r = await load({ url: b.url, method: 'POST', headers: auth, ca: srv.ca, bodyTemplate: b.body(prefix), durationMs: ms });
    return { ops: r.ops, errors: r.errors, cpu: serverCpuPerRequest(before, srv.proc.pid, r.ok) };
  };
  console.log(
    `load generator: ${WRK ? 'wrk -t1 -c64' : 'bench/load.ts'}; ${ROUNDS} rounds of ${PHASE_MS} ms per kind after 2 s warm-up each`,
  );
  await phase('custom resource', 'warm', 2000);
  await phase('ConfigMap', 'warm', 2000);
  const cpu: Record<string, number[]> = { 'custom resource': [], ConfigMap: [] };
  const ops: Record<string, number[]> = { 'custom resource': [], ConfigMap: [] };
  for (let r = 1; r <= ROUNDS; r++) {
    for (const k of r % 2 ? ['custom resource', 'ConfigMap'] : ['ConfigMap', 'custom resource']) {
      const x = await phase(k, `r${r}`, PHASE_MS);
      cpu[k]?.push(x.cpu);
      ops[k]?.push(x.ops);
      console.log(`round ${r} ${k}: ${x.ops} creates/s (errors ${x.errors}), server CPU ${x.cpu.toFixed(1)} us/create`);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const c = median(cpu['custom resource'] as number[]);
  const m = median(cpu.ConfigMap as number[]);
  console.log(
    `median CPU per create: custom resource ${c.toFixed(1)} us, ConfigMap ${m.toFixed(1)} us: ratio ${(c / m).toFixed(2)} (target <= 1.5); ` +
      `creates/s ${median(ops['custom resource'] as number[])} vs ${median(ops.ConfigMap as number[])}`,
  );
} finally {
  await srv.stop();
}
