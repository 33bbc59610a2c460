import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import * as https from 'node:https';
import * as tls from 'node:tls';
import { generateCertificates } from '../auth/certs';
import { backendHeaders, headerKeyEscape } from './proxy';
import { send, transportError } from './transport';

describe('headerKeyEscape (client-go)', () => {
  test.each([
    ['scopes', 'scopes'],
    ['authentication.kubernetes.io/pod-name', 'authentication.kubernetes.io%2Fpod-name'],
    ['with space', 'with%20space'],
    ['100%', '100%25'],
    ['ä', '%C3%A4'],
  ])('%s -> %s', (key, want) => {
    expect(headerKeyEscape(key)).toBe(want);
  });
});

describe('backendHeaders', () => {
  test('strips credentials, impersonation, hop-by-hop and forged X-Remote headers; sets the user', () => {
    const from = new Headers({
      Authorization: 'Bearer secret',
      'Impersonate-User': 'bob',
      'Impersonate-Group': 'g',
      'X-Remote-User': 'forged',
      'X-Remote-Extra-Foo': 'forged',
      Connection: 'keep-alive',
      'Transfer-Encoding': 'chunked',
      Accept: 'application/json',
      'User-Agent': 'kubectl',
    });
    const h = backendHeaders(from, { name: 'alice', uid: 'u1', groups: ['a', 'b'], extra: { 'x/y': ['1', '2'] } }, 'audit-1', true);
    expect(h).toEqual({
      accept: 'application/json',
      'user-agent': 'kubectl',
      'X-Remote-User': 'alice',
      'X-Remote-Uid': 'u1',
      'X-Remote-Group': ['a', 'b'],
      'X-Remote-Extra-x%2Fy': ['1', '2'],
      'Audit-ID': 'audit-1',
    });
  });
});

describe('send', () => {
  let server: tls.Server;
  let port = 0;
  let raw = '';
  let ca = '';
  const agent = new https.Agent({ keepAlive: true });

  beforeAll(async () => {
    const c = await generateCertificates(['api.ns.svc']);
    ca = c.ca;
    // A raw TLS server: the request's header lines as they came over the wire.
    server = tls.createServer({ cert: c.cert, key: c.key }, (s) => {
      s.on('data', (d) => {
        raw = d.toString();
        s.end('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nWarning: 299 - "one"\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => {
    server.close();
    agent.destroy();
  });

  test('one X-Remote-Group line per group; the caBundle verified for the service name', async () => {
    const res = await send({
      hostPort: `127.0.0.1:${port}`,
      path: '/apis/g/v1?x=1',
      method: 'GET',
      headers: { 'X-Remote-User': 'alice', 'X-Remote-Group': ['a', 'b'] },
      tls: { ca, serverName: 'api.ns.svc', rejectUnauthorized: true },
      signal: AbortSignal.timeout(3000),
      agent,
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok');
    expect(res.headers.get('warning')).toBe('299 - "one"');
    expect(res.headers.get('connection')).toBeNull();
    expect(raw.startsWith('GET /apis/g/v1?x=1 HTTP/1.1\r\n')).toBe(true);
    expect(raw.split('\r\n').filter((l) => l.toLowerCase().startsWith('x-remote-group:'))).toEqual([
      'X-Remote-Group: a',
      'X-Remote-Group: b',
    ]);
  });

  test('a certificate not valid for the service name is refused', async () => {
    const err = await send({
      hostPort: `127.0.0.1:${port}`,
      path: '/',
      method: 'GET',
      headers: {},
      tls: { ca, serverName: 'other.ns.svc', rejectUnauthorized: true },
      signal: AbortSignal.timeout(3000),
      agent,
    }).catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    expect(transportError(err, `127.0.0.1:${port}`, 'other.ns.svc')).toBe(
      'tls: failed to verify certificate: x509: certificate is valid for api.ns.svc, not other.ns.svc',
    );
  });

  test('a closed port: the words of Go', async () => {
    const err = await send({
      hostPort: '127.0.0.1:1',
      path: '/',
      method: 'GET',
      headers: {},
      tls: { rejectUnauthorized: false },
      signal: AbortSignal.timeout(3000),
      agent,
    }).catch((e) => e);
    expect(transportError(err, '127.0.0.1:1')).toBe('dial tcp 127.0.0.1:1: connect: connection refused');
  });
});
