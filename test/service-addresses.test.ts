/**
 * Service addresses (issue 16 item 5): cluster IPs and node ports allocated from their ranges,
 * unique under concurrent creates, refused when taken or out of range, released on delete and on
 * type changes, kept across a restart; the kubernetes Service in default.
 */
import { describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { serverForFile, startServer } from './helpers/server';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const srv = serverForFile({ args: ['--service-cluster-ip-range=10.96.0.0/16', '--service-node-port-range=30000-32767'] });
const SVCS = '/api/v1/namespaces/default/services';
const svc = (name: string, spec: Json = {}): Json => ({
  metadata: { name },
  spec: { selector: { app: name }, ports: [{ port: 80 }], ...spec },
});
const ipNum = (ip: string) => ip.split('.').reduce((a, o) => a * 256 + Number(o), 0);

// Addresses the tests ask for are in the lower (static) bands, which dynamic picks leave alone,
// so the 200 random allocations above never take them.
describe('allocation', () => {
  test('the kubernetes Service holds the first address of the range', async () => {
    const k = await srv.json('GET', `${SVCS}/kubernetes`);
    expect(k.status).toBe(200);
    expect(k.body.spec).toMatchObject({ clusterIP: '10.96.0.1', clusterIPs: ['10.96.0.1'], ports: [{ name: 'https', port: 443 }] });
  });

  test('200 concurrent creates get distinct cluster IPs and node ports inside their ranges', async () => {
    const rs = await Promise.all(
      Array.from({ length: 200 }, (_, i) => srv.json('POST', SVCS, svc(`c${i}`, i % 2 ? { type: 'NodePort' } : {}))),
    );
    expect(rs.map((r) => r.status)).toEqual(rs.map(() => 201));
    const ips = rs.map((r) => r.body.spec.clusterIP as string);
    expect(new Set(ips).size).toBe(200);
    for (const ip of ips) {
      expect(ipNum(ip)).toBeGreaterThan(ipNum('10.96.0.1'));
      expect(ipNum(ip)).toBeLessThan(ipNum('10.96.255.255'));
    }
    const ports = rs.filter((r) => r.body.spec.type === 'NodePort').map((r) => r.body.spec.ports[0].nodePort as number);
    expect(ports).toHaveLength(100);
    expect(new Set(ports).size).toBe(100);
    for (const p of ports) expect(p >= 30000 && p <= 32767).toBe(true);
    const first = rs[0]?.body.spec;
    expect(first).toMatchObject({ ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', clusterIPs: [first.clusterIP] });
  }, 30_000);

  test.each([
    [
      'a cluster IP in use',
      { clusterIP: '10.96.0.1' },
      'spec.clusterIPs: Invalid value: []string{"10.96.0.1"}: failed to allocate IP 10.96.0.1: provided IP is already allocated',
    ],
    [
      'a cluster IP outside the range',
      { clusterIP: '10.1.0.5' },
      'spec.clusterIPs: Invalid value: []string{"10.1.0.5"}: failed to allocate IP 10.1.0.5: the provided IP (10.1.0.5) is not in the valid range. The range of valid IPs is 10.96.0.0/16',
    ],
    [
      'a node port outside the range',
      { type: 'NodePort', ports: [{ port: 80, nodePort: 8080 }] },
      'spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767',
    ],
  ])('%s → 422', async (_, spec, message) => {
    const r = await srv.json('POST', SVCS, svc('refused', spec));
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(`Service "refused" is invalid: ${message}`);
    expect((await srv.json('GET', `${SVCS}/refused`)).status).toBe(404);
  });

  test('a node port in use → 422; the cluster IP taken for the refused create is given back', async () => {
    const a = await srv.json(
      'POST',
      SVCS,
      svc('np-a', { type: 'NodePort', clusterIP: '10.96.0.11', ports: [{ port: 80, nodePort: 30050 }] }),
    );
    expect(a.status).toBe(201);
    const b = await srv.json(
      'POST',
      SVCS,
      svc('np-b', { type: 'NodePort', clusterIP: '10.96.0.12', ports: [{ port: 80, nodePort: 30050 }] }),
    );
    expect(b.status).toBe(422);
    expect(b.body.message).toContain('spec.ports[0].nodePort: Invalid value: 30050: provided port is already allocated');
    const c = await srv.json('POST', SVCS, svc('np-c', { clusterIP: '10.96.0.12' }));
    expect(c.status).toBe(201);
  });

  test('headless and ExternalName Services get no cluster IP', async () => {
    const h = await srv.json('POST', SVCS, svc('headless', { clusterIP: 'None' }));
    expect(h.body.spec.clusterIPs).toEqual(['None']);
    const e = await srv.json('POST', SVCS, { metadata: { name: 'ext' }, spec: { type: 'ExternalName', externalName: 'db.example.com' } });
    expect(e.status).toBe(201);
    expect(e.body.spec.clusterIP).toBeUndefined();
  });
});

describe('release', () => {
  test('delete gives the addresses back', async () => {
    await srv.json('POST', SVCS, svc('gone', { type: 'NodePort', clusterIP: '10.96.0.21', ports: [{ port: 80, nodePort: 30060 }] }));
    expect((await srv.json('DELETE', `${SVCS}/gone`)).status).toBe(200);
    const again = await srv.json(
      'POST',
      SVCS,
      svc('again', { type: 'NodePort', clusterIP: '10.96.0.21', ports: [{ port: 80, nodePort: 30060 }] }),
    );
    expect(again.status).toBe(201);
  });

  test('NodePort → ClusterIP frees the node port; ClusterIP → NodePort allocates one', async () => {
    await srv.json('POST', SVCS, svc('flip', { type: 'NodePort', ports: [{ port: 80, nodePort: 30070 }] }));
    const toClusterIP = await srv.json(
      'PATCH',
      `${SVCS}/flip`,
      { spec: { type: 'ClusterIP', ports: [{ port: 80, nodePort: null }] } },
      { 'content-type': 'application/strategic-merge-patch+json' },
    );
    expect(toClusterIP.status).toBe(200);
    expect(toClusterIP.body.spec.ports[0].nodePort).toBeUndefined();
    expect((await srv.json('POST', SVCS, svc('takes-port', { type: 'NodePort', ports: [{ port: 80, nodePort: 30070 }] }))).status).toBe(
      201,
    );
    const toNodePort = await srv.json(
      'PATCH',
      `${SVCS}/flip`,
      { spec: { type: 'NodePort' } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(toNodePort.status).toBe(200);
    const port = toNodePort.body.spec.ports[0].nodePort;
    expect(port).toBeGreaterThanOrEqual(30000);
    expect(port).not.toBe(30070);
  });

  test('a dry-run create checks but reserves nothing', async () => {
    const dry = await srv.json('POST', `${SVCS}?dryRun=All`, svc('dry', { clusterIP: '10.96.0.33' }));
    expect(dry.status).toBe(201);
    expect(dry.body.spec.clusterIP).toBe('10.96.0.33');
    expect((await srv.json('POST', SVCS, svc('real', { clusterIP: '10.96.0.33' }))).status).toBe(201);
    const dryTaken = await srv.json('POST', `${SVCS}?dryRun=All`, svc('dry2', { clusterIP: '10.96.0.33' }));
    expect(dryTaken.status).toBe(422);
  });
});

test('allocations survive a restart', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-addresses-'));
  const s1 = await startServer({ dataDir });
  const made = await s1.json('POST', SVCS, svc('kept', { type: 'NodePort' }));
  expect(made.status).toBe(201);
  await s1.stop();
  const s2 = await startServer({ dataDir });
  try {
    const { clusterIP, ports } = made.body.spec;
    const ip = await s2.json('POST', SVCS, svc('clash-ip', { clusterIP }));
    expect(ip.status).toBe(422);
    const port = await s2.json('POST', SVCS, svc('clash-port', { type: 'NodePort', ports: [{ port: 80, nodePort: ports[0].nodePort }] }));
    expect(port.status).toBe(422);
    expect((await s2.json('GET', `${SVCS}/kept`)).body.spec.clusterIP).toBe(clusterIP);
  } finally {
    await s2.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}, 30_000);
