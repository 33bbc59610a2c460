/**
 * API Priority and Fairness (issue 10 bench).
 *
 * 1. What the filter adds to a request, inline: FlowControl.serve() around a no-op handler for a
 *    user classified to global-default (the longest walk through the bootstrap schemas, a
 *    QueueSet dispatch, metrics), for an exempt admin, against calling the handler directly.
 * 2. CPU per GET on the real server with APF on and off (two servers, same run, phases
 *    alternated), for a non-exempt user (global-default).
 * 3. A flood: one user LISTs (100 objects) with 10× the server's seats in concurrent requests
 *    while another user GETs one object; the quiet user's p99 under the flood over its unloaded
 *    p99, with APF on and off; how the flood was answered (200 / 429 / other) and the server's
 *    RSS. The server shares 12 seats (--max-requests-inflight=8 --max-mutating-requests-inflight=4).
 * 4. The floor of part 3: the same flood against a bare Bun.serve that only holds the flood to 12
 *    seats (and to 1) with a queue (bench/apf-floor.ts): the quiet user's p99 ratio no in-process
 *    APF on this runtime and machine can beat.
 *
 *     bun bench/apf.ts
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Bench } from 'tinybench';
import { bootstrapConfig } from '../src/apf/bootstrap-config';
import { FlowControl } from '../src/apf/flow-control';
import { parseRequestInfo } from '../src/api/request-info';
import { type Server, startServer } from '../test/helpers/server';
import { type LoadResult, load, rssMiB, serverCpuPerRequest, threadCpu } from './harness';

const PHASE_MS = Number(process.env.PHASE_MS ?? 6000);
/** Which parts to run (APF_PARTS=1,3); all by default. */
const PARTS = new Set((process.env.APF_PARTS ?? '1,2,3,4').split(','));

// 1. Inline cost.
if (PARTS.has('1')) {
  const fc = new FlowControl({ serverConcurrencyLimit: 600, requestWaitLimitMs: 15_000 });
  const cfg = bootstrapConfig();
  const uid = (o: { metadata: { name?: string; uid?: string } }) => {
    o.metadata.uid = `uid-${o.metadata.name}`;
    return o;
  };
  fc.configure(
    [...cfg.mandatory.flowSchemas, ...cfg.suggested.flowSchemas].map(uid),
    [...cfg.mandatory.priorityLevels, ...cfg.suggested.priorityLevels].map(uid),
  );
  const info = parseRequestInfo('GET', '/api/v1/namespaces/default/configmaps/x', new URLSearchParams());
  const q = new URLSearchParams();
  const alice = { name: 'alice', uid: '', groups: ['devs', 'system:authenticated'] };
  const admin = { name: 'admin', uid: '', groups: ['system:masters', 'system:authenticated'] };
  const res = new Response('{}');
  const handler = async () => res;
  const bench = new Bench({ time: 1500 });
  bench.add('baseline: the handler called directly', async () => {
    await handler();
  });
  bench.add('APF: global-default user (classify, queue set, metrics, headers)', async () => {
    await fc.serve(alice, info, q, undefined, handler);
  });
  bench.add('APF: exempt admin', async () => {
    await fc.serve(admin, info, q, undefined, handler);
  });
  await bench.run();
  const mean = bench.tasks.map((t) => ((t.result as { latency?: { mean: number } })?.latency?.mean ?? Number.NaN) * 1000);
  console.log('\n1. inline cost per request');
  for (const [i, t] of bench.tasks.entries()) {
    const added = i > 0 ? `  (+${((mean[i] as number) - (mean[0] as number)).toFixed(3)} us)` : '';
    console.log(`   ${t.name.padEnd(66)} ${(mean[i] as number).toFixed(3)} us${added}`);
  }
}

// A user from --token-auth-file with read access, for requests that are not exempt.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-apf-'));
const tokenFile = path.join(dir, 'tokens.csv');
fs.writeFileSync(tokenFile, 'quiet-token,quiet,uid-q,"devs"\nflood-token,flood,uid-f,"devs"\n');

