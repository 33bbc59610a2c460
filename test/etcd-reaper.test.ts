/**
 * bench/etcd.ts's reaper: an etcd member that a test process started and never stopped (a
 * restarted server's etcd, kept for its data dir, is stopped only at exit, which `bun test` does
 * not run) is killed and its data dir removed once the process is gone. Run here as `npm test`
 * runs the suite, `bun test --parallel=2`, whose workers signal their descendants as they end
 * (that killed the reaper too) and run several files each, every file with its own module
 * instances (each truncated the worker's list of members to reap): every CI run left ~500 MB of
 * etcd data behind. The child run's
 * temporary directory is a private one (TMPDIR), so what is left there is this test's alone.
 */
import { expect } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { needs } from './helpers/needs';

const ETCD_MODULE = path.resolve(import.meta.dir, '../bench/etcd.ts');

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

needs('etcd').test(
  'etcds left running by four files on two `bun test --parallel=2` workers are killed and their data dirs removed after the run',
  async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-reaper-'));
    const tmp = path.join(work, 'tmp');
    fs.mkdirSync(tmp);
    try {
      // Four files on two workers: a worker runs several files, each with its own module
      // instances, which used to truncate the worker's list of members to reap.
      const files = ['a', 'b', 'c', 'd'].map((n) => {
        const f = path.join(work, `leave-${n}.test.ts`);
        fs.writeFileSync(
          f,
          [
            `import { test } from 'bun:test';`,
            `import { startEtcd } from ${JSON.stringify(ETCD_MODULE)};`,
            `test('start an etcd and leave it running', async () => {`,
            `  const e = await startEtcd();`,
            `  if (!e) throw new Error('no etcd');`,
            `  console.log('LEFT ETCD ' + e.pid);`,
            `});`,
          ].join('\n'),
        );
        return f;
      });
      const child = Bun.spawn([process.execPath, 'test', '--parallel=2', '--timeout', '30000', ...files], {
        cwd: work,
        env: { ...process.env, TMPDIR: tmp },
        stdout: 'pipe',
        stderr: 'pipe',
      });
      const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()]);
      expect(await child.exited, `${out}\n${err}`).toBe(0);
      const pids = [...`${out}\n${err}`.matchAll(/LEFT ETCD (\d+)/g)].map((m) => Number(m[1]));
      expect(pids, `${out}\n${err}`).toHaveLength(4);
      // The reapers poll once a second for their process's end.
      const deadline = Date.now() + 15_000;
      const left = () => fs.readdirSync(tmp).filter((n) => n.startsWith('bench-etcd-'));
      while (Date.now() < deadline && (pids.some(alive) || left().length > 0)) await Bun.sleep(200);
      expect(pids.filter(alive)).toEqual([]);
      expect(left()).toEqual([]);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  },
  60_000,
);
