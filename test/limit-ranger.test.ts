/**
 * LimitRanger admission (issue 16 item 1): LimitRanges default the resources of new pods' containers
 * and refuse pods outside their min/max/ratio with 403 and the reference's messages.
 */
import { describe, expect, test } from 'bun:test';
import { serverForFile } from './helpers/server';

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const srv = serverForFile();
let n = 0;

/** A fresh namespace with one LimitRange of these items. */
async function namespaceWith(limits: Json[]): Promise<string> {
  const ns = `lr-${++n}`;
  expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: ns } })).status).toBe(201);
  const lr = await srv.json('POST', `/api/v1/namespaces/${ns}/limitranges`, { metadata: { name: 'limits' }, spec: { limits } });
  expect(lr.status).toBe(201);
  return ns;
}

const pod = (name: string, containers: Json[], initContainers?: Json[]): Json => ({
  metadata: { name },
  spec: { containers, ...(initContainers && { initContainers }) },
});
const c = (name: string, resources?: Json): Json => ({ name, image: 'nginx:1.25', ...(resources && { resources }) });

describe('defaults', () => {
  test('missing requests and limits come from the Container item; the annotation says what was set', async () => {
    const ns = await namespaceWith([{ type: 'Container', default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '100m' } }]);
    const r = await srv.json(
      'POST',
      `/api/v1/namespaces/${ns}/pods`,
      pod('p', [c('web'), c('side', { limits: { cpu: '1' } })], [c('init')]),
    );
    expect(r.status).toBe(201);
    const [web, side] = r.body.spec.containers;
    expect(web.resources).toEqual({ limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '256Mi' } });
    // A limit the pod sets stays; its request was defaulted from it before admission (requests from limits).
    expect(side.resources).toEqual({ limits: { cpu: '1', memory: '256Mi' }, requests: { cpu: '1', memory: '256Mi' } });
    expect(r.body.spec.initContainers[0].resources.limits).toEqual({ cpu: '500m', memory: '256Mi' });
    expect(r.body.metadata.annotations['kubernetes.io/limit-ranger']).toBe(
      'LimitRanger plugin set: cpu, memory request for container web; cpu, memory limit for container web; memory request for container side; memory limit for container side; cpu, memory request for init container init; cpu, memory limit for init container init',
    );
  });

  test('as the reference orders a create: qosClass counts the defaults, and the writer does not own them', async () => {
    const ns = await namespaceWith([{ type: 'Container', default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '100m' } }]);
    const r = await srv.json('POST', `/api/v1/namespaces/${ns}/pods`, pod('q', [c('web')]));
    expect(r.status).toBe(201);
    // Requests below limits: Burstable (BestEffort would be the pod as sent).
    expect(r.body.status.qosClass).toBe('Burstable');
    // managedFields are taken from the decoded request, before mutating admission: the resources
    // and the annotation LimitRanger set belong to nobody.
    const [entry, ...others] = r.body.metadata.managedFields;
    expect(others).toEqual([]);
    const web = entry.fieldsV1['f:spec']['f:containers']['k:{"name":"web"}'];
    expect(web['f:image']).toEqual({});
    expect(web['f:resources']).toEqual({});
    expect(entry.fieldsV1['f:metadata']).toBeUndefined();
    // Guaranteed when the defaults make requests equal limits.
    const ns2 = await namespaceWith([{ type: 'Container', default: { cpu: '500m', memory: '256Mi' } }]);
    const g = await srv.json('POST', `/api/v1/namespaces/${ns2}/pods`, pod('g', [c('web')]));
    expect(g.body.status.qosClass).toBe('Guaranteed');
  });

  test('the LimitRange itself is defaulted as the reference does: default from max, defaultRequest from default or min', async () => {
    const ns = await namespaceWith([{ type: 'Container', max: { cpu: '2' }, min: { memory: '64Mi' }, default: { memory: '1Gi' } }]);
    const lr = await srv.json('GET', `/api/v1/namespaces/${ns}/limitranges/limits`);
    expect(lr.body.spec.limits[0]).toMatchObject({ default: { memory: '1Gi', cpu: '2' }, defaultRequest: { memory: '1Gi', cpu: '2' } });
  });

  test('a dry-run create shows the defaults and stores nothing; other namespaces are untouched', async () => {
    const ns = await namespaceWith([{ type: 'Container', default: { cpu: '300m' } }]);
    const dry = await srv.json('POST', `/api/v1/namespaces/${ns}/pods?dryRun=All`, pod('d', [c('x')]));
    expect(dry.status).toBe(201);
    expect(dry.body.spec.containers[0].resources.limits).toEqual({ cpu: '300m' });
    expect((await srv.json('GET', `/api/v1/namespaces/${ns}/pods/d`)).status).toBe(404);
    const other = await srv.json('POST', '/api/v1/namespaces/default/pods', pod('no-limits', [c('x')]));
    expect(other.body.spec.containers[0].resources).toBeUndefined();
  });
});

