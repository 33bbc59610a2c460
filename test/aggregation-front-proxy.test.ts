/**
 * Aggregated APIs behind a front proxy (issue 38 item 4): the server started with
 * --proxy-client-cert-file/--proxy-client-key-file presents that certificate to the backend, which
 * requires a client certificate signed by its request-header CA (the reference's
 * --requestheader-client-ca-file) and refuses connections without one; the backend sees the user
 * as X-Remote-User; kube-system/extension-apiserver-authentication tells backends that CA
 * (--requestheader-client-ca-file). Upgrade requests (a websocket, as kubectl exec and port-forward use) to the
 * aggregated group version are proxied to the backend, which echoes what it is sent.
 */
import 'reflect-metadata';
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as x509 from '@peculiar/x509';
import { generateCertificates } from '../src/auth/certs';
import { STATIC_SERVICES_STORAGE, serverForFile } from './helpers/server';
import { until } from './helpers/until';

setDefaultTimeout(30_000);
x509.cryptoProvider.set(crypto);

// biome-ignore lint/suspicious/noExplicitAny: API objects read as JSON
type Any = any;

const NS = 'front-proxy-test';
const SVC = 'echo';
const GROUP = 'echo.example.io';
const GV = `${GROUP}/v1`;
const HOST = Object.values(os.networkInterfaces())
  .flat()
  .find((i) => i?.family === 'IPv4' && !i.internal)?.address;

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A request-header CA and a client certificate it signs (CN front-proxy-client, clientAuth). */
async function frontProxyCerts(): Promise<{ ca: string; cert: string; key: string }> {
  const caKeys = await crypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const notBefore = new Date(Date.now() - 3600_000);
  const notAfter = new Date(Date.now() + 86_400_000);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=front-proxy-ca',
    notBefore,
    notAfter,
    signingAlgorithm: ALG,
    keys: caKeys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.digitalSignature, true),
    ],
  });
  const keys = await crypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject: 'CN=front-proxy-client',
    issuer: ca.subject,
    notBefore,
    notAfter,
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey: caKeys.privateKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
    ],
  });
  const key = x509.PemConverter.encode(await crypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY');
  return { ca: ca.toString('pem'), cert: cert.toString('pem'), key };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'front-proxy-'));
const client = await frontProxyCerts();
fs.writeFileSync(path.join(dir, 'proxy.crt'), client.cert);
fs.writeFileSync(path.join(dir, 'proxy.key'), client.key);
fs.writeFileSync(path.join(dir, 'front-proxy-ca.crt'), client.ca);
const srv = serverForFile({
  args: [
    STATIC_SERVICES_STORAGE,
    `--proxy-client-cert-file=${path.join(dir, 'proxy.crt')}`,
    `--proxy-client-key-file=${path.join(dir, 'proxy.key')}`,
    `--requestheader-client-ca-file=${path.join(dir, 'front-proxy-ca.crt')}`,
    '--requestheader-allowed-names=front-proxy-client',
  ],
});

interface Seen {
  path: string;
  user: string | null;
  groups: string[];
}
const seen: Seen[] = [];
let backend: ReturnType<typeof Bun.serve<{ user: string | null }>> | undefined;
let serving: { ca: string; cert: string; key: string };

