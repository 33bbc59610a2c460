/**
 * Tests that need something from outside the repository (a program or the reference data) say so
 * here, and this module alone decides what a missing one means:
 *   - with CI set (CI=true; .ci/run sets it unless told otherwise) it is a failure: the block is
 *     replaced by one test that fails naming what is missing and how to install it, so a run with
 *     a dependency missing can never pass by skipping;
 *   - otherwise the block is skipped: one skipped test whose name says what is missing and why
 *     (and a warning on stderr).
 *
 *   needs('etcd').describe('etcd outage', () => { ... });
 *   needs('reference').test('every fixture round-trips', () => { ... }, 60_000);
 *   if (has('reference')) { ... }   // data a test may use; pair it with a needs(...) test
 *
 * kubectl is also called inside tests about other things (srv.kubectl()); there a missing
 * kubectl fails the test, with the message below, whether or not CI is set.
 */
import { describe as bunDescribe, test as bunTest } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ETCD_BIN, etcdVersion } from '../../bench/etcd';

/** CI=true (or any value but empty, 0 or false): a missing dependency fails the run. */
export const IN_CI = !['', '0', 'false'].includes((process.env.CI ?? '').toLowerCase());

/** The reference data beside the repository: ../shared/reference from the repository root. */
export const REFERENCE = path.resolve(import.meta.dir, '../../../shared/reference');

/** The Python the client tests run (Debian's python3, where python3-kubernetes installs). */
export const PYTHON = '/usr/bin/python3';

const python = (module: string) =>
  fs.existsSync(PYTHON) && Bun.spawnSync([PYTHON, '-c', `import ${module}`], { stderr: 'pipe' }).exitCode === 0;

/** Debian's headless-capable Chromium, which the dashboard's browser tests drive (puppeteer-core). */
export const CHROMIUM = '/usr/bin/chromium';

/** kubectl: Debian's /usr/bin/kubectl, else one on PATH; undefined when there is none. */
export function kubectlPath(): string | undefined {
  return fs.existsSync('/usr/bin/kubectl') ? '/usr/bin/kubectl' : (Bun.which('kubectl') ?? undefined);
}

const DEPENDENCIES = {
  etcd: { present: () => etcdVersion() !== undefined, missing: `${ETCD_BIN} is not installed (apt-get install etcd-server)` },
  'python-client': {
    present: () => python('kubernetes'),
    missing: `${PYTHON} cannot import kubernetes (apt-get install python3-kubernetes)`,
  },
  pytest: {
    present: () => python('pytest') && python('pytest_timeout'),
    missing: `${PYTHON} cannot import pytest and pytest_timeout (apt-get install python3-pytest python3-pytest-timeout)`,
  },
  kubectl: {
    present: () => kubectlPath() !== undefined,
    missing: 'kubectl is not installed (apt-get install kubectl, or kubernetes-client)',
  },
  chromium: {
    present: () => fs.existsSync(CHROMIUM),
    missing: `${CHROMIUM} is not installed (apt-get install chromium): the dashboard's browser tests drive it`,
  },
  openssl: { present: () => fs.existsSync('/usr/bin/openssl'), missing: '/usr/bin/openssl is not installed (apt-get install openssl)' },
  wrk: {
    present: () => fs.existsSync('/usr/bin/wrk'),
    missing: '/usr/bin/wrk is not installed (apt-get install wrk): the API benches drive the server with it',
  },
  reference: {
    present: () => fs.existsSync(REFERENCE),
    missing: `the reference data is not at ${REFERENCE} (../shared/reference beside the repository)`,
  },
} satisfies Record<string, { present: () => boolean; missing: string }>;

export type Dependency = keyof typeof DEPENDENCIES;

const known = new Map<Dependency, boolean>();

/** Whether `dep` is there (checked once per test file). */
export function has(dep: Dependency): boolean {
  let v = known.get(dep);
  if (v === undefined) {
    v = DEPENDENCIES[dep].present();
    known.set(dep, v);
  }
  return v;
}

/** What is missing of `deps`, with how to install it ('' when all are there). */
export function missing(...deps: Dependency[]): string {
  return deps
    .filter((d) => !has(d))
    .map((d) => `needs ${d}: ${DEPENDENCIES[d].missing}`)
    .join('; ');
}

type TestFn = Parameters<typeof bunTest>[1];
type TestOptions = Parameters<typeof bunTest>[2];

export interface Needs {
  /** All there. */
  readonly ok: boolean;
  describe(label: string, fn: () => void): void;
  test(label: string, fn: TestFn, options?: TestOptions): void;
}

/** describe / test that run when every one of `deps` is there, and otherwise fail (CI) or skip. */
export function needs(...deps: Dependency[]): Needs {
  const why = missing(...deps);
  if (why === '') return { ok: true, describe: bunDescribe, test: (label, fn, options) => bunTest(label, fn, options) };
  const instead = (label: string) => {
    if (IN_CI) {
      bunTest(`${label}: ${why}`, () => {
        throw new Error(`${label}: ${why} (CI is set: a missing dependency is a failure, not a skip)`);
      });
    } else {
      console.warn(`skipped: ${label}: ${why}`);
      bunTest.skip(`${label}: skipped, ${why}`, () => {});
    }
  };
  return { ok: false, describe: (label) => instead(label), test: (label) => instead(label) };
}
