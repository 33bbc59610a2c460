/**
 * kubectl's describe and watch output against the server (issue 9, Tests): `describe node` reads
 * the node's Lease under coordination.k8s.io and its pods by field selector; `get --watch
 * --output-watch-events` prints each event of a live watch. Needs kubectl (helpers/needs).
 */
import { beforeAll, expect, test } from 'bun:test';
import { needs } from './helpers/needs';
import { KUBECTL, STATIC_WORKLOADS, serverForFile } from './helpers/server';

// Unbound pods here stay unbound (the built-in scheduler would bind them to the test's nodes).
const srv = serverForFile({ args: ['--scheduler=false', STATIC_WORKLOADS] });
const at = (s: number) => new Date(Date.UTC(2026, 0, 2, 3, 4, s)).toISOString().replace(/\.\d{3}Z$/, 'Z');

beforeAll(async () => {
  const ready = {
    type: 'Ready',
    status: 'True',
    lastHeartbeatTime: at(5),
    lastTransitionTime: at(5),
    reason: 'KubeletReady',
    message: 'kubelet is ready',
  };
  // (kube-node-lease exists from the start, as in the reference.)
  const writes: [string, unknown][] = [
    [
      '/api/v1/nodes',
      {
        metadata: { name: 'n1', labels: { zone: 'a' } },
        status: { capacity: { cpu: '4', memory: '8Gi', pods: '110' }, conditions: [ready] },
      },
    ],
    [
      '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
      { metadata: { name: 'n1' }, spec: { holderIdentity: 'n1', renewTime: '2026-01-02T03:04:05.000000Z' } },
    ],
    [
      '/api/v1/namespaces/default/pods',
      {
        metadata: { name: 'p1' },
        spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '500m' } } }] },
      },
    ],
    ['/api/v1/namespaces/default/pods', { metadata: { name: 'elsewhere' }, spec: { containers: [{ name: 'c', image: 'i' }] } }],
    [
      '/api/v1/namespaces/default/services',
      { metadata: { name: 's1' }, spec: { selector: { app: 'x' }, ports: [{ port: 80, targetPort: 8080 }] } },
    ],
    [
      '/apis/apps/v1/namespaces/default/deployments',
      {
        metadata: { name: 'd1' },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'x' } },
          template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] } },
        },
      },
    ],
  ];
  for (const [path, body] of writes) expect((await srv.json('POST', path, body)).status).toBe(201);
});

/** `Key:  value` lines of kubectl describe output (the first occurrence of each key). */
function fields(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const m = /^\s*([A-Za-z][A-Za-z -]*):\s+(.*)$/.exec(line);
    if (m && !(m[1]! in out)) out[m[1]!] = m[2]!.trim();
  }
  return out;
}

needs('kubectl').describe('kubectl describe', () => {
  test('node: its lease, conditions, capacity and the pods bound to it', () => {
    const r = srv.kubectl(['describe', 'node', 'n1']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const f = fields(r.stdout);
    expect(f.Name).toBe('n1');
    expect(f.Labels).toBe('zone=a');
    expect(f.HolderIdentity).toBe('n1');
    expect(f.RenewTime).toBe('Fri, 02 Jan 2026 03:04:05 +0000');
    expect(r.stdout).toMatch(/Ready\s+True\s+.*KubeletReady\s+kubelet is ready/);
    expect(r.stdout).toContain('Non-terminated Pods:          (1 in total)');
    expect(r.stdout).toMatch(/default\s+p1\s+500m \(12%\)/);
    expect(r.stdout).not.toContain('elsewhere');
  });

  test('svc: selector, type, ports', () => {
    const r = srv.kubectl(['describe', 'svc', 's1']);
    expect(r.stderr).toBe('');
    const f = fields(r.stdout);
    expect(f.Selector).toBe('app=x');
    expect(f.Type).toBe('ClusterIP');
    expect(f.Port).toBe('<unset>  80/TCP');
    expect(f.TargetPort).toBe('8080/TCP');
    expect(f['Session Affinity']).toBe('None');
  });

  test('deploy: replicas, strategy with the defaults, template', () => {
    const r = srv.kubectl(['describe', 'deploy', 'd1']);
    expect(r.stderr).toBe('');
    const f = fields(r.stdout);
    expect(f.Replicas).toStartWith('3 desired');
    expect(f.StrategyType).toBe('RollingUpdate');
    expect(f.RollingUpdateStrategy).toBe('25% max unavailable, 25% max surge');
    expect(r.stdout).toMatch(/web:\s+Image:\s+nginx:1\.25/);
  });
});

needs('kubectl').describe('kubectl get --watch --output-watch-events', () => {
  test('prints ADDED, MODIFIED and DELETED rows as the changes happen', async () => {
    await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'kw' } });
    // An object before the watch: its ADDED row (from the initial list) shows kubectl is listening.
    await srv.json('POST', '/api/v1/namespaces/kw/configmaps', { metadata: { name: 'w0' } });
    const proc = Bun.spawn([KUBECTL, '--kubeconfig', srv.kubeconfig, '-n', 'kw', 'get', 'configmaps', '--watch', '--output-watch-events'], {
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
    const dec = new TextDecoder();
    let text = '';
    const readUntil = async (re: RegExp): Promise<void> => {
      const deadline = Date.now() + 15_000;
      while (!re.test(text) && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        text += dec.decode(value);
      }
    };
    try {
      await readUntil(/ADDED\s+w0/);
      await srv.json('POST', '/api/v1/namespaces/kw/configmaps', { metadata: { name: 'w1' }, data: { a: '1' } });
      // Whole rows: wait for the columns after the name too (a row may arrive in pieces).
      await readUntil(/ADDED\s+w1\s+\d+\s/);
      await srv.json(
        'PATCH',
        '/api/v1/namespaces/kw/configmaps/w1',
        { data: { b: '2' } },
        { 'content-type': 'application/merge-patch+json' },
      );
      await readUntil(/MODIFIED\s+w1\s+\d+\s/);
      await srv.json('DELETE', '/api/v1/namespaces/kw/configmaps/w1');
      await readUntil(/DELETED\s+w1\s+\d+\s/);
    } finally {
      proc.kill();
      await proc.exited;
    }
    const rows = text
      .split('\n')
      .filter((l) => /\bw1\b/.test(l))
      .map((l) => l.split(/\s+/).slice(0, 3));
    expect(rows).toEqual([
      ['ADDED', 'w1', '1'],
      ['MODIFIED', 'w1', '2'],
      ['DELETED', 'w1', '2'],
    ]);
  }, 30_000);
});
