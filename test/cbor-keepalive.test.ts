/**
 * Issue 34 item 9: a CBOR list on a freshly started server, after JSON writes, a CBOR read and a
 * create from a CBOR body, all on one keep-alive connection of Node's https (the client the
 * report used): every answer comes, within a bound, in the media type asked for. Run by Node
 * itself (not Bun's node:https), with the request bodies sent both with a length and chunked.
 */
import { expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startServer } from './helpers/server';

const ROOT = path.resolve(import.meta.dir, '..');

/** The client: one keep-alive agent with one socket; prints one JSON line per answer. */
const CLIENT = `
const https = require('node:https');
const { createRequire } = require('node:module');
const { encode, Decoder } = createRequire(${JSON.stringify(`${ROOT}/package.json`)})('cbor-x');
// The server writes strings as byte strings, as the reference does (map keys too): read them as text.
const raw = new Decoder({ mapsAsObjects: false });
const text = (v) =>
  v instanceof Map ? Object.fromEntries([...v].map(([k, x]) => [Buffer.isBuffer(k) || k instanceof Uint8Array ? Buffer.from(k).toString() : k, text(x)]))
  : Array.isArray(v) ? v.map(text)
  : v instanceof Uint8Array ? Buffer.from(v).toString()
  : v;
const decode = (b) => text(raw.decode(b));
const [port, token, caFile, chunked] = process.argv.slice(2);
const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: require('node:fs').readFileSync(caFile) });
let sockets = 0;
function req(method, p, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const h = { Authorization: 'Bearer ' + token, ...headers };
    if (body && chunked !== 'chunked') h['Content-Length'] = body.length;
    const r = https.request({ host: '127.0.0.1', port: Number(port), method, path: p, agent, headers: h }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'], body: Buffer.concat(chunks) }));
    });
    r.on('socket', (s) => { if (!s.counted) { s.counted = true; sockets++; } });
    r.setTimeout(10000, () => r.destroy(new Error('no answer within 10 s: ' + method + ' ' + p)));
    r.on('error', reject);
    if (body) r.write(body);
    r.end();
  });
}
(async () => {
  const J = { 'Content-Type': 'application/json' };
  const out = [];
  const ns = 'cbor-' + chunked;
  const note = (what, r, obj) => out.push({ what, status: r.status, type: r.type, obj });
  let r = await req('POST', '/api/v1/namespaces', Buffer.from(JSON.stringify({ metadata: { name: ns } })), J);
  note('namespace', r);
  r = await req('POST', '/api/v1/namespaces/' + ns + '/configmaps', Buffer.from(JSON.stringify({ metadata: { name: 'a' }, data: { x: '1' } })), J);
  note('create json', r);
  r = await req('GET', '/api/v1/namespaces/' + ns + '/configmaps/a', undefined, { Accept: 'application/cbor' });
  note('get cbor', r, decode(r.body).data);
  const body = encode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b' }, data: { y: '2' } });
  r = await req('POST', '/api/v1/namespaces/' + ns + '/configmaps', body, { 'Content-Type': 'application/cbor', Accept: 'application/json' });
  note('create cbor', r, JSON.parse(r.body.toString()).data);
  r = await req('GET', '/api/v1/namespaces/' + ns + '/configmaps', undefined, { Accept: 'application/cbor' });
  note('list cbor', r, decode(r.body).items.map((i) => i.metadata.name));
  r = await req('GET', '/api/v1/namespaces/' + ns + '/configmaps?limit=1', undefined, { Accept: 'application/cbor' });
  note('page cbor', r, decode(r.body).items.map((i) => i.metadata.name));
  agent.destroy();
  console.log(JSON.stringify({ out, sockets }));
})().catch((e) => { console.log(JSON.stringify({ error: String(e) })); process.exit(1); });
`;

test('a CBOR list after JSON and CBOR writes on one keep-alive connection is answered (Node https)', async () => {
  const srv = await startServer({ args: ['--feature-gates=CBORServingAndStorage=true'] });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cbor-ka-'));
  try {
    const script = path.join(dir, 'client.cjs');
    fs.writeFileSync(script, CLIENT);
    const ca = path.join(dir, 'ca.crt');
    fs.writeFileSync(ca, srv.ca);
    for (const mode of ['length', 'chunked']) {
      const t0 = Date.now();
      const p = Bun.spawnSync(['node', script, String(srv.port), srv.token, ca, mode], { timeout: 30_000 });
      const res = JSON.parse(p.stdout.toString() || '{}');
      expect(res.error).toBeUndefined();
      expect(res.sockets).toBe(1);
      expect(res.out.map((o: { status: number; type: string }) => [o.status, o.type])).toEqual([
        [201, 'application/json'],
        [201, 'application/json'],
        [200, 'application/cbor'],
        [201, 'application/json'],
        [200, 'application/cbor'],
        [200, 'application/cbor'],
      ]);
      expect(res.out[2].obj).toEqual({ x: '1' });
      expect(res.out[3].obj).toEqual({ y: '2' });
      expect(res.out[4].obj).toEqual(['a', 'b']);
      expect(res.out[5].obj).toEqual(['a']);
      expect(Date.now() - t0).toBeLessThan(25_000);
    }
  } finally {
    await srv.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 90_000);
