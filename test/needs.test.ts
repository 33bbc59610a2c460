/**
 * helpers/needs decides, once for all tests, what a missing dependency means: a failure with CI
 * set, a skip that says why without it. Checked on a small test file run by `bun test`, with
 * ETCD_BIN pointing at a missing binary or at a stand-in that answers `--version`.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-needs-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const helper = path.resolve(import.meta.dir, 'helpers/needs');
fs.writeFileSync(
  path.join(dir, 'sample.test.ts'),
  `import { expect, test } from 'bun:test';
import { needs } from ${JSON.stringify(helper)};
needs('etcd').describe('a block on etcd', () => {
  test('first', () => expect(1).toBe(1));
  test('second', () => expect(2).toBe(2));
});
needs('etcd').test('a test on etcd', () => expect(3).toBe(3));
test('a test without dependencies', () => expect(4).toBe(4));
`,
);
const fakeEtcd = path.join(dir, 'etcd');
fs.writeFileSync(fakeEtcd, '#!/bin/sh\necho "etcd Version: 9.9.9"\n', { mode: 0o755 });

function run(env: { CI?: string; ETCD_BIN: string }): { code: number; out: string; count: (what: string) => number } {
  const e: Record<string, string | undefined> = { ...process.env, ...env };
  if (env.CI === undefined) delete e.CI;
  delete e.GITHUB_ACTIONS;
  const r = Bun.spawnSync([process.execPath, 'test', './sample.test.ts'], { cwd: dir, env: e, stdout: 'pipe', stderr: 'pipe' });
  const out = r.stdout.toString() + r.stderr.toString();
  const count = (what: string) => Number(new RegExp(`^ *(\\d+) ${what}$`, 'm').exec(out)?.[1] ?? 0);
  return { code: r.exitCode ?? -1, out, count };
}

describe('a missing dependency', () => {
  const missing = path.join(dir, 'no-such-etcd');

  test('without CI: skipped, the skipped test saying what is missing and how to install it', () => {
    const r = run({ ETCD_BIN: missing });
    expect(r.code).toBe(0);
    expect([r.count('pass'), r.count('skip'), r.count('fail')]).toEqual([1, 2, 0]);
    expect(r.out).toContain(`(skip) a block on etcd: skipped, needs etcd: ${missing} is not installed (apt-get install etcd-server)`);
    expect(r.out).toContain('(skip) a test on etcd: skipped, needs etcd:');
  });

  test('CI=false is not CI', () => {
    const r = run({ CI: 'false', ETCD_BIN: missing });
    expect([r.code, r.count('skip'), r.count('fail')]).toEqual([0, 2, 0]);
  });

  test('with CI=true: a failure naming it, nothing skipped', () => {
    const r = run({ CI: 'true', ETCD_BIN: missing });
    expect(r.code).not.toBe(0);
    expect([r.count('pass'), r.count('skip'), r.count('fail')]).toEqual([1, 0, 2]);
    expect(r.out).toContain(`(fail) a block on etcd: needs etcd: ${missing} is not installed (apt-get install etcd-server)`);
    expect(r.out).toContain('CI is set: a missing dependency is a failure, not a skip');
  });
});

test('a dependency that is there: the tests run, with or without CI', () => {
  for (const CI of [undefined, 'true']) {
    const r = run({ CI, ETCD_BIN: fakeEtcd });
    expect([r.code, r.count('pass'), r.count('skip'), r.count('fail')]).toEqual([0, 4, 0, 0]);
  }
});
