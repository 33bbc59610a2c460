/**
 * API Priority and Fairness (issue 10 bench).
 *
 * 1. What the filter adds to a request, inline: FlowControl.serve() around a no-op handler for a
 *    user classified to global-default (the longest walk through the bootstrap schemas, a
 *    QueueSet dispatch, metrics), for an exempt admin, against calling the handler directly; the
 *    users frozen and shared by their requests, as the server's authenticators give them, and the
 *    global-default user once more as a new object per request (nothing of it memoized).
 * 2. CPU per GET on the real server with APF on and off (two servers, same run, phases
 *    alternated), for a non-exempt user (global-default).
 * 3. A flood at the server's default configuration (12 seats: --max-requests-inflight=8
 *    --max-mutating-requests-inflight=4): one user LISTs (APF_OBJECTS, 100 objects) with 120
 *    concurrent requests while another user GETs one object; the quiet user's p99 under the flood
 *    over its unloaded p99 (the median of APF_RUNS=5 runs), with APF on and off, and the flood's
 *    LISTs/s and answers (200 / 429 / other) and the server's RSS.
 * 4. The sweep: the flood held to 1, 2, 4, 8, 12 seats (APF_SEATS) with 10 × seats connections
 *    (FLOOD_PER_SEAT), on the server (the flood in a level of its own with exactly those seats,
 *    the quiet user in another) and on its floor (bench/apf-floor.ts: a bare Bun.serve holding the
 *    flood's LISTs to those seats with a queue, returning seats as src/apf does): per seat count
 *    the unloaded and loaded p99, their ratio, the server's ratio over the floor's, LISTs/s.
 *    The server and its floor are up together and measured in APF_ROUNDS (3) paired rounds, their
 *    runs interleaved (floodedTogether); the row gives the rounds' medians.
 *    APF_WIDTH=bytes: LISTs take seats by bytes instead of objects, on the server by the gate
 *    SizeBasedListCostEstimate (a seat per 100 kB of stored objects, at most 1 MB from the
 *    cache), on the floor a seat per APF_BYTES_PER_SEAT (100,000) bytes of its answer, at most
 *    1 MB; APF_TARGETS=server or floor runs one side only.
 *
 * Parts 3 and 4 pin the server (the floor) to core 0 and the load generators to core 1 (APF_PIN=0
 * does not). PHASE_MS (6000) is each load phase's length.
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
import { type LoadResult, load, machineTicks, rssMiB, serverCpuPerRequest, stealPct, threadCpu } from './harness';

const PHASE_MS = Number(process.env.PHASE_MS ?? 6000);
/** ConfigMaps the flood LISTs (APF_OBJECTS; the reference's width is a seat per 100). */
const OBJECTS = Number(process.env.APF_OBJECTS ?? 100);
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
  // Frozen and shared between requests, as the authenticators hand users out (static tokens,
  // service account tokens); a user object made per request (impersonation) is measured apart.
  const alice = Object.freeze({ name: 'alice', uid: '', groups: ['devs', 'system:authenticated'] });
  const admin = Object.freeze({ name: 'admin', uid: '', groups: ['system:masters', 'system:authenticated'] });
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
  bench.add('APF: global-default user, a new user object per request', async () => {
    await fc.serve({ name: 'alice', uid: '', groups: ['devs', 'system:authenticated'] }, info, q, undefined, handler);
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
  for (let i = 0; i < OBJECTS; i++) {
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

// Parts 3 and 4 pin the server (or the floor) to core 0 and this process and its load generators
// (separate processes: wrk or bench/load.ts) to core 1, so that the flood's clients do not take
// the server's core. APF_PIN=0 leaves scheduling to the kernel.
const PIN = process.env.APF_PIN !== '0' && os.availableParallelism() >= 2 && fs.existsSync('/usr/bin/taskset');
function pin(pid: number, core: number): void {
  if (!PIN) return;
  const r = Bun.spawnSync(['/usr/bin/taskset', '-a', '-p', '-c', String(core), String(pid)], { stdout: 'ignore', stderr: 'pipe' });
  if (r.exitCode !== 0) throw new Error(`taskset ${pid}: ${r.stderr.toString()}`);
}
if (PIN && (PARTS.has('3') || PARTS.has('4'))) pin(process.pid, 1);

const RUNS = Number(process.env.APF_RUNS ?? 5);
/** Paired rounds per seat count in the sweep (APF_ROUNDS): the row gives their medians. */
const ROUNDS = Number(process.env.APF_ROUNDS ?? 3);
const GET = '/api/v1/namespaces/default/configmaps/cm-7';
const LIST = '/api/v1/namespaces/default/configmaps';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

interface FloodFigures {
  /** The quiet user's p99 alone, one per run, and their median. */
  alone: number[];
  aloneP99: number;
  quiet: LoadResult;
  flood: LoadResult;
  ratio: number;
  /** The share of the machine's CPU time the hypervisor stole during the runs (%), and during the flood. */
  steal: number;
  floodSteal: number;
}

/**
 * The quiet user (4 connections GETting one ConfigMap) alone RUNS times (the median p99 is the
 * unloaded figure; a run's p99 varies by several times on this machine), then under a flood of
 * `floodConns` connections LISTing, starting 500 ms into the flood.
 */
async function flooded(target: { url: string; ca: string }, quietToken: string, floodConns: number): Promise<FloodFigures> {
  return (await floodedTogether([target], quietToken, floodConns, 0))[0] as FloodFigures;
}

/**
 * `flooded` for several targets up at once (the server and its floor), their runs interleaved so
 * that the VM's slow spells fall on both alike: the quiet user alone on each in turn, RUNS times,
 * then the flood on each (the order turned by `round`). Measured one after the other, a target's
 * unloaded p99 moved 0.5-6 ms between configurations (2026-11-28: the floor's too), and the ratio
 * of two ratios followed whichever side a spell fell on.
 */
async function floodedTogether(
  targets: { url: string; ca: string }[],
  quietToken: string,
  floodConns: number,
  round: number,
): Promise<FloodFigures[]> {
  for (const t of targets) await phase(t, quietToken, GET, 4, 1000);
  const t0 = machineTicks();
  const alone: number[][] = targets.map(() => []);
  for (let i = 0; i < RUNS; i++) for (const [k, t] of targets.entries()) alone[k]?.push((await phase(t, quietToken, GET, 4)).p99);
  const out: FloodFigures[] = new Array(targets.length);
  for (let j = 0; j < targets.length; j++) {
    const k = (j + round) % targets.length;
    const t = targets[k] as { url: string; ca: string };
    const f0 = machineTicks();
    const [flood, quiet] = await Promise.all([
      phase(t, 'flood-token', LIST, floodConns),
      Bun.sleep(500).then(() => phase(t, quietToken, GET, 4, Math.max(500, PHASE_MS - 1000))),
    ]);
    const aloneP99 = median(alone[k] as number[]);
    out[k] = {
      alone: alone[k] as number[],
      aloneP99,
      quiet,
      flood,
      ratio: quiet.p99 / aloneP99,
      steal: stealPct(t0, machineTicks()),
      floodSteal: stealPct(f0, machineTicks()),
    };
  }
  return out;
}

const answers = (r: LoadResult) => JSON.stringify({ ok: r.ok, ...r.codes });
function printFlood(f: FloodFigures, indent = '     '): void {
  console.log(`${indent}quiet alone       : p99 ${f.aloneP99} ms (median of ${f.alone.length} runs: ${f.alone.join(', ')})`);
  console.log(`${indent}quiet under flood : ${f.quiet.ops} ok/s, p50 ${f.quiet.p50} ms, p99 ${f.quiet.p99} ms`);
  console.log(`${indent}flood             : ${f.flood.ops} LISTs/s, p99 ${f.flood.p99} ms, answers ${answers(f.flood)}`);
  console.log(
    `${indent}quiet p99 under flood / alone: ${f.ratio.toFixed(2)} (VM steal ${f.steal.toFixed(1)}% of the machine's time meanwhile, ${f.floodSteal.toFixed(1)}% during the flood)`,
  );
}

// 3. The server's default configuration: 12 seats shared by the bootstrap levels, the flood and
// the quiet user both global-default users (QUIET=sa: the quiet user is a service account,
// workload-low), APF on and off.
if (PARTS.has('3')) {
  const SEATS = 12;
  const FLOOD = Number(process.env.FLOOD_CONNS ?? SEATS * 10);
  const quietSa = process.env.QUIET === 'sa';
  console.log(
    `\n3. flood at the default configuration: LISTs of ${OBJECTS} ConfigMaps with ${FLOOD} connections (the server has ${SEATS} seats) while ${quietSa ? 'a service account (workload-low)' : 'another user (global-default)'} GETs${PIN ? '; server on core 0, load generators on core 1' : ''}`,
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
      pin(srv.proc.pid, 0);
      await prepare(srv);
      const quietToken = quietSa
        ? ((
            (await srv.json('POST', '/api/v1/namespaces/default/serviceaccounts/quiet/token', { spec: {} })).body as {
              status: { token: string };
            }
          ).status.token as string)
        : 'quiet-token';
      const rss0 = rssMiB(srv.proc.pid);
      const f = await flooded(srv, quietToken, FLOOD);
      console.log(`   APF ${apf ? 'on' : 'off'}: server RSS ${rss0} -> ${rssMiB(srv.proc.pid)} MiB`);
      printFlood(f);
    } finally {
      await srv.stop();
    }
  }
}

/**
 * The server configured so that the flood has exactly `seats` seats: its user is the only one of a
 * level "bench-flood" (queues as global-default's: 128, hand of 6, 50 each), the quiet user the
 * only one of "bench-quiet" with 4 seats (its 4 connections never wait, as the floor's GETs take no
 * seat). Neither lends nor borrows; the bootstrap levels keep 1 seat each (their shares are
 * nothing beside these).
 */
async function sweepServer(seats: number, byBytes: boolean): Promise<Server> {
  const SCALE = 100_000;
  const srv = await startServer({
    args: [
      `--token-auth-file=${tokenFile}`,
      `--max-requests-inflight=${seats + 4}`,
      '--max-mutating-requests-inflight=0',
      `--feature-gates=SizeBasedListCostEstimate=${byBytes}`,
    ],
  });
  try {
    pin(srv.proc.pid, 0);
    await prepare(srv);
    const GROUP = '/apis/flowcontrol.apiserver.k8s.io/v1';
    for (const [name, user, shares] of [
      ['bench-flood', 'flood', seats * SCALE],
      ['bench-quiet', 'quiet', 4 * SCALE],
    ] as const) {
      const pl = await srv.json('POST', `${GROUP}/prioritylevelconfigurations`, {
        apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
        kind: 'PriorityLevelConfiguration',
        metadata: { name },
        spec: {
          type: 'Limited',
          limited: {
            nominalConcurrencyShares: shares,
            lendablePercent: 0,
            borrowingLimitPercent: 0,
            limitResponse: { type: 'Queue', queuing: { queues: 128, handSize: 6, queueLengthLimit: 50 } },
          },
        },
      });
      if (pl.status !== 201) throw new Error(`priority level ${name}: ${pl.status} ${JSON.stringify(pl.body)}`);
      const fsr = await srv.json('POST', `${GROUP}/flowschemas`, {
        apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
        kind: 'FlowSchema',
        metadata: { name },
        spec: {
          priorityLevelConfiguration: { name },
          matchingPrecedence: 100,
          distinguisherMethod: { type: 'ByUser' },
          rules: [
            {
              subjects: [{ kind: 'User', user: { name: user } }],
              resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
            },
          ],
        },
      });
      if (fsr.status !== 201) throw new Error(`flow schema ${name}: ${fsr.status} ${JSON.stringify(fsr.body)}`);
    }
    const want = `apiserver_flowcontrol_nominal_limit_seats{priority_level="bench-flood"} ${seats}\n`;
    for (let i = 0; ; i++) {
      const m = await (await srv.fetch('/metrics')).text();
      if (m.includes(want) && m.includes('priority_level="bench-quiet"} 4\n')) break;
      if (i > 100) throw new Error(`the flood's level never got ${seats} seats`);
      await Bun.sleep(20);
    }
    return srv;
  } catch (e) {
    await srv.stop();
    throw e;
  }
}

/** What the server's LIST estimate says of the flood's LISTs: the mean of work_estimated_seats. */
async function serverWidth(srv: Server): Promise<number> {
  const m = await (await srv.fetch('/metrics')).text();
  const read = (what: string) =>
    Number(
      new RegExp(
        `^apiserver_flowcontrol_work_estimated_seats_${what}\\{flow_schema="bench-flood",priority_level="bench-flood"\\} (\\S+)$`,
        'm',
      ).exec(m)?.[1],
    );
  return read('sum') / read('count');
}

// 4. The sweep: the flood's seats 1, 2, 4, 8, 12 (APF_SEATS), a flood of 10 × seats connections
// (FLOOD_PER_SEAT), against the server (sweepServer) and against bench/apf-floor.ts holding the
// flood to the same seats with a queue of 300 (the flood's hand of 6 queues of 50) and answering
// the real server's bytes. The floor's LISTs take the width the reference's estimator gives them
// (a seat per 100 ConfigMaps stored, in all namespaces), or with APF_WIDTH=bytes a seat per
// APF_BYTES_PER_SEAT bytes of the LIST answer (at most 1 MB): what width by response bytes does.
if (PARTS.has('4')) {
  const SWEEP = (process.env.APF_SEATS ?? '1,2,4,8,12').split(',').map(Number);
  const PER_SEAT = Number(process.env.FLOOD_PER_SEAT ?? 10);
  const BY_BYTES = process.env.APF_WIDTH === 'bytes';
  const BYTES_PER_SEAT = Number(process.env.APF_BYTES_PER_SEAT ?? 100_000);
  let stored = 0;
  const TARGETS = new Set((process.env.APF_TARGETS ?? 'server,floor').split(','));
  const listFile = path.join(dir, 'list.json');
  const getFile = path.join(dir, 'get.json');
  {
    const srv = await startServer({ args: [`--token-auth-file=${tokenFile}`] });
    try {
      await prepare(srv);
      fs.writeFileSync(listFile, new Uint8Array(await (await srv.fetch(LIST, { token: 'flood-token' })).arrayBuffer()));
      fs.writeFileSync(getFile, new Uint8Array(await (await srv.fetch(GET, { token: 'quiet-token' })).arrayBuffer()));
      stored = ((await srv.json('GET', '/api/v1/configmaps')).body as { items: unknown[] }).items.length;
    } finally {
      await srv.stop();
    }
  }
  const listBytes = fs.statSync(listFile).size;
  const floorWidth = (seats: number) =>
    Math.max(1, Math.min(10, seats, BY_BYTES ? Math.ceil(Math.min(listBytes, 1_000_000) / BYTES_PER_SEAT) : Math.ceil(stored / 100)));
  const { servingCerts } = await import('../src/auth/certs');
  const certs = await servingCerts(fs.mkdtempSync(path.join(dir, 'certs-')), '127.0.0.1');
  console.log(
    `\n4. sweep: the flood LISTs ${OBJECTS} ConfigMaps (${listBytes} bytes) with ${PER_SEAT} × seats connections; 4 quiet connections GET; quiet alone: median p99 of ${RUNS} runs; ${PIN ? 'server / floor on core 0, load generators on core 1' : 'not pinned'}; LIST width ${BY_BYTES ? `by bytes (the floor: a seat per ${BYTES_PER_SEAT} bytes)` : `by objects (${stored} ConfigMaps stored: a seat per 100)`}`,
  );
  const rows: string[] = [];
  for (const seats of SWEEP) {
    const flood = seats * PER_SEAT;
    const names: string[] = [];
    const targets: { url: string; ca: string }[] = [];
    const stops: (() => Promise<void> | void)[] = [];
    try {
      if (TARGETS.has('server')) {
        const srv = await sweepServer(seats, BY_BYTES);
        stops.push(async () => {
          await srv.stop();
        });
        names.push('server');
        targets.push(srv);
        stops.push(async () => {
          console.log(`   server, ${seats} seat${seats > 1 ? 's' : ''}: LIST width ${(await serverWidth(srv)).toFixed(2)} on average`);
        });
      }
      if (TARGETS.has('floor')) {
        const proc = Bun.spawn([process.execPath, path.join(import.meta.dir, 'apf-floor.ts')], {
          env: {
            ...process.env,
            C: certs.cert,
            K: certs.key,
            LIST_FILE: listFile,
            GET_FILE: getFile,
            SEATS: String(seats),
            QUEUE: '300',
            WIDTH: String(floorWidth(seats)),
          },
          stdout: 'pipe',
        });
        stops.push(() => {
          proc.kill();
        });
        pin(proc.pid, 0);
        const port = Number(new TextDecoder().decode((await (proc.stdout as ReadableStream<Uint8Array>).getReader().read()).value).trim());
        names.push('floor');
        targets.push({ url: `https://127.0.0.1:${port}`, ca: certs.ca ?? '' });
      }
      // ROUNDS paired rounds: each its own unloaded p99s and floods, the row their median.
      const rounds: Record<string, FloodFigures>[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const figs = await floodedTogether(targets, 'quiet-token', flood, r);
        const got: Record<string, FloodFigures> = {};
        for (const [k, name] of names.entries()) {
          got[name] = figs[k] as FloodFigures;
          const width = name === 'floor' ? ` (LIST width ${floorWidth(seats)})` : '';
          console.log(`   ${name}, ${seats} seat${seats > 1 ? 's' : ''}${width}, ${flood} flood connections, round ${r + 1} of ${ROUNDS}:`);
          printFlood(got[name] as FloodFigures);
        }
        rounds.push(got);
      }
      const cell = (name: string) => {
        const fs_ = rounds.map((g) => g[name]).filter((f): f is FloodFigures => f !== undefined);
        if (fs_.length === 0) return '-';
        const m = (pick: (f: FloodFigures) => number) => median(fs_.map(pick));
        return `${m((f) => f.aloneP99).toFixed(2)} / ${m((f) => f.quiet.p99).toFixed(2)} ms = ${m((f) => f.ratio).toFixed(2)}, ${m((f) => f.flood.ops)} LISTs/s`;
      };
      const vs = rounds.filter((g) => g.server && g.floor).map((g) => (g.server as FloodFigures).ratio / (g.floor as FloodFigures).ratio);
      const vsCell = vs.length ? `${median(vs).toFixed(2)} (rounds ${vs.map((v) => v.toFixed(2)).join(', ')})` : '-';
      rows.push(`   ${String(seats).padStart(5)}  ${cell('server').padEnd(44)} ${cell('floor').padEnd(44)} ${vsCell}`);
    } finally {
      for (const stop of stops.reverse()) await stop();
    }
  }
  console.log(`\n   quiet p99 alone (median) / under flood = ratio, flood LISTs/s (medians of ${ROUNDS} paired rounds)`);
  console.log(`   seats  ${'server'.padEnd(44)} ${'floor'.padEnd(44)} server ratio / floor ratio`);
  for (const r of rows) console.log(r);
}

fs.rmSync(dir, { recursive: true, force: true });