describe('refusals (403 Forbidden)', () => {
  test.each([
    [
      'max limit',
      [{ type: 'Container', max: { cpu: '1' } }],
      [c('x', { limits: { cpu: '2' } })],
      'maximum cpu usage per Container is 1, but limit is 2',
    ],
    [
      'min request',
      [{ type: 'Container', min: { memory: '64Mi' } }],
      [c('x', { requests: { memory: '32Mi' } })],
      'minimum memory usage per Container is 64Mi, but request is 32Mi',
    ],
    [
      'limit/request ratio',
      [{ type: 'Container', maxLimitRequestRatio: { cpu: '2' } }],
      [c('x', { requests: { cpu: '100m' }, limits: { cpu: '400m' } })],
      'cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000',
    ],
    [
      'the Pod total over its containers',
      [{ type: 'Pod', max: { memory: '1Gi' } }],
      [c('a', { limits: { memory: '768Mi' } }), c('b', { limits: { memory: '512Mi' } })],
      'maximum memory usage per Pod is 1Gi, but limit is 1280Mi',
    ],
    [
      'two violations of one LimitRange',
      [{ type: 'Container', max: { cpu: '1', memory: '1Gi' } }],
      [c('x', { limits: { cpu: '3', memory: '2Gi' } })],
      '[maximum cpu usage per Container is 1, but limit is 3, maximum memory usage per Container is 1Gi, but limit is 2Gi]',
    ],
  ])('%s', async (_, limits, containers, message) => {
    const ns = await namespaceWith(limits);
    const r = await srv.json('POST', `/api/v1/namespaces/${ns}/pods`, pod('p', containers));
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'Forbidden', code: 403, details: { name: 'p', kind: 'pods' } });
    expect(r.body.message).toBe(`pods "p" is forbidden: ${message}`);
    expect((await srv.json('GET', `/api/v1/namespaces/${ns}/pods/p`)).status).toBe(404);
    // The same pod as a dry run is refused too.
    expect((await srv.json('POST', `/api/v1/namespaces/${ns}/pods?dryRun=All`, pod('p', containers))).status).toBe(403);
  });

  test('a pod inside the limits is admitted, and later updates of it are not checked', async () => {
    const ns = await namespaceWith([{ type: 'Container', max: { cpu: '1' } }]);
    const ok = await srv.json('POST', `/api/v1/namespaces/${ns}/pods`, pod('fits', [c('x', { limits: { cpu: '500m' } })]));
    expect(ok.status).toBe(201);
    await srv.json(
      'PATCH',
      `/api/v1/namespaces/${ns}/limitranges/limits`,
      { spec: { limits: [{ type: 'Container', max: { cpu: '100m' } }] } },
      { 'content-type': 'application/merge-patch+json' },
    );
    const upd = await srv.json(
      'PATCH',
      `/api/v1/namespaces/${ns}/pods/fits`,
      { metadata: { labels: { a: 'b' } } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(upd.status).toBe(200);
  });
});
