/**
 * The crash tool's etcd mode (bench/crash.ts --etcd, issue 42 item 3), short: three cycles of a
 * random member of a 3-member etcd cluster SIGKILLed and restarted under 16 writers through two
 * API server replicas lose no acknowledged write, and each replica's watcher sees exactly etcd's
 * history. Needs etcd (helpers/needs: a failure under CI, else a skip with a message).
 */
import { expect } from 'bun:test';
import { runEtcdCrashCycles } from '../bench/crash-etcd';
import { needs } from './helpers/needs';

needs('etcd').test(
  'a short run on etcd: members killed under 16 writers through two replicas lose nothing',
  async () => {
    const lines: string[] = [];
    const totals = await runEtcdCrashCycles({ cycles: 3, writers: 16, keys: 4, seed: 4243, log: (l) => lines.push(l) });
    expect(totals.problems, lines.join('\n')).toEqual([]);
    expect(totals.cycles).toBe(3);
    expect(totals.memberKills).toBe(3);
    expect(totals.acknowledged).toBeGreaterThan(50);
  },
  90_000,
);
