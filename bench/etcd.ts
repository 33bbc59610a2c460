/**
 * A throwaway single-member etcd for benchmarks: started on 127.0.0.1 with free client and peer
 * ports and a temporary data directory, stopped and removed at the end (also when the process
 * exits early or is interrupted).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

/** The etcd binary (Debian package etcd-server); ETCD_BIN in the environment overrides it. */
export const ETCD_BIN = process.env['ETCD_BIN'] ?? '/usr/bin/etcd';

export interface EtcdServer {
  /** Client URL, e.g. http://127.0.0.1:40123 (https:// when started with TLS) */
  readonly endpoint: string;
  /** The certificate authority of its serving certificate, when started with TLS. */
  readonly ca?: string;
  readonly version: string;
  /** The etcd process (for CPU figures). */
  readonly pid: number;
  /** Kill the server and remove its data directory. Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL the process, keeping its data (an outage); restart() brings it back on the same ports. */
  kill(): Promise<void>;
  restart(): Promise<void>;
}

/** A port nobody listens on right now (the OS picks it; the tiny race is acceptable for a benchmark). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** This process's start time (clock ticks after boot, field 22 of /proc/self/stat), '0' where unknown. */
function processStart(): string {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    // After the command name in parentheses: field 3 (state) on.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '0';
  } catch {
    return '0';
  }
}

/** The reaper's list of members (pid and data dir), one line each; see reapAfterExit. */
let reapList: string | undefined;

/**
 * Members this process started are killed and their data dirs removed once this process is gone,
 * whatever way it went. The 'exit' handler below is not enough: `bun test` ends without running
 * 'exit' listeners, and each test run on etcd left its restarted servers' etcds running and their
 * data (~120 MB each) in the temporary directory. Until 2026-11-30 the reaper itself was killed
 * by `bun test --parallel=2` (npm test) as its worker ended: every CI run left ~500 MB of etcd
 * data dirs behind. One detached shell per process waits for it to
 * end, then kills each listed member still running with its data dir on its command line (a
 * reused pid is left alone) and removes the dirs.
 */
