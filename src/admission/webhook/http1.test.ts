import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Socket, TCPSocketListener } from 'bun';
import { generateCertificates } from '../../auth/certs';
import { type Http1Request, post1 } from './http1';

/**
 * A raw TLS server whose answers the test writes byte by byte: `answer(request, socket)` is
 * called once per request head received, and counts connections.
 */
let certs: { ca: string; cert: string; key: string };
let server: TCPSocketListener<{ buf: string }>;
let connections = 0;
let answer: (s: Socket<{ buf: string }>, n: number) => void = () => {};
let requests = 0;

beforeAll(async () => {
  certs = await generateCertificates(['127.0.0.1']);
  server = Bun.listen<{ buf: string }>({
    hostname: '127.0.0.1',
    port: 0,
    tls: { cert: certs.cert, key: certs.key },
    socket: {
      open(s) {
        connections++;
        s.data = { buf: '' };
      },
      data(s, d) {
        s.data.buf += d.toString();
        const head = s.data.buf.indexOf('\r\n\r\n');
        if (head < 0) return;
        const len = Number(/content-length: (\d+)/i.exec(s.data.buf)?.[1] ?? 0);
        if (s.data.buf.length < head + 4 + len) return;
        s.data.buf = s.data.buf.slice(head + 4 + len);
        answer(s, ++requests);
      },
    },
  });
});
afterAll(() => server.stop(true));

const req = (timeoutMs = 2000): Http1Request => ({
  host: '127.0.0.1',
  port: server.port,
  path: '/hook?timeout=10s',
  hostHeader: `127.0.0.1:${server.port}`,
  ca: certs.ca,
  body: '{"a":1}',
  headers: { 'Content-Type': 'application/json' },
  timeoutMs,
});

const json = (body: string, extra = '') =>
  `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n${extra}Content-Length: ${body.length}\r\n\r\n${body}`;

test('answers with a length reuse one connection', async () => {
  connections = 0;
  answer = (s, n) => s.write(json(`{"n":${n}}`));
  const a = await post1(req());
  const b = await post1(req());
  expect(JSON.parse(a.body).n + 1).toBe(JSON.parse(b.body).n);
  expect(a.status).toBe(200);
  expect(connections).toBe(1);
});

test('a chunked answer written in pieces', async () => {
  answer = (s) => {
    s.write('HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"a"');
    setTimeout(() => s.write('\r\n3\r\n:42\r\n1\r\n}\r\n0\r\n\r\n'), 20);
  };
  const a = await post1(req());
  expect(a.status).toBe(201);
  expect(JSON.parse(a.body)).toEqual({ a: 42 });
});

test('an idle connection the server closed is replaced; Connection: close is not reused', async () => {
  answer = (s) => s.write(json('{}'));
  await post1(req());
  connections = 0;
  // The next answer closes the connection right after it, without saying so.
  answer = (s) => {
    s.write(json('{"closing":true}'));
    s.end();
  };
  expect(JSON.parse((await post1(req())).body)).toEqual({ closing: true });
  answer = (s) => s.write(json('{"after":true}', 'Connection: close\r\n'));
  expect(JSON.parse((await post1(req())).body)).toEqual({ after: true });
  answer = (s) => s.write(json('{"fresh":true}'));
  expect(JSON.parse((await post1(req())).body)).toEqual({ fresh: true });
  expect(connections).toBeGreaterThanOrEqual(2);
});

test('an answer without a length is read to the end of the connection', async () => {
  answer = (s) => {
    s.write('HTTP/1.1 500 Internal Server Error\r\n\r\noops');
    s.end();
  };
  const a = await post1(req());
  expect(a).toEqual({ status: 500, body: 'oops', close: true });
});

test('a server that never answers: a TimeoutError at the deadline', async () => {
  answer = () => {};
  const t0 = performance.now();
  const e = await post1(req(300)).catch((x: unknown) => x as Error);
  expect((e as Error).name).toBe('TimeoutError');
  expect(performance.now() - t0).toBeGreaterThanOrEqual(290);
});

test('a certificate other roots signed, and a refused connection, fail with their codes', async () => {
  const other = await generateCertificates(['127.0.0.1']);
  answer = (s) => s.write(json('{}'));
  const e = await post1({ ...req(), ca: other.ca }).then(
    () => ({ code: 'answered' }),
    (x: unknown) => x as { code?: string },
  );
  expect(e.code).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  const name = await post1({ ...req(), serverName: 'hook.default.svc' }).then(
    () => ({ code: 'answered' }),
    (x: unknown) => x as { code?: string },
  );
  expect(name.code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  const refused = await post1({ ...req(), port: 9 }).then(
    () => ({ code: 'answered' }),
    (x: unknown) => x as { code?: string },
  );
  expect(refused.code).toBe('ECONNREFUSED');
});
