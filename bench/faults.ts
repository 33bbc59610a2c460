/**
 * Fault injection's cost per request when its faults do not match (issue 40 bench; targets:
 * ≤ 0.5 us added with none, ≤ 2 us with 20), in one run:
 *
 *   1. in process: the chain's fault step as src/http/server.ts runs it (`faults?.active ?
 *      faults.serve(...) : serve()`) for a GET of a ConfigMap, with the gate off (no Faults: the
 *      baseline), on with 0 FaultInjections, with 1 and with 20 that match other namespaces
 *      (indexed away) and 1 and 20 that match other users in every namespace (their rules are
 *      tried); ns per request over a batch, alternating rounds, the median;
 *   2. over HTTP: a real server (gate on) answering GETs of one ConfigMap with 0, 1 and 20
 *      non-matching FaultInjections (half of each kind), against one with the gate off: server CPU per request and
 *      throughput (noisier: the differences sought are a few us in ~100).
 *
 *     bun bench/faults.ts                                   (both parts, 5 s phases)
 *     FAULTS_PARTS=1 FAULTS_ROUNDS=3 bun bench/faults.ts     (in process only)
 *     FAULTS_PHASE_MS=1000 FAULTS_ROUNDS=1 bun bench/faults.ts   (a quick check)
 */
import type { Obj } from '../src/api/meta';
import { parseRequestInfo, requestUrl } from '../src/api/request-info';
import { setRequestUser } from '../src/auth/request-user';
import { compileFault } from '../src/faults/compile';
import { Faults } from '../src/faults/index';
import type { ApiRegistry } from '../src/registry/api-registry';
import { type Server, startServer } from '../test/helpers/server';
import { load, serverCpuPerRequest, threadCpu } from './harness';

const PARTS = new Set((process.env.FAULTS_PARTS ?? '1,2').split(','));
const ROUNDS = Number(process.env.FAULTS_ROUNDS ?? 5);
const PHASE_MS = Number(process.env.FAULTS_PHASE_MS ?? 5000);
const COUNTS = [0, 1, 20] as const;
/** Append `v` to the list under `k`. */
const push = (m: Record<string, number[]>, k: string, v: number): void => {
  const l = m[k];
  if (l) l.push(v);
  else m[k] = [v];
};
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/**
 * A FaultInjection that does not match the requests measured: on the configmaps of namespace
 * `ns-<i>` (`scoped`: the set indexes it under that namespace), or on configmaps in every
 * namespace for user `other-<i>` (`user`: each request looks at its rules).
 */
const faultObj = (i: number, kind: 'scoped' | 'user' = 'scoped'): Obj =>
  ({
    apiVersion: 'testing.svc.io/v1alpha1',
    kind: 'FaultInjection',
    metadata: { name: `bench-${i}`, uid: `uid-${i}`, generation: 1, creationTimestamp: new Date().toISOString() },
    spec: {
      match: [
        {
          subjects:
            kind === 'scoped'
              ? [{ kind: 'Group', group: { name: 'system:authenticated' } }]
              : [{ kind: 'User', user: { name: `other-${i}` } }],
          resourceRules: [{ verbs: ['*'], apiGroups: [''], resources: ['configmaps'], namespaces: [kind === 'scoped' ? `ns-${i}` : '*'] }],
        },
      ],
      probability: 0.5,
      seed: i,
      actions: [{ error: { code: 503 } }],
    },
  }) as Obj;