function reapAfterExit(pid: number, dir: string): void {
  if (reapList === undefined) {
    // `bun test --parallel` runs several files in one worker process, each with its own module
    // instances and globals: the list is this process's (pid and start time, a pair no other
    // process has had), created by the first file to start a member, which alone starts the
    // reaper; the others append to it. (It was truncated by each file: the members of the
    // files before were never reaped.)
    reapList = path.join(os.tmpdir(), `bench-etcd-reap-${process.pid}-${processStart()}.list`);
    try {
      fs.writeFileSync(reapList, '', { flag: 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
        fs.appendFileSync(reapList, `${pid} ${dir}\n`);
        return;
      }
      throw e;
    }
    const script = [
      // `bun test --parallel` signals its workers' descendants when a worker ends (SIGTERM, a
      // scratch test found; detached or not): the reaper must outlive that to do its work.
      `trap '' TERM HUP INT QUIT`,
      `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done`,
      `while read -r pid dir; do`,
      `  if tr '\\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$dir/"; then kill -9 "$pid" 2>/dev/null; fi`,
      `  rm -rf -- "$dir"`,
      `done < "${reapList}"`,
      `rm -f -- "${reapList}"`,
    ].join('\n');
    spawn('/bin/sh', ['-c', script], { detached: true, stdio: 'ignore' }).unref();
  }
  fs.appendFileSync(reapList, `${pid} ${dir}\n`);
}

export function etcdVersion(bin = ETCD_BIN): string | undefined {
  if (!fs.existsSync(bin)) return undefined;
  const out = spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout ?? '';
  return /etcd Version: (\S+)/.exec(out)?.[1] ?? 'unknown';
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Start etcd with its default settings (apart from addresses and data dir) and wait until it
 * answers /health. Returns undefined when the binary is missing.
 */
/** TLS for etcd's client port: its serving certificate (PEM texts) and their authority. */
export interface EtcdTls {
  cert: string;
  key: string;
  ca: string;
}

/**
 * A single member; with `tls`, serving its clients over TLS (as a production etcd does: etcd 3.4
 * then serves gRPC through Go's HTTP/2 server rather than its own, bench/README.md).
 */
export async function startEtcd(bin = ETCD_BIN, timeoutMs = 30_000, tls?: EtcdTls): Promise<EtcdServer | undefined> {
  return (await startEtcdCluster(1, bin, timeoutMs, tls))?.[0];
}

/**
 * `size` etcd members on loopback forming one cluster (each with its own ports and data dir),
 * started together and healthy (a quorum elected) when this resolves. A member killed with
 * kill() keeps its data and rejoins with restart().
 */
export async function startEtcdCluster(size: number, bin = ETCD_BIN, timeoutMs = 30_000, tls?: EtcdTls): Promise<EtcdServer[] | undefined> {
  const version = etcdVersion(bin);
  if (version === undefined) return undefined;
  // A free port can be taken before etcd binds it (another process's ephemeral port): new ports then.
  for (let attempt = 1; ; attempt++) {
    try {
      return await launchCluster(size, bin, version, timeoutMs, tls);
    } catch (e) {
      if (attempt >= 5 || !String((e as Error).message).includes('address already in use')) throw e;
    }
  }
}

async function launchCluster(size: number, bin: string, version: string, timeoutMs: number, tls?: EtcdTls): Promise<EtcdServer[]> {
  const spots = [];
  for (let i = 0; i < size; i++) {
    const [clientPort, peerPort] = [await freePort(), await freePort()];
    spots.push({
      name: size === 1 ? 'bench' : `m${i}`,
      client: `${tls ? 'https' : 'http'}://127.0.0.1:${clientPort}`,
      peer: `http://127.0.0.1:${peerPort}`,
    });
  }
  const initialCluster = spots.map((x) => `${x.name}=${x.peer}`).join(',');
  const members = spots.map((x) => member(bin, version, x.name, x.client, x.peer, initialCluster, timeoutMs, tls));
  try {
    await Promise.all(members.map((m) => m.healthy()));
  } catch (e) {
    await Promise.all(members.map((m) => m.server.stop()));
    throw e;
  }
  return members.map((m) => m.server);
}

function member(
  bin: string,
  version: string,
  name: string,
  client: string,
  peer: string,
  initialCluster: string,
  timeoutMs: number,
  tls?: EtcdTls,
): { server: EtcdServer; healthy: () => Promise<void> } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-etcd-'));
  const tlsArgs: string[] = [];
  if (tls) {
    fs.writeFileSync(path.join(dir, 'client.crt'), tls.cert);
    fs.writeFileSync(path.join(dir, 'client.key'), tls.key);
    tlsArgs.push(`--cert-file=${path.join(dir, 'client.crt')}`, `--key-file=${path.join(dir, 'client.key')}`);
  }
  const logFile = path.join(dir, 'etcd.log');
  const args = [
    `--name=${name}`,
    `--data-dir=${path.join(dir, 'data')}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=${initialCluster}`,
    // A restart on the same data dir ignores this.
    '--initial-cluster-state=new',
    '--logger=zap',
    '--log-level=warn',
    ...tlsArgs,
  ];
  const launch = () => {
    const log = fs.openSync(logFile, 'a');
    const c = spawn(bin, args, { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    if (c.pid !== undefined) reapAfterExit(c.pid, dir);
    return c;
  };
  let child = launch();

  let stopped = false;
  const killNow = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  // Last resort when the process exits without stop() (uncaught error, process.exit(), Ctrl-C).
  const onSignal = () => process.exit(130);
  process.once('exit', killNow);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await Promise.race([exited(child), sleep(5000)]);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited(child);
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
    process.removeListener('exit', killNow);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  };

  const healthy = async () => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        const tail = fs.readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n');
        await stop();
        throw new Error(`etcd exited during startup (code ${child.exitCode}, signal ${child.signalCode}):\n${tail}`);
      }
      try {
        const res = await fetch(`${client}/health`, { signal: AbortSignal.timeout(1000), ...(tls ? { tls: { ca: tls.ca } } : {}) });
        if (res.ok && ((await res.json()) as { health?: string }).health === 'true') break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`etcd did not become healthy within ${timeoutMs} ms`);
      }
      await sleep(100);
    }
  };
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited(child);
    }
  };
  const restart = async () => {
    await kill();
    child = launch();
    await healthy();
  };
  return {
    server: {
      endpoint: client,
      ...(tls ? { ca: tls.ca } : {}),
      version,
      get pid() {
        return child.pid ?? 0;
      },
      stop,
      kill,
      restart,
    },
    healthy,
  };
}