beforeAll(async () => {
  if (!HOST) throw new Error('this test needs a network interface with an IPv4 address other than loopback');
  serving = await generateCertificates([`${SVC}.${NS}.svc`, '127.0.0.1']);
  backend = Bun.serve<{ user: string | null }>({
    hostname: '0.0.0.0',
    port: 0,
    // The backend trusts the request-header CA only, and requires a certificate.
    tls: { cert: serving.cert, key: serving.key, ca: client.ca, requestCert: true, rejectUnauthorized: true },
    fetch(req, server) {
      const url = new URL(req.url);
      const h = req.headers;
      seen.push({ path: url.pathname, user: h.get('x-remote-user'), groups: (h.get('x-remote-group') ?? '').split(', ') });
      if (h.get('upgrade')?.toLowerCase() === 'websocket') {
        if (url.pathname.endsWith('/refuse'))
          return Response.json({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 403, reason: 'Forbidden' }, { status: 403 });
        if (server.upgrade(req, { data: { user: h.get('x-remote-user') }, headers: { 'Sec-WebSocket-Protocol': 'v5.channel.k8s.io' } }))
          return undefined;
        return new Response('upgrade failed', { status: 400 });
      }
      if (url.pathname.replace(/\/$/, '') === `/apis/${GV}`)
        return Response.json({
          kind: 'APIResourceList',
          apiVersion: 'v1',
          groupVersion: GV,
          resources: [{ name: 'echoes', singularName: 'echo', namespaced: true, kind: 'Echo', verbs: ['get', 'list'] }],
        });
      if (url.pathname === `/apis/${GV}/namespaces/${NS}/echoes`)
        return Response.json({ kind: 'EchoList', apiVersion: GV, metadata: { resourceVersion: '1' }, items: [] });
      return Response.json({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound' }, { status: 404 });
    },
    websocket: {
      open(ws) {
        ws.send(`hello ${ws.data.user}`);
      },
      message(ws, m) {
        // Echoes binary as binary, text as text; a large message comes back whole.
        ws.send(m);
      },
    },
  });
  const port = backend.port as number;
  expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: NS } })).status).toBe(201);
  expect(
    (
      await srv.json('POST', `/api/v1/namespaces/${NS}/services`, {
        metadata: { name: SVC },
        spec: { ports: [{ name: 'https', port: 443, targetPort: port }] },
      })
    ).status,
  ).toBe(201);
  expect(
    (
      await srv.json('POST', `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`, {
        metadata: { name: `${SVC}-1`, labels: { 'kubernetes.io/service-name': SVC } },
        addressType: 'IPv4',
        endpoints: [{ addresses: [HOST], conditions: { ready: true } }],
        ports: [{ name: 'https', port, protocol: 'TCP' }],
      })
    ).status,
  ).toBe(201);
  const r = await srv.json('POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
    metadata: { name: `v1.${GROUP}` },
    spec: {
      group: GROUP,
      version: 'v1',
      service: { namespace: NS, name: SVC },
      caBundle: Buffer.from(serving.ca).toString('base64'),
      groupPriorityMinimum: 1000,
      versionPriority: 15,
    },
  });
  expect(r.status).toBe(201);
  await until(
    async () => {
      const a = await srv.json('GET', `/apis/apiregistration.k8s.io/v1/apiservices/v1.${GROUP}`);
      return (a.body.status?.conditions ?? []).find((c: Any) => c.type === 'Available');
    },
    (c) => c?.status === 'True',
    8000,
  );
});