// 1. In process.
if (PARTS.has('1')) {
  const noApi = { lookup: () => undefined } as unknown as ApiRegistry;
  const make = (n: number, kind: 'scoped' | 'user') => {
    const f = new Faults({ api: noApi, metrics: { sources: [] }, revisions: () => ({ revision: 1, compacted: 0 }), log: () => {} });
    f.set.configure(Array.from({ length: n }, (_, i) => compileFault(faultObj(i, kind))));
    return f;
  };
  const variants: [string, Faults | undefined][] = [
    ['gate off', undefined],
    ...COUNTS.map((n) => [`${n} scoped`, make(n, 'scoped')] as [string, Faults]),
    ...COUNTS.filter((n) => n > 0).map((n) => [`${n} user`, make(n, 'user')] as [string, Faults]),
  ];
  const req = new Request('https://127.0.0.1/api/v1/namespaces/default/configmaps/cm-7');
  setRequestUser(req, { name: 'admin', uid: '', groups: ['system:masters', 'system:authenticated'] });
  const url = requestUrl(req.url);
  const info = parseRequestInfo('GET', url.pathname, url.searchParams);
  const answer = Promise.resolve(new Response('{}'));
  const serve = () => answer;
  const BATCH = 20_000;
  const pending: Promise<Response>[] = new Array(BATCH);
  const round = async (faults: Faults | undefined): Promise<number> => {
    const t0 = Bun.nanoseconds();
    for (let i = 0; i < BATCH; i++) pending[i] = faults?.active ? faults.serve(info, req, url, serve) : serve();
    await Promise.all(pending);
    return (Bun.nanoseconds() - t0) / BATCH;
  };
  for (const [, f] of variants) for (let i = 0; i < 20; i++) await round(f); // warm up
  const ns: Record<string, number[]> = {};
  for (let r = 0; r < ROUNDS * 20; r++) for (const [name, f] of variants) push(ns, name, await round(f));
  const base = med(ns['gate off'] as number[]);
  console.log(`1. the chain's fault step, in process (GET of a ConfigMap, ${ROUNDS * 20} rounds of ${BATCH}, median)`);
  console.log(`   gate off (baseline): ${base.toFixed(0)} ns/request (the handler's resolved answer, awaited)`);
  for (const [name] of variants.slice(1)) {
    const v = med(ns[name] as number[]);
    const n = Number.parseInt(name, 10);
    const target = n === 0 ? 500 : n === 20 ? 2000 : undefined;
    const what =
      n === 0 ? 'gate on, no FaultInjection' : name.endsWith('scoped') ? 'in other namespaces' : 'for other users, every namespace';
    console.log(
      `   ${String(n).padStart(2)} non-matching (${what}): ${v.toFixed(0)} ns/request, added ${(v - base).toFixed(0)} ns${target ? ` (target ≤ ${target} ns)` : ''}`,
    );
  }
}

// 2. Over HTTP.
if (PARTS.has('2')) {
  const FI = '/apis/testing.svc.io/v1alpha1/faultinjections';
  const GET = '/api/v1/namespaces/default/configmaps/cm-7';
  const off = await startServer({ args: [] });
  const on = await startServer({ args: ['--feature-gates=FaultInjection=true'] });
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm-7' }, data: { a: 'b' } };
  const faults = async (srv: Server, n: number) => {
    const have = ((await srv.json('GET', FI)).body.items as Obj[]).length;
    for (let i = have; i < n; i++) {
      const o = faultObj(i, i % 2 === 0 ? 'scoped' : 'user') as Obj & { metadata: Record<string, unknown> };
      const r = await srv.json('POST', FI, { ...o, metadata: { name: o.metadata.name } });
      if (r.status !== 201) throw new Error(`creating a FaultInjection: ${r.status} ${JSON.stringify(r.body)}`);
    }
    await Bun.sleep(200); // the watch cache delivers them
  };
  try {
    for (const s of [off, on]) await s.json('POST', '/api/v1/namespaces/default/configmaps', cm);
    const phase = async (srv: Server) => {
      const before = threadCpu(srv.proc.pid);
      const r = await load({
        url: `${srv.url}${GET}`,
        method: 'GET',
        headers: { authorization: `Bearer ${srv.token}` },
        concurrency: 32,
        durationMs: PHASE_MS,
        ca: srv.ca,
      });
      if (r.errors > 0) console.log(`   ${r.errors} errors ${JSON.stringify(r.codes)}`);
      return { cpu: serverCpuPerRequest(before, srv.proc.pid, r.ok), ops: r.ops };
    };
    const cpu: Record<string, number[]> = {};
    const ops: Record<string, number[]> = {};
    const record = (name: string, x: { cpu: number; ops: number }) => {
      push(cpu, name, x.cpu);
      push(ops, name, x.ops);
    };
    // The counts only grow (a phase per count, each after the gate-off baseline of its round).
    for (const n of COUNTS) {
      await faults(on, n);
      for (let r = 0; r < ROUNDS; r++) {
        record(`off/${n}`, await phase(off));
        record(`${n}`, await phase(on));
      }
    }
    console.log(`\n2. GET of one ConfigMap over HTTP, 32 connections, ${ROUNDS} alternating rounds of ${PHASE_MS} ms (median)`);
    for (const n of COUNTS) {
      const b = med(cpu[`off/${n}`] as number[]);
      const v = med(cpu[`${n}`] as number[]);
      console.log(
        `   ${String(n).padStart(2)} non-matching: ${med(ops[`${n}`] as number[])} req/s, server CPU ${v.toFixed(1)} us/request; gate off ${med(ops[`off/${n}`] as number[])} req/s, ${b.toFixed(1)} us/request; added ${(v - b).toFixed(1)} us`,
      );
    }
  } finally {
    await off.stop();
    await on.stop();
  }
}
