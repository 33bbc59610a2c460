/**
 * managedFields through the patches a load test sends most (a controller's label patch, a
 * kubelet's status patch), over real HTTP. A merge or strategic merge patch that cannot reach
 * managedFields hands the current list to its result instead of a copy (leavesManagedFields in
 * src/registry/patch): the same writes as JSON patches, which always copy, must leave the same
 * ownership, entry by entry, and the other managers' entries exactly as they were.
 */
import { expect, test } from 'bun:test';
import { serverForFile } from './helpers/server';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const srv = serverForFile();
const NS = '/api/v1/namespaces/default/pods';

const MERGE = { 'content-type': 'application/merge-patch+json' };
const STRATEGIC = { 'content-type': 'application/strategic-merge-patch+json' };
const JSONPATCH = { 'content-type': 'application/json-patch+json' };

async function create(name: string): Promise<void> {
  const r = await srv.json('POST', `${NS}?fieldManager=creator`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'a' } },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'registry.example/app:1' }] },
  });
  expect(r.status).toBe(201);
}

/** The entries without their times, by manager. */
const owners = (o: Json) =>
  Object.fromEntries((o.metadata.managedFields as Json[]).map((e) => [`${e.manager}/${e.subresource ?? ''}`, { ...e, time: undefined }]));

/** The same four writes: labels by `labeler`, status by `kubelet`, the label again, a label removed. */
async function writes(name: string, asJsonPatch: boolean): Promise<Json[]> {
  const p = `${NS}/${name}`;
  const send = async (path: string, merge: Json, strategic: boolean, ops: Json[]) => {
    const r = asJsonPatch
      ? await srv.json('PATCH', path, ops, JSONPATCH)
      : await srv.json('PATCH', path, merge, strategic ? STRATEGIC : MERGE);
    expect(r.status).toBe(200);
    return r.body;
  };
  const out: Json[] = [];
  out.push(
    await send(`${p}?fieldManager=labeler`, { metadata: { labels: { rev: 'r1' } } }, false, [
      { op: 'add', path: '/metadata/labels/rev', value: 'r1' },
    ]),
  );
  out.push(
    await send(
      `${p}/status?fieldManager=kubelet`,
      { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
      true,
      [
        { op: 'add', path: '/status/phase', value: 'Running' },
        { op: 'add', path: '/status/conditions', value: [{ type: 'Ready', status: 'True' }] },
      ],
    ),
  );
  out.push(
    await send(`${p}?fieldManager=labeler`, { metadata: { labels: { rev: 'r2' } } }, true, [
      { op: 'replace', path: '/metadata/labels/rev', value: 'r2' },
    ]),
  );
  out.push(
    await send(`${p}?fieldManager=labeler`, { metadata: { labels: { app: null } } }, false, [
      { op: 'remove', path: '/metadata/labels/app' },
    ]),
  );
  return out;
}

test('label and status patches: merge and strategic patches own what the same JSON patches own', async () => {
  await create('lent');
  await create('copied');
  const lent = await writes('lent', false);
  const copied = await writes('copied', true);
  for (let i = 0; i < lent.length; i++) expect(owners(lent[i])).toEqual(owners(copied[i]));
  // After the first label patch: the creator's entry as created, the labeler's with its label only.
  const first = owners(lent[0]);
  expect(Object.keys(first['labeler/'].fieldsV1)).toEqual(['f:metadata']);
  expect(first['labeler/'].fieldsV1['f:metadata']['f:labels']['f:rev']).toEqual({});
  expect(first['creator/'].fieldsV1['f:metadata']).toEqual({ 'f:labels': { '.': {}, 'f:app': {} } });
  // The status patch: the kubelet's entry on the status subresource; the others untouched.
  const second = owners(lent[1]);
  expect(second['kubelet/status'].fieldsV1['f:status']['f:phase']).toEqual({});
  expect(second['creator/']).toEqual(first['creator/']);
  expect(second['labeler/']).toEqual(first['labeler/']);
  // Removing the creator's label takes it out of the creator's entry.
  const last = owners(lent[3]);
  expect(last['creator/'].fieldsV1['f:metadata']?.['f:labels']?.['f:app']).toBeUndefined();
  expect(lent[3].metadata.labels).toEqual({ rev: 'r2' });
  // What was answered is what is stored.
  const got = await srv.json('GET', `${NS}/lent`);
  expect(got.body.metadata.managedFields).toEqual(lent[3].metadata.managedFields);
  expect(got.body.metadata.resourceVersion).toBe(lent[3].metadata.resourceVersion);
});

test('a patch that changes nothing writes nothing, and its list is the stored one', async () => {
  await create('same');
  const first = await srv.json('PATCH', `${NS}/same?fieldManager=labeler`, { metadata: { labels: { rev: 'r1' } } }, MERGE);
  const again = await srv.json('PATCH', `${NS}/same?fieldManager=labeler`, { metadata: { labels: { rev: 'r1' } } }, MERGE);
  expect(again.status).toBe(200);
  expect(again.body.metadata.resourceVersion).toBe(first.body.metadata.resourceVersion);
  expect(again.body.metadata.managedFields).toEqual(first.body.metadata.managedFields);
});

test('a status patch changes only status: what it says of the spec and labels is dropped, the status is its own', async () => {
  await create('status-only');
  const p = `${NS}/status-only/status?fieldManager=kubelet`;
  const first = await srv.json(
    'PATCH',
    p,
    { metadata: { labels: { app: 'changed' } }, spec: { activeDeadlineSeconds: 5 }, status: { phase: 'Running', message: 'one' } },
    STRATEGIC,
  );
  expect(first.status).toBe(200);
  expect(first.body.metadata.labels).toEqual({ app: 'a' });
  expect(first.body.spec.activeDeadlineSeconds).toBeUndefined();
  expect(first.body.status).toMatchObject({ phase: 'Running', message: 'one' });
  const second = await srv.json('PATCH', p, { status: { message: 'two' } }, MERGE);
  expect(second.body.status).toMatchObject({ phase: 'Running', message: 'two' });
  const got = await srv.json('GET', `${NS}/status-only`);
  expect(got.body.status).toEqual(second.body.status);
  expect(got.body.spec).toEqual(first.body.spec);
  expect(got.body.metadata.managedFields).toEqual(second.body.metadata.managedFields);
});
