/**
 * The dashboard's load runs page fed by the load harness through the API (src/load/publish.ts →
 * ConfigMap kube-system/load-run-<id> → src/ui/load-runs.ts): a small density run against a
 * server through its kubeconfig shows while it runs and after, with its outcome and summary, in
 * /ui/api/loadruns and on the page in headless Chromium; --no-publish leaves no ConfigMap.
 *
 *     bun test test/load-runs.test.ts
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { LoadRuns } from '../src/ui/client/types';
import { CHROMIUM, needs } from './helpers/needs';
import { type Server, startServer } from './helpers/server';

const ROOT = path.resolve(import.meta.dir, '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-load-runs-'));
const RUNS = `/api/v1/namespaces/kube-system/configmaps?labelSelector=${encodeURIComponent('load.svc.io/run=true')}`;

let srv: Server;
beforeAll(async () => {
  srv = await startServer({ args: ['--simulated-nodes=0'] });
});
afterAll(async () => {
  await srv?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

function load(args: string[]) {
  return Bun.spawn([process.execPath, path.join(ROOT, 'src/load/main.ts'), ...args], { cwd: tmp, stdout: 'pipe', stderr: 'pipe' });
}

async function loadRuns(): Promise<LoadRuns> {
  const r = await srv.fetch('/ui/api/loadruns', { headers: { cookie: `svc_ui_token=${srv.token}` }, token: null });
  expect(r.status).toBe(200);
  return (await r.json()) as LoadRuns;
}

const runConfigMaps = async () => ((await srv.json('GET', RUNS)).body as { items: { metadata: { name: string } }[] }).items;

test('a density run through the kubeconfig: running with progress and figures while it runs, then passed with a summary', async () => {
  const p = load([
    'density',
    '--nodes=3',
    '--pods-per-node=5',
    '--replicas=5',
    `--kubeconfig=${srv.kubeconfig}`,
    `--out=${path.join(tmp, 'd')}`,
  ]);
  const stderr = new Response(p.stderr).text();
  // While it runs: the run in progress (the harness publishes at most every 2 s).
  let seen: LoadRuns['running'] = null;
  const end = Date.now() + 30_000;
  let exited = false;
  void p.exited.then(() => {
    exited = true;
  });
  while (!seen && !exited && Date.now() < end) {
    seen = (await loadRuns()).running;
    if (!seen) await Bun.sleep(100);
  }
  const code = await p.exited;
  expect(code, await stderr).toBe(0);
  expect(seen).not.toBeNull();
  expect(seen!.scenario).toBe('density');
  expect(seen!.progress).toBeGreaterThanOrEqual(0);
  expect(seen!.progress).toBeLessThanOrEqual(1);

  const after = await loadRuns();
  expect(after.running).toBeNull();
  expect(after.past).toHaveLength(1);
  const run = after.past[0]!;
  expect(run).toMatchObject({ id: seen!.id, scenario: 'density', outcome: 'passed', startedAt: seen!.startedAt });
  expect(Date.parse(run.finishedAt)).toBeGreaterThan(Date.parse(run.startedAt));
  expect(run.summary.pods).toBe(15);
  expect(run.summary.requests).toBeGreaterThan(15);
  expect(run.summary['SLO violations']).toBe(0);
  expect((await runConfigMaps()).map((c) => c.metadata.name)).toEqual([`load-run-${run.id}`]);
}, 50_000);

test('--no-publish: no ConfigMap', async () => {
  const before = (await runConfigMaps()).length;
  const file = path.join(tmp, 'tiny.yaml');
  fs.writeFileSync(file, 'name: tiny\nnodes: 0\nphases:\n- name: ns\n  create: { kind: Namespace, count: 1 }\n');
  const p = load([file, '--no-publish', `--kubeconfig=${srv.kubeconfig}`, `--out=${path.join(tmp, 't')}`]);
  expect(await p.exited, await new Response(p.stderr).text()).toBe(0);
  expect((await runConfigMaps()).length).toBe(before);
  expect((await loadRuns()).past.map((r) => r.scenario)).not.toContain('tiny');
}, 20_000);

needs('chromium').test(
  'the load runs page shows the past run with no console error',
  async () => {
    const puppeteer = await import('puppeteer-core');
    const browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--headless=new', '--ignore-certificate-errors'],
    });
    const errors: string[] = [];
    try {
      const page = await browser.newPage();
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(`${srv.url}/ui/login`, { waitUntil: 'domcontentloaded' });
      await page.type('#token', srv.token);
      await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click('#login')]);
      await page.evaluate(`location.hash = '#/loadruns'`);
      await page.waitForFunction(`document.getElementById('past-runs')?.textContent?.includes('density') === true`, { timeout: 5000 });
      const text = await page.$eval('#past-runs', (e) => e.textContent ?? '');
      expect(text).toContain('passed');
    } finally {
      await browser.close();
    }
    expect(errors).toEqual([]);
  },
  30_000,
);
