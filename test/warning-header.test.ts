/**
 * Warnings whose text is past Latin-1 (an unknown field named in any script, found by the fuzzer,
 * bench/fuzz.ts seed 2026, cbor #42): the write succeeds with its `Warning: 299` header carrying
 * the text's UTF-8 bytes, as the reference sends it (it answered 500 "Header 'Warning' has
 * invalid value"); kubectl prints the warning as written.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { type Server, startServer } from './helpers/server';

let srv: Server;
beforeAll(async () => {
  srv = await startServer({ args: ['--feature-gates=CBORServingAndStorage=true'] });
});
afterAll(async () => {
  await srv?.stop();
});

const CM = '/api/v1/namespaces/default/configmaps';
const utf8 = (h: string | null) => Buffer.from(h ?? '', 'latin1').toString('utf8');

test('an unknown field named 日本 in JSON: 201 with the warning in UTF-8', async () => {
  const r = await srv.fetch(`${CM}?fieldValidation=Warn`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nihon' }, 日本: 1 }),
  });
  expect(r.status).toBe(201);
  expect(utf8(r.headers.get('warning'))).toBe('299 - "unknown field \\"日本\\""');
});

test("the same field in CBOR (the fuzzer's case): 201, not 500", async () => {
  const { encode } = await import('cbor-x');
  const body = new Uint8Array([
    0xd9,
    0xd9,
    0xf7,
    ...encode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nihon-cbor' }, ü日: 1 }),
  ]);
  const r = await srv.fetch(`${CM}?fieldValidation=Warn`, { method: 'POST', headers: { 'content-type': 'application/cbor' }, body });
  expect(r.status).toBe(201);
  expect(utf8(r.headers.get('warning'))).toContain('unknown field \\"ü日\\"');
});

test('kubectl prints the warning as written', () => {
  const r = srv.kubectl(
    ['create', '--validate=warn', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nihon-kubectl', namespace: 'default' }, 日本: 1 }),
  );
  expect(r.code).toBe(0);
  expect(r.stderr).toContain('unknown field "日本"');
});
