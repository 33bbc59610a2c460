/**
 * The fuzzer (bench/fuzz.ts, issue 42 item 4): its judge flags a planted 5xx and a 4xx without a
 * Status, lets the reference's own patch 500s through; the generators are deterministic for a
 * seed; a short run (46 requests per decoder, every decoder: 506) finds no 5xx, no 4xx that changed
 * the store, no crash.
 */
import { expect, test } from 'bun:test';
import { runFuzz } from '../bench/fuzz';
import { DECODERS, type FuzzRequest, generate, judge, type Samples } from '../bench/fuzz-gen';
import { rng } from './helpers/rng';

const req = (decoder: FuzzRequest['decoder']): FuzzRequest => ({ decoder, method: 'POST', path: '/x', headers: {}, write: true });
const samples: Samples = {
  collection: '/api/v1/namespaces/default/configmaps',
  name: 'fuzz',
  json: '{"metadata":{"name":"fuzz"}}',
  yaml: 'metadata:\n  name: fuzz\n',
  protobuf: new Uint8Array([0x6b, 0x38, 0x73, 0, 1, 2, 3]),
  cbor: new Uint8Array([0xd9, 0xd9, 0xf7, 0xa0]),
};

test('the judge: a planted 5xx and a 4xx without a Status are problems; the reference 500s are not', () => {
  expect(judge(req('json'), 500, 'application/json', '{"kind":"Status","message":"boom"}')).toStartWith('500');
  expect(judge(req('json'), 503, 'text/plain', 'down')).toStartWith('503');
  expect(judge(req('json'), 400, 'application/json', '{"error":"x"}')).toContain('without a Status body');
  expect(judge(req('json'), 400, 'application/json', '{"kind":"Status","code":400}')).toBeUndefined();
  expect(judge(req('json'), 404, 'text/plain', '404 page not found')).toContain('without a Status body');
  expect(judge(req('json'), 400, '', '')).toContain('without a Status body');
  expect(judge(req('json'), 400, 'application/yaml', 'kind: Status\ncode: 400\n')).toBeUndefined();
  expect(judge(req('json'), 400, 'application/vnd.kubernetes.protobuf', 'k8s\0\n\x02v1\x12\x06Status')).toBeUndefined();
  expect(judge(req('json'), 200, 'text/plain', 'ok')).toBeUndefined();
  expect(judge(req('smp'), 500, 'application/json', '{"kind":"Status","message":"list element types are not identical"}')).toBeUndefined();
  expect(judge(req('json'), 500, 'application/json', '{"kind":"Status","message":"list element types are not identical"}')).toStartWith(
    '500',
  );
});

test('the generators are deterministic for a seed', () => {
  for (const d of DECODERS) {
    const a = rng(7);
    const b = rng(7);
    for (let i = 0; i < 20; i++) expect(generate(a, d, samples)).toEqual(generate(b, d, samples));
  }
});

test('a short run against a live server', async () => {
  const t = await runFuzz({ perDecoder: 46, seed: 2026 });
  expect(t.problems).toEqual([]);
  expect(t.requests).toBe(46 * DECODERS.length);
}, 120_000);
