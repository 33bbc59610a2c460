/**
 * Query parameters as real clients spell them (issue 9, items 1 and 4): booleans take Go's
 * strconv.ParseBool spellings (the Python client sends `watch=True`), integers strconv.ParseInt;
 * anything else is 400 and changes nothing. Dry-run writes answer what the real write would.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { serverForFile } from './helpers/server';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const srv = serverForFile();
const NS = '/api/v1/namespaces/default';

beforeAll(async () => {
  const r = await srv.json('POST', `${NS}/configmaps`, { metadata: { name: 'qp' }, data: { a: '1' } });
  expect(r.status).toBe(201);
});

/** The first JSON document of a response body (a list, or a watch stream's first event). */
async function firstDocument(path: string): Promise<{ status: number; doc: Json }> {
  const r = await srv.fetch(path);
  const text = await r.text();
  return { status: r.status, doc: JSON.parse(text.split('\n')[0] as string) };
}

describe('booleans are parsed as strconv.ParseBool', () => {
  test.each(['1', 't', 'T', 'TRUE', 'true', 'True'])('watch=%s opens a watch', async (v) => {
    const { status, doc } = await firstDocument(`${NS}/configmaps?watch=${v}&timeoutSeconds=1`);
    expect(status).toBe(200);
    expect(doc.type).toBe('ADDED');
    expect(doc.object.metadata.name).toBe('qp');
  });

  test.each(['0', 'f', 'F', 'FALSE', 'false', 'False'])('watch=%s lists', async (v) => {
    const { status, doc } = await firstDocument(`${NS}/configmaps?watch=${v}`);
    expect(status).toBe(200);
    expect(doc.kind).toBe('ConfigMapList');
  });

  test.each([
    ['watch', 'yes'],
    ['watch', ''],
    ['watch', 'tRUE'],
    ['allowWatchBookmarks', 'on'],
    ['sendInitialEvents', '2'],
  ])('%s=%s → 400 with Go text', async (name, v) => {
    const r = await srv.json('GET', `${NS}/configmaps?${name}=${v}`);
    expect(r.status).toBe(400);
    expect(r.body.kind).toBe('Status');
    expect(r.body.reason).toBe('BadRequest');
    expect(r.body.message).toContain(`${name}: Invalid value: "${v}": strconv.ParseBool: parsing "${v}": invalid syntax`);
  });

  test('pretty=1 indents, pretty=0 does not', async () => {
    const on = await (await srv.fetch(`${NS}/configmaps/qp?pretty=1`)).text();
    const off = await (await srv.fetch(`${NS}/configmaps/qp?pretty=0`)).text();
    expect(on).toContain('\n  "');
    // Compact, with the final newline Go's encoder writes.
    expect(off).not.toContain('\n ');
    expect(off).toEndWith('}\n');
    // A malformed pretty is false, as the reference's isPrettyPrint (it ignores ParseBool's error).
    const bad = await srv.fetch(`${NS}/configmaps/qp?pretty=y`);
    expect(bad.status).toBe(200);
    expect(await bad.text()).not.toContain('\n ');
  });

  test('force=yes on apply → 400, the object is unchanged', async () => {
    const r = await srv.fetch(`${NS}/configmaps/qp?fieldManager=m&force=yes`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/apply-patch+yaml' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'qp' }, data: { a: '2' } }),
    });
    expect(r.status).toBe(400);
    const cm = await srv.json('GET', `${NS}/configmaps/qp`);
    expect(cm.body.data).toEqual({ a: '1' });
  });
});

describe('integers are parsed as strconv.ParseInt', () => {
  test.each([
    ['limit', 'ten', 'invalid syntax'],
    ['limit', '1.5', 'invalid syntax'],
    ['limit', '99999999999999999999', 'value out of range'],
    ['timeoutSeconds', 'x', 'invalid syntax'],
  ])('%s=%s → 400 (%s)', async (name, v, why) => {
    const r = await srv.json('GET', `${NS}/configmaps?${name}=${v}`);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(`${name}: Invalid value: "${v}": strconv.ParseInt: parsing "${v}": ${why}`);
  });

  test('limit=%2B1 (+1) pages; a negative limit means no limit', async () => {
    await srv.json('POST', `${NS}/configmaps`, { metadata: { name: 'qp2' } });
    const one = await srv.json('GET', `${NS}/configmaps?limit=%2B1`);
    expect(one.status).toBe(200);
    expect(one.body.items).toHaveLength(1);
    expect(one.body.metadata.continue).toBeTruthy();
    const all = await srv.json('GET', `${NS}/configmaps?limit=-5`);
    expect(all.status).toBe(200);
    expect(all.body.items.length).toBeGreaterThanOrEqual(2);
    expect(all.body.metadata.continue).toBeUndefined();
  });

  test('gracePeriodSeconds=soon on delete → 400, the object stays', async () => {
    const r = await srv.json('DELETE', `${NS}/configmaps/qp2?gracePeriodSeconds=soon`);
    expect(r.status).toBe(400);
    expect((await srv.json('GET', `${NS}/configmaps/qp2`)).status).toBe(200);
  });
});

describe('dry run answers what the write would', () => {
  test('dry-run create of a name in use → 409 AlreadyExists', async () => {
    const r = await srv.json('POST', `${NS}/configmaps?dryRun=All`, { metadata: { name: 'qp' } });
    expect(r.status).toBe(409);
    expect(r.body.reason).toBe('AlreadyExists');
    expect(r.body.message).toBe('configmaps "qp" already exists');
    expect(r.body.details).toEqual({ name: 'qp', kind: 'configmaps' });
  });

  test('dry-run create of a new name → 201 and nothing stored', async () => {
    const r = await srv.json('POST', `${NS}/configmaps?dryRun=All`, { metadata: { name: 'qp-dry' } });
    expect(r.status).toBe(201);
    expect((await srv.json('GET', `${NS}/configmaps/qp-dry`)).status).toBe(404);
  });

  test('dry-run update with a stale resourceVersion → 409 Conflict', async () => {
    const cur = await srv.json('GET', `${NS}/configmaps/qp`);
    const stale = { ...cur.body, metadata: { ...cur.body.metadata, resourceVersion: '1' } };
    for (const q of ['?dryRun=All', '']) {
      const r = await srv.json('PUT', `${NS}/configmaps/qp${q}`, stale);
      expect(r.status).toBe(409);
      expect(r.body.reason).toBe('Conflict');
    }
  });
});
