/**
 * The etcd backend over TLS with client certificates (issue 18 item 1: --etcd-cafile,
 * --etcd-certfile, --etcd-keyfile), as a production etcd runs: etcd with --client-cert-auth on
 * an https client URL; the server with the three flags writes, reads and watches through it; a
 * server whose CA does not know etcd's certificate never becomes ready. Certificates are made
 * with openssl for the test. Needs etcd and openssl (helpers/needs: a failure under CI, else a
 * skip with a message).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ETCD_BIN } from '../bench/etcd';
import { needs } from './helpers/needs';
import { freePort, type Server, startServer } from './helpers/server';
import { until } from './helpers/until';
import { openWatch } from './helpers/watch';

function openssl(dir: string, args: string[]): void {
  const r = spawnSync('/usr/bin/openssl', args, { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr}`);
}

/** A CA and a certificate it signs for `name` (EC P-256, a day). */
function certs(dir: string, ca: string, name: string, ext: string): void {
  openssl(dir, [
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${name}`,
  ]);
  fs.writeFileSync(path.join(dir, `${name}.ext`), ext);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.crt`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-out',
    `${name}.crt`,
    '-days',
    '1',
    '-extfile',
    `${name}.ext`,
  ]);
}

function makeCa(dir: string, name: string): void {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.crt`,
    '-days',
    '1',
    '-subj',
    `/CN=${name}`,
  ]);
}

needs('etcd', 'openssl').describe('etcd over TLS with client certificates', () => {
  let dir: string;
  let etcd: ChildProcess;
  let endpoint: string;
  let srv: Server;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-etcd-tls-'));
    makeCa(dir, 'ca');
    makeCa(dir, 'other-ca');
    certs(dir, 'ca', 'etcd', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n');
    certs(dir, 'ca', 'apiserver', 'extendedKeyUsage=clientAuth\n');
    const [clientPort, peerPort] = [await freePort(), await freePort()];
    endpoint = `https://127.0.0.1:${clientPort}`;
    etcd = spawn(
      ETCD_BIN,
      [
        '--name=tls',
        `--data-dir=${path.join(dir, 'data')}`,
        `--listen-client-urls=${endpoint}`,
        `--advertise-client-urls=${endpoint}`,
        `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
        `--initial-cluster=tls=http://127.0.0.1:${peerPort}`,
        `--cert-file=${path.join(dir, 'etcd.crt')}`,
        `--key-file=${path.join(dir, 'etcd.key')}`,
        `--trusted-ca-file=${path.join(dir, 'ca.crt')}`,
        '--client-cert-auth',
        '--log-level=warn',
      ],
      { stdio: 'ignore' },
    );
    const tls = {
      ca: fs.readFileSync(path.join(dir, 'ca.crt'), 'utf8'),
      cert: fs.readFileSync(path.join(dir, 'apiserver.crt'), 'utf8'),
      key: fs.readFileSync(path.join(dir, 'apiserver.key'), 'utf8'),
    };
    await until(
      () =>
        fetch(`${endpoint}/health`, { tls } as RequestInit)
          .then((r) => r.status)
          .catch(() => 0),
      (s) => s === 200,
      20_000,
    );
    srv = await startServer({
      args: [
        `--etcd-servers=${endpoint}`,
        `--etcd-cafile=${path.join(dir, 'ca.crt')}`,
        `--etcd-certfile=${path.join(dir, 'apiserver.crt')}`,
        `--etcd-keyfile=${path.join(dir, 'apiserver.key')}`,
      ],
    });
  }, 60_000);
  afterAll(async () => {
    await srv?.stop();
    etcd?.kill('SIGKILL');
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  test('writes, reads and a watch go through the TLS connection', async () => {
    const P = '/api/v1/namespaces/default/configmaps';
    const w = await openWatch(srv, `${P}?watch=1`);
    try {
      const c = await srv.json('POST', P, { metadata: { name: 'over-tls' }, data: { a: '1' } });
      expect(c.status).toBe(201);
      await w.until((e) => e.type === 'ADDED' && e.object.metadata.name === 'over-tls', 5000);
      const g = await srv.json('GET', `${P}/over-tls`);
      expect(g.status).toBe(200);
      expect(g.body.data).toEqual({ a: '1' });
      expect(g.body.metadata.resourceVersion).toBe(c.body.metadata.resourceVersion);
    } finally {
      w.close();
    }
  });

  test('a server that does not trust the certificate authority of etcd cannot use it', async () => {
    const port = await freePort();
    const p = Bun.spawn(
      [
        process.execPath,
        path.join(import.meta.dir, '../src/main.ts'),
        `--port=${port}`,
        `--data-dir=${path.join(dir, 'wrong')}`,
        `--etcd-servers=${endpoint}`,
        `--etcd-cafile=${path.join(dir, 'other-ca.crt')}`,
        `--etcd-certfile=${path.join(dir, 'apiserver.crt')}`,
        `--etcd-keyfile=${path.join(dir, 'apiserver.key')}`,
      ],
      { stdout: 'pipe', stderr: 'pipe' },
    );
    const exited = await Promise.race([p.exited, Bun.sleep(15_000).then(() => 'running' as const)]);
    if (exited === 'running') p.kill();
    expect(exited).not.toBe(0);
    expect(exited).not.toBe('running');
    const err = await new Response(p.stderr).text();
    expect(err).toContain('cannot open the store');
  }, 30_000);
});