afterAll(() => {
  backend?.stop(true);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('the backend requires a client certificate of its request-header CA: the proxy presents --proxy-client-cert-file', async () => {
  // Without a certificate the backend refuses the connection.
  const port = backend?.port as number;
  const direct = await fetch(`https://127.0.0.1:${port}/apis/${GV}`, { tls: { ca: serving.ca } }).then(
    (r) => r.status,
    () => 'refused',
  );
  expect(direct).toBe('refused');
  seen.length = 0;
  const list = await srv.json('GET', `/apis/${GV}/namespaces/${NS}/echoes`);
  expect(list.status).toBe(200);
  expect(list.body.kind).toBe('EchoList');
  const s = seen.find((x) => x.path === `/apis/${GV}/namespaces/${NS}/echoes`) as Seen;
  expect(s).toBeDefined();
  expect(s.user).toBeTruthy();
  expect(s.groups).toContain('system:authenticated');
});

test('kube-system/extension-apiserver-authentication publishes the request-header CA and headers', async () => {
  const cm = await srv.json('GET', '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication');
  expect(cm.status).toBe(200);
  expect(cm.body.data).toEqual({
    'requestheader-client-ca-file': client.ca,
    'requestheader-allowed-names': '["front-proxy-client"]',
    'requestheader-username-headers': '["X-Remote-User"]',
    'requestheader-uid-headers': '["X-Remote-Uid"]',
    'requestheader-group-headers': '["X-Remote-Group"]',
    'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
  });
});

/** A WebSocket through the server to the backend, as kubectl exec opens one. */
function openSocket(p: string, token = srv.token): Promise<{ ws: WebSocket; messages: (string | Uint8Array)[]; closed: Promise<number> }> {
  const ws = new WebSocket(`${srv.url.replace(/^https/, 'wss')}${p}`, {
    headers: { Authorization: `Bearer ${token}` },
    protocols: ['v5.channel.k8s.io', 'v4.channel.k8s.io'],
    tls: { ca: srv.ca },
  } as unknown as string[]);
  ws.binaryType = 'arraybuffer';
  const messages: (string | Uint8Array)[] = [];
  ws.onmessage = (e) => messages.push(typeof e.data === 'string' ? e.data : new Uint8Array(e.data as ArrayBuffer));
  const closed = new Promise<number>((resolve) => {
    ws.onclose = (e) => resolve(e.code);
  });
  return new Promise((resolve, reject) => {
    ws.onopen = () => resolve({ ws, messages, closed });
    ws.onerror = () => reject(new Error('the WebSocket did not open'));
  });
}

test('a WebSocket upgrade to the aggregated group version reaches the backend and echoes both ways', async () => {
  seen.length = 0;
  const exec = `/apis/${GV}/namespaces/${NS}/echoes/one/exec?command=sh&stdin=true`;
  const { ws, messages, closed } = await openSocket(exec);
  // The subprotocol the backend chose; the user as X-Remote-User on the upgrade request.
  expect(ws.protocol).toBe('v5.channel.k8s.io');
  const s = seen.find((x) => x.path === `/apis/${GV}/namespaces/${NS}/echoes/one/exec`) as Seen;
  expect(s.user).toBeTruthy();
  await until(
    async () => messages.length,
    (n) => n >= 1,
    3000,
  );
  expect(messages[0]).toBe(`hello ${s.user}`);
  ws.send('text message');
  const big = new Uint8Array(200_000).map((_, i) => i & 0xff);
  ws.send(new Uint8Array([0, 1, 2, 255]));
  ws.send(big);
  await until(
    async () => messages.length,
    (n) => n >= 4,
    5000,
  );
  expect(messages[1]).toBe('text message');
  expect(messages[2]).toEqual(new Uint8Array([0, 1, 2, 255]));
  expect(messages[3]).toEqual(big);
  ws.close(1000, 'done');
  expect(await closed).toBe(1000);
});

test('an upgrade the backend refuses comes back as its answer; an unauthorized one never reaches it', async () => {
  // Not a WebSocket: the front end cannot pass it through.
  const r = await srv.fetch(`/apis/${GV}/namespaces/${NS}/echoes`, {
    headers: { Connection: 'Upgrade', Upgrade: 'SPDY/3.1' },
  });
  expect(r.status).toBe(400);
  expect(await r.text()).toContain('upgrade to "SPDY/3.1" is not supported');
  const refused = await srv.fetch(`/apis/${GV}/namespaces/${NS}/echoes/one/refuse`, {
    headers: {
      Connection: 'Upgrade',
      Upgrade: 'websocket',
      'Sec-WebSocket-Version': '13',
      'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
    },
  });
  expect(refused.status).toBe(403);
  expect(await refused.json()).toMatchObject({ kind: 'Status', code: 403, reason: 'Forbidden' });
  seen.length = 0;
  const denied = await openSocket(`/apis/${GV}/namespaces/${NS}/echoes/one/exec`, 'not-a-token').then(
    () => 'opened',
    (e: Error) => e.message,
  );
  expect(denied).toBe('the WebSocket did not open');
  expect(seen).toEqual([]);
});
