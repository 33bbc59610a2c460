/**
 * What admission adds to a pod create (issue 16 bench): creates of a small Pod into a namespace
 * with a LimitRange (defaults, max, ratio) and a ResourceQuota against a namespace without, alternating, in one server
 * run, and the pod LimitRanger makes sent as it is into the namespace without (what the larger
 * object costs by itself); the server's CPU per create (all threads, /proc). The quota
 * reserves each create's usage with a write of its status.
 *
 * A fourth phase sends the defaulted pod into a namespace with the ResourceQuota alone.
 *
 *   bun bench/admission.ts [--rounds=N] [--phase-ms=MS] [--only=with-lr,plain,...]
 */
import { startServer } from '../test/helpers/server';
import { BENCH_LIMIT_RANGE_SPEC } from './fixtures';
import { load, serverCpuPerRequest, threadCpu, WRK } from './harness';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const ROUNDS = Number(arg('rounds') ?? 3);
const PHASE_MS = Number(arg('phase-ms') ?? 8000);
/** Only these phases (comma-separated), e.g. for a CPU profile of one of them. */
const ONLY = arg('only')?.split(',');

// Compaction every 10 s: the pods of a phase are deleted after it, and their history then goes
// too, so every phase starts from about the same heap (otherwise ~1M pods pile up over the run and
// the major collections of the growing heap land on whichever phase runs into them).
const srv = await startServer({
  args: ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0', '--etcd-compaction-interval=10s'],
});
try {
  const auth = { authorization: `Bearer ${srv.token}`, 'content-type': 'application/json' };
  for (const ns of ['with-lr', 'plain', 'with-quota']) await srv.json('POST', '/api/v1/namespaces', { metadata: { name: ns } });
  await srv.json('POST', '/api/v1/namespaces/with-lr/limitranges', {
    metadata: { name: 'limits' },
    spec: BENCH_LIMIT_RANGE_SPEC,
  });
  // And a ResourceQuota there (large enough never to refuse): each create reserves its usage.
  await srv.json('POST', '/api/v1/namespaces/with-lr/resourcequotas', {
    metadata: { name: 'quota' },
    spec: { hard: { pods: '1000000', 'requests.cpu': '100000', 'limits.memory': '100Ti' } },
  });
  // The same quota alone in a third namespace: the defaulted pod sent there against the plain
  // namespace separates what the quota adds from what the LimitRange adds.
  await srv.json('POST', '/api/v1/namespaces/with-quota/resourcequotas', {
    metadata: { name: 'quota' },
    spec: { hard: { pods: '1000000', 'requests.cpu': '100000', 'limits.memory': '100Ti' } },
  });
  for (const ns of ['with-lr', 'with-quota']) {
    for (let i = 0; i < 100; i++) {
      const q = await srv.json('GET', `/api/v1/namespaces/${ns}/resourcequotas/quota`);
      if (q.body.status?.used) break;
      await Bun.sleep(50);
    }
  }
  const pod = (prefix: string) =>
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `${prefix}-{{i}}` },
      spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] },
    });
  // The object LimitRanger makes of that pod, sent as it is into the plain namespace: separates the
  // cost of admission from the cost of a larger object (resources, the annotation).
  const defaulted = (prefix: string) =>
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${prefix}-{{i}}`,
        annotations: {
          'kubernetes.io/limit-ranger':
            'LimitRanger plugin set: cpu, memory request for container web; cpu, memory limit for container web',
        },
      },
      spec: {
        containers: [
          {
            name: 'web',
            image: 'nginx:1.25',
            resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '256Mi' } },
          },
        ],
      },
    });
  const phase = async (which: string, prefix: string, ms: number) => {
    if (ONLY && !ONLY.includes(which)) return { ops: 0, errors: 0, cpu: Number.NaN };
    const ns = which === 'with-lr' ? 'with-lr' : which === 'quota-same-object' ? 'with-quota' : 'plain';
    const body = which === 'plain-same-object' || which === 'quota-same-object' ? defaulted(prefix) : pod(prefix);
    const spec = {
      url: `${srv.url}/api/v1/namespaces/${ns}/pods`,
      method: 'POST',
      headers: auth,
      ca: srv.ca,
      bodyTemplate: body,
      durationMs: ms,
    };
    const before = threadCpu(srv.proc.pid);
    const r = await load(spec);
    const cpu = serverCpuPerRequest(before, srv.proc.pid, r.ok);
    // The phase's pods go (not measured), then a compaction; the quota controller recomputes the
    // namespace after the deletes: all of it here, between phases, not inside the next one.
    await srv.json('DELETE', `/api/v1/namespaces/${ns}/pods`, { gracePeriodSeconds: 0 });
    await Bun.sleep(12_000);
    return { ops: r.ops, errors: r.errors, cpu };
  };
  console.log(
    `load generator: ${WRK ? 'wrk -t1 -c64' : 'bench/load.ts'}; ${ROUNDS} rounds of ${PHASE_MS} ms per namespace after 2 s warm-up each`,
  );
  await phase('with-lr', 'warm', 2000);
  await phase('plain', 'warm', 2000);
  await phase('plain-same-object', 'warm2', 2000);
  await phase('quota-same-object', 'warm2', 2000);
  const cpu: Record<string, number[]> = { 'with-lr': [], plain: [], 'plain-same-object': [], 'quota-same-object': [] };
  const order = ['with-lr', 'plain', 'plain-same-object', 'quota-same-object'];
  for (let r = 1; r <= ROUNDS; r++) {
    for (const ns of r % 2 ? order : [...order].reverse()) {
      const x = await phase(ns, `r${r}-${ns}`, PHASE_MS);
      if (Number.isNaN(x.cpu)) continue;
      cpu[ns]?.push(x.cpu);
      console.log(`round ${r} ${ns}: ${x.ops} creates/s (errors ${x.errors}), server CPU ${x.cpu.toFixed(1)} us/create`);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
  const a = median(cpu['with-lr'] as number[]);
  const b = median(cpu.plain as number[]);
  const c = median(cpu['plain-same-object'] as number[]);
  const d = median(cpu['quota-same-object'] as number[]);
  console.log(
    `median CPU per create: with LimitRange and ResourceQuota ${a.toFixed(1)} us, without ${b.toFixed(1)} us (added ${(a - b).toFixed(1)} us); ` +
      `the defaulted object without admission ${c.toFixed(1)} us (admission itself ${(a - c).toFixed(1)} us); ` +
      `that object into a namespace with the ResourceQuota only ${d.toFixed(1)} us (the quota adds ${(d - c).toFixed(1)} us)`,
  );
} finally {
  await srv.stop();
}