async function prepare(srv: Server): Promise<void> {
  await srv.json('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'bench-view' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: [
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'devs' },
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:serviceaccounts' },
    ],
  });
  await srv.json('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'quiet' } });
  for (let i = 0; i < 100; i++) {
    await srv.json('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: `cm-${i}` }, data: { v: 'x'.repeat(200) } });
  }
  // The binding reaches the authorizer within a second.
  for (let i = 0; i < 100; i++) {
    const r = await srv.fetch('/api/v1/namespaces/default/configmaps/cm-0', { token: 'quiet-token' });
    await r.arrayBuffer();
    if (r.status === 200) break;
    await Bun.sleep(20);
  }
}

// Clients wait out a 429's Retry-After, as client-go does.
const phase = (srv: { url: string; ca: string }, token: string, p: string, concurrency: number, durationMs = PHASE_MS) =>
  load({
    url: `${srv.url}${p}`,
    method: 'GET',
    headers: { authorization: `Bearer ${token}` },
    concurrency,
    durationMs,
    ca: srv.ca,
    retryAfter: true,
  });

// 2. CPU per GET, on and off.
if (PARTS.has('2')) {
  const on = await startServer({ args: [`--token-auth-file=${tokenFile}`] });
  const off = await startServer({ args: [`--token-auth-file=${tokenFile}`, '--enable-priority-and-fairness=false'] });
  try {
    await prepare(on);
    await prepare(off);
    const GET = '/api/v1/namespaces/default/configmaps/cm-7';
    const cpu: Record<string, number[]> = { on: [], off: [] };
    const ops: Record<string, number[]> = { on: [], off: [] };
    for (let round = 0; round < 3; round++) {
      for (const [name, srv] of [
        ['off', off],
        ['on', on],
      ] as const) {
        const before = threadCpu(srv.proc.pid);
        const r = await phase(srv, 'quiet-token', GET, 32);
        cpu[name]?.push(serverCpuPerRequest(before, srv.proc.pid, r.ok));
        ops[name]?.push(r.ops);
        if (r.errors > 0) console.log(`   ${name}: ${r.errors} errors ${JSON.stringify(r.codes)}`);
      }
    }
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    console.log('\n2. GET of one ConfigMap by a global-default user, 32 connections, 3 alternating rounds (median)');
    console.log(`   APF off: ${med(ops.off as number[])} req/s, server CPU ${med(cpu.off as number[]).toFixed(1)} us/request`);
    console.log(`   APF on:  ${med(ops.on as number[])} req/s, server CPU ${med(cpu.on as number[]).toFixed(1)} us/request`);
    console.log(
      `   added: ${(med(cpu.on as number[]) - med(cpu.off as number[])).toFixed(1)} us/request (rounds: on ${cpu.on?.map((x) => x.toFixed(1)).join(', ')}; off ${cpu.off?.map((x) => x.toFixed(1)).join(', ')})`,
    );
  } finally {
    await on.stop();
    await off.stop();
  }
}

// 3. The flood.
if (PARTS.has('3')) {
  const SEATS = 12;
  const FLOOD = Number(process.env.FLOOD_CONNS ?? SEATS * 10);
  const report = (what: string, r: LoadResult) =>
    `${what}: ${r.ops} ok/s, p50 ${r.p50} ms, p99 ${r.p99} ms, answers ${JSON.stringify({ ok: r.ok, ...r.codes })}`;
  // QUIET=sa: the quiet client is a service account (workload-low), not a second person
  // (global-default, the flood's level).
  const quietSa = process.env.QUIET === 'sa';
  console.log(
    `\n3. flood: LISTs of 100 ConfigMaps with ${FLOOD} connections (the server has ${SEATS} seats) while ${quietSa ? 'a service account (workload-low)' : 'another user (global-default)'} GETs`,
  );
  for (const apf of [true, false]) {
    const srv = await startServer({
      args: [
        `--token-auth-file=${tokenFile}`,
        '--max-requests-inflight=8',
        '--max-mutating-requests-inflight=4',
        `--enable-priority-and-fairness=${apf}`,
      ],
    });
    try {
      await prepare(srv);
      const GET = '/api/v1/namespaces/default/configmaps/cm-7';
      const quietToken = quietSa
        ? ((
            (await srv.json('POST', '/api/v1/namespaces/default/serviceaccounts/quiet/token', { spec: {} })).body as {
              status: { token: string };
            }
          ).status.token as string)
        : 'quiet-token';
      const quietAlone = await phase(srv, quietToken, GET, 4);
      const rss0 = rssMiB(srv.proc.pid);
      const [flood, quiet] = await Promise.all([
        phase(srv, 'flood-token', '/api/v1/namespaces/default/configmaps', FLOOD),
        Bun.sleep(500).then(() => phase(srv, quietToken, GET, 4, PHASE_MS - 1000)),
      ]);
      const rss1 = rssMiB(srv.proc.pid);
      console.log(`   APF ${apf ? 'on' : 'off'}:`);
      console.log(`     ${report('quiet alone      ', quietAlone)}`);
      console.log(`     ${report('quiet under flood', quiet)}`);
      console.log(`     ${report('flood            ', flood)}`);
      console.log(`     quiet p99 under flood / alone: ${(quiet.p99 / quietAlone.p99).toFixed(2)}; server RSS ${rss0} -> ${rss1} MiB`);
    } finally {
      await srv.stop();
    }
  }
}
// 4. The floor: part 3's flood against bench/apf-floor.ts, a bare Bun.serve holding the flood to
// SEATS seats and a queue of 300 (the flood's hand of 6 queues of 50), answering the real server's
// bytes. 1 seat as well: how much of the tail is the flood's admitted work.
if (PARTS.has('4')) {
  const FLOOD = Number(process.env.FLOOD_CONNS ?? 120);
  const GET = '/api/v1/namespaces/default/configmaps/cm-7';
  const LIST = '/api/v1/namespaces/default/configmaps';
  const srv = await startServer({ args: [`--token-auth-file=${tokenFile}`] });
  const listFile = path.join(dir, 'list.json');
  const getFile = path.join(dir, 'get.json');
  try {
    await prepare(srv);
    fs.writeFileSync(listFile, new Uint8Array(await (await srv.fetch(LIST, { token: 'flood-token' })).arrayBuffer()));
    fs.writeFileSync(getFile, new Uint8Array(await (await srv.fetch(GET, { token: 'quiet-token' })).arrayBuffer()));
  } finally {
    await srv.stop();
  }
  const { servingCerts } = await import('../src/auth/certs');
  const certs = await servingCerts(fs.mkdtempSync(path.join(dir, 'certs-')), '127.0.0.1');
  console.log(
    `\n4. the floor: a bare Bun.serve (bench/apf-floor.ts) under part 3's flood, ${FLOOD} connections LISTing (${fs.statSync(listFile).size} bytes each), 4 quiet connections GETting`,
  );
  for (const seats of [12, 1]) {
    const proc = Bun.spawn([process.execPath, path.join(import.meta.dir, 'apf-floor.ts')], {
      env: { ...process.env, C: certs.cert, K: certs.key, LIST_FILE: listFile, GET_FILE: getFile, SEATS: String(seats), QUEUE: '300' },
      stdout: 'pipe',
    });
    const port = Number(new TextDecoder().decode((await (proc.stdout as ReadableStream<Uint8Array>).getReader().read()).value).trim());
    const floor = { url: `https://127.0.0.1:${port}`, ca: certs.ca ?? '' };
    try {
      await phase(floor, 'quiet-token', GET, 4, 2000);
      const alone = await phase(floor, 'quiet-token', GET, 4);
      const [flood, quiet] = await Promise.all([
        phase(floor, 'flood-token', LIST, FLOOD),
        Bun.sleep(500).then(() => phase(floor, 'quiet-token', GET, 4, PHASE_MS - 1000)),
      ]);
      console.log(`   ${seats} seat${seats > 1 ? 's' : ''}:`);
      console.log(`     quiet alone      : ${alone.ops} ok/s, p50 ${alone.p50} ms, p99 ${alone.p99} ms`);
      console.log(`     quiet under flood: ${quiet.ops} ok/s, p50 ${quiet.p50} ms, p99 ${quiet.p99} ms`);
      console.log(`     flood            : ${flood.ops} ok/s, answers ${JSON.stringify({ ok: flood.ok, ...flood.codes })}`);
      console.log(`     quiet p99 under flood / alone: ${(quiet.p99 / alone.p99).toFixed(2)}`);
    } finally {
      proc.kill();
    }
  }
}

fs.rmSync(dir, { recursive: true, force: true });
