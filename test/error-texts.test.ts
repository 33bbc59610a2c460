/**
 * Issue 34 item 6: decode and patch errors worded as the reference's (clients and kubectl's own
 * tests match these texts): a body that is JSON but not an object, a metadata that is not an
 * object, a strategic merge patch whose map field is a string; and JSON null decodes as {}.
 * Nothing is stored by any of them. The table of every other decode and patch failure:
 * test/error-texts-table.test.ts.
 */
import { expect, test } from 'bun:test';
import { STATIC_WORKLOADS, serverForFile } from './helpers/server';

const srv = serverForFile({ args: [STATIC_WORKLOADS] });
const TYPE_META = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

test('a body that is not an object: the object provided is unrecognized, with the body in hex', async () => {
  const cases: [string, string, string][] = [
    ['[]', 'array', '5b5d'],
    ['"x"', 'string', '227822'],
    ['12', 'number', '3132'],
    ['true', 'bool', '74727565'],
  ];
  for (const [body, type, hex] of cases) {
    const r = await srv.json('POST', '/api/v1/namespaces', body);
    expect(r.status).toBe(400);
    expect(r.body.reason).toBe('BadRequest');
    expect(r.body.message).toBe(
      `the object provided is unrecognized (must be of type Namespace): couldn't get version/kind; json parse error: json: cannot unmarshal ${type} into Go value of type ${TYPE_META} (${hex})`,
    );
  }
  // JSON null is an empty object: the kind comes from the URL, the name is then required.
  const nul = await srv.json('POST', '/api/v1/namespaces', 'null');
  expect(nul.status).toBe(422);
  expect(nul.body.message).toBe('Namespace "" is invalid: metadata.name: Required value: name or generateName is required');
  const meta = await srv.json('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: [] });
  expect(meta.status).toBe(400);
  expect(meta.body.message).toBe(
    'Namespace in version "v1" cannot be handled as a Namespace: json: cannot unmarshal array into Go struct field Namespace.metadata of type v1.ObjectMeta',
  );
});

test('a strategic merge patch that makes a map a string: cannot restore map from string (422 on patch)', async () => {
  const smp = { 'content-type': 'application/strategic-merge-patch+json' };
  const r = await srv.json('PATCH', '/api/v1/namespaces/default', { metadata: { labels: 'x' } }, smp);
  expect(r.status).toBe(422);
  expect(r.body.reason).toBe('Invalid');
  expect(r.body.message).toBe(' "" is invalid: patch: Invalid value: "map[metadata:map[labels:x]]": cannot restore map from string');
  expect(r.body.details.kind).toBeUndefined();
  expect(r.body.details.causes).toEqual([
    {
      reason: 'FieldValueInvalid',
      message: 'Invalid value: "map[metadata:map[labels:x]]": cannot restore map from string',
      field: 'patch',
    },
  ]);
  const list = await srv.json('PATCH', '/api/v1/namespaces/default', { spec: { finalizers: 'kubernetes' } }, smp);
  expect(list.status).toBe(422);
  expect(list.body.message).toContain('cannot restore slice from string');
  // A merge patch of the same is the decoder's error on the patched JSON (422 on the field `patch`, the
  // reference's jsonPatcher); the cases below check its text.
  const merge = await srv.json(
    'PATCH',
    '/api/v1/namespaces/default',
    { metadata: { labels: 'x' } },
    { 'content-type': 'application/merge-patch+json' },
  );
  expect(merge.status).toBe(422);
  const ns = (await srv.json('GET', '/api/v1/namespaces/default')).body;
  expect(ns.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'default' });
});

test('Status bodies are the reference bytes: details before code, and a final newline (as Go writes them)', async () => {
  const dep = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'twice' },
    spec: {
      selector: { matchLabels: { app: 'twice' } },
      template: { metadata: { labels: { app: 'twice' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    },
  };
  expect((await srv.json('POST', '/apis/apps/v1/namespaces/default/deployments', dep)).status).toBe(201);
  const r = await srv.fetch('/apis/apps/v1/namespaces/default/deployments', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(dep),
  });
  expect(r.status).toBe(409);
  expect(await r.text()).toBe(
    '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"deployments.apps \\"twice\\" already exists","reason":"AlreadyExists","details":{"name":"twice","group":"apps","kind":"deployments"},"code":409}\n',
  );
  // Objects and lists end with the newline too.
  const get = await srv.fetch('/apis/apps/v1/namespaces/default/deployments/twice');
  expect((await get.text()).endsWith('}\n')).toBe(true);
  const list = await srv.fetch('/apis/apps/v1/namespaces/default/deployments');
  expect((await list.text()).endsWith(']}\n')).toBe(true);
});

test('curl, wget and browsers get indented JSON (the reference isPrettyPrint); ?pretty=false wins', async () => {
  const get = (p: string, ua: string) => srv.fetch(p, { headers: { 'user-agent': ua } }).then((r) => r.text());
  for (const ua of ['curl/8.5.0', 'Wget/1.21.3', 'Mozilla/5.0 (X11; Linux x86_64)']) {
    expect(await get('/api/v1/namespaces/default', ua)).toStartWith('{\n  "kind": "Namespace",');
    expect(await get('/api/v1/namespaces/nope', ua)).toStartWith('{\n  "kind": "Status",');
  }
  expect(await get('/api/v1/namespaces/default?pretty=false', 'curl/8.5.0')).toStartWith('{"kind":"Namespace",');
  expect(await get('/api/v1/namespaces/default', 'kubectl/v1.32.4')).toStartWith('{"kind":"Namespace",');
  expect(await get('/api/v1/namespaces/default?pretty=true', 'kubectl/v1.32.4')).toStartWith('{\n  "kind": "Namespace",');
});
