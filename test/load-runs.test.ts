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
  // 15 Deployments of one pod, then 3 latency pods, at 5 per second: about 4 s of run, long enough for a few samples
  // (one a second, published every 2 s at most).
  const p = load([
    'density',
    '--nodes=3',
    '--pods-per-node=5',
    '--replicas=1',
    '--create-qps=5',
    '--latency-pods=3',
    '--latency-qps=5',
    `--kubeconfig=${srv.kubeconfig}`,
    `--out=${path.join(tmp, 'd')}`,
  ]);
  const stderr = new Response(p.stderr).text();
  // While it runs: the run in progress, then its figures.
  const seen: NonNullable<LoadRuns['running']>[] = [];
  let exited = false;
  void p.exited.then(() => {
    exited = true;
  });
  const end = Date.now() + 30_000;
  while (!exited && Date.now() < end) {
    const r = (await loadRuns()).running;
    if (r) seen.push(r);
    await Bun.sleep(100);
  }
  const code = await p.exited;
  expect(code, await stderr).toBe(0);
  expect(seen.length).toBeGreaterThan(0);
  const first = seen[0]!;
  expect(first.scenario).toBe('density');
  const withFigures = seen.find((r) => r.figures['requests/s'] !== undefined);
  expect(withFigures, JSON.stringify(seen.at(-1))).toBeDefined();
  expect(withFigures!.figures['API p99 ms']).toBeGreaterThan(0);
  expect(withFigures!.progress).toBeGreaterThan(0);
  for (const r of seen) {
    expect(r.id).toBe(first.id);
    expect(r.progress).toBeGreaterThanOrEqual(0);
    expect(r.progress).toBeLessThanOrEqual(1);
  }
  // Progress never goes back.
  const progress = seen.map((r) => r.progress);
  expect(progress).toEqual([...progress].sort((a, b) => a - b));

  const after = await loadRuns();
  expect(after.running).toBeNull();
  expect(after.past).toHaveLength(1);
  const run = after.past[0]!;
  expect(run).toMatchObject({ id: first.id, scenario: 'density', outcome: 'passed', startedAt: first.startedAt });
  expect(Date.parse(run.finishedAt)).toBeGreaterThan(Date.parse(run.startedAt));
  expect(run.summary.pods).toBe(18);
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

test('a failed phase: the run is published as failed, with its summary', async () => {
  const file = path.join(tmp, 'fails.yaml');
  fs.writeFileSync(file, 'name: fails\nnodes: 0\nphases:\n- name: never-ready\n  wait: { podsReady: 1, timeout: 1 }\n');
  const p = load([file, `--kubeconfig=${srv.kubeconfig}`, `--out=${path.join(tmp, 'f')}`]);
  expect(await p.exited, await new Response(p.stderr).text()).toBe(1);
  const run = (await loadRuns()).past[0]!;
  expect(run).toMatchObject({ scenario: 'fails', outcome: 'failed' });
  expect(run.summary['failed phases']).toBe(1);
}, 20_000);

needs('chromium').test(
  'the load runs page shows the past run, then a running one with its progress and live charts, with no console error',
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
      expect(text).toContain('pods 18');
      // A run while the page is open: its scenario, progress and charts, then it joins the past runs.
      const p = load([
        'density',
        '--nodes=3',
        '--pods-per-node=5',
        '--replicas=1',
        '--create-qps=3',
        '--latency-pods=3',
        '--latency-qps=3',
        `--kubeconfig=${srv.kubeconfig}`,
        `--out=${path.join(tmp, 'c')}`,
      ]);
      await page.waitForFunction(`document.querySelector('[data-figure="running-scenario"]')?.textContent?.includes('density') === true`, {
        timeout: 10_000,
      });
      await page.waitForFunction(`document.querySelectorAll('.charts .uplot').length >= 2`, { timeout: 10_000 });
      expect(await page.$eval('[data-figure="running-progress"]', (e) => e.textContent ?? '')).toMatch(/^\d+ %$/);
      expect(await p.exited, await new Response(p.stderr).text()).toBe(0);
      await page.waitForFunction(`document.querySelectorAll('#past-runs tbody tr').length === 3`, { timeout: 5000 });
      expect(await page.$$eval('#past-runs tbody tr', (rows) => rows.length)).toBe(3);
      expect(await page.$$eval('.charts .uplot', (c) => c.length)).toBe(0);
    } finally {
      await browser.close();
    }
    expect(errors).toEqual([]);
  },
  30_000,
);

test('at most 20 finished runs are kept: older ones go, newest first', async () => {
  // 20 finished runs from the past, the harness's shape, then one more run.
  for (let i = 0; i < 20; i++) {
    const r = await srv.json('POST', '/api/v1/namespaces/kube-system/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `load-run-old-${i}`, labels: { 'load.svc.io/run': 'true' } },
      data: {
        scenario: 'old',
        startedAt: new Date(Date.UTC(2020, 0, 1, 0, i)).toISOString(),
        finishedAt: new Date(Date.UTC(2020, 0, 1, 0, i, 30)).toISOString(),
        outcome: 'stopped',
        progress: '0.5',
        figures: '{}',
        summary: '{}',
      },
    });
    expect(r.status).toBe(201);
  }
  const file = path.join(tmp, 'tiny.yaml');
  const p = load([file, `--kubeconfig=${srv.kubeconfig}`, `--out=${path.join(tmp, 't2')}`]);
  expect(await p.exited, await new Response(p.stderr).text()).toBe(0);
  const names = (await runConfigMaps()).map((c) => c.metadata.name);
  expect(names).toHaveLength(20);
  const runs = await loadRuns();
  expect(runs.past).toHaveLength(20);
  expect(runs.past[0]).toMatchObject({ scenario: 'tiny', outcome: 'passed' });
  // The oldest ones went: the newest old ones fill what the harness's runs leave of the 20.
  const ours = runs.past.filter((r) => r.scenario !== 'old').length;
  expect(ours).toBeGreaterThanOrEqual(1);
  const kept = runs.past.filter((r) => r.scenario === 'old').map((r) => r.id);
  expect(kept).toEqual(Array.from({ length: 20 - ours }, (_, i) => `old-${19 - i}`));
  expect(runs.past.map((r) => r.finishedAt)).toEqual(
    runs.past
      .map((r) => r.finishedAt)
      .sort()
      .reverse(),
  );
}, 20_000);
