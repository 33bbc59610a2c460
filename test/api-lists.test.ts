/**
 * Lists: the resourceVersion × resourceVersionMatch × paging table of spec 1 ("Resource version
 * semantics"), chunked lists with continue tokens, remainingItemCount, label and field selectors,
 * and their errors, as the reference API server answers them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type Server, startServer } from './helpers/server';

let srv: Server;
const NS = 'lists';
const P = `/api/v1/namespaces/${NS}/configmaps`;
/** Revision after the fixture was created (the 10 configmaps c00..c09). */
let fixtureRv = 0;
/** The resourceVersion of each fixture object's create (controllers write in between: not contiguous). */
const createdRv: number[] = [];

type Item = { metadata: { name: string; namespace?: string; resourceVersion: string } };
const names = (b: { items: Item[] }) => b.items.map((i) => i.metadata.name);
const q = (params: Record<string, string | number>) =>
  `?${Object.entries(params)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join('&')}`;

beforeAll(async () => {
  srv = await startServer();
  expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: NS } })).status).toBe(201);
  for (let i = 0; i < 10; i++) {
    const labels: Record<string, string> = { idx: String(i), parity: i % 2 === 0 ? 'even' : 'odd' };
    if (i < 3) labels.tier = 'front';
    else if (i < 6) labels.tier = 'back';
    const r = await srv.json('POST', P, { metadata: { name: `c0${i}`, labels }, data: { i: String(i) } });
    expect(r.status).toBe(201);
    fixtureRv = Number(r.body.metadata.resourceVersion);
    createdRv.push(fixtureRv);
  }
}, 30_000);
afterAll(async () => {
  await srv.stop();
});

function invalidListOptions(field: string, reasonType: string, message: string) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `ListOptions.meta.svc.io "" is invalid: ${field}: ${message}`,
    reason: 'Invalid',
    details: { group: 'meta.svc.io', kind: 'ListOptions', causes: [{ reason: reasonType, message, field }] },
    code: 422,
  };
}

describe('list shape', () => {
  test('kind <Kind>List, apiVersion, metadata.resourceVersion; no continue/remainingItemCount on a complete list', async () => {
    const r = await srv.json('GET', P);
    expect(r.status).toBe(200);
    expect(r.body.kind).toBe('ConfigMapList');
    expect(r.body.apiVersion).toBe('v1');
    expect(r.body.metadata.resourceVersion).toMatch(/^\d+$/);
    expect(r.body.metadata.continue).toBeUndefined();
    expect(r.body.metadata.remainingItemCount).toBeUndefined();
    expect(names(r.body)).toEqual(['c00', 'c01', 'c02', 'c03', 'c04', 'c05', 'c06', 'c07', 'c08', 'c09']);
    // Items carry kind and apiVersion.
    expect(r.body.items[0]).toMatchObject({ kind: 'ConfigMap', apiVersion: 'v1' });
  });

  test('named group list: DeploymentList apps/v1; empty list has items []', async () => {
    const r = await srv.json('GET', `/apis/apps/v1/namespaces/${NS}/deployments`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ kind: 'DeploymentList', apiVersion: 'apps/v1', items: [] });
  });

  test('list across namespaces (/api/v1/configmaps) and of a missing namespace (empty)', async () => {
    const all = await srv.json('GET', '/api/v1/configmaps');
    expect(all.status).toBe(200);
    expect(all.body.items.filter((i: Item) => i.metadata.namespace === NS)).toHaveLength(10);
    const none = await srv.json('GET', '/api/v1/namespaces/not-there/configmaps');
    expect(none.status).toBe(200);
    expect(none.body.items).toEqual([]);
  });

  test('cluster-scoped list: NamespaceList', async () => {
    const r = await srv.json('GET', '/api/v1/namespaces');
    expect(r.body.kind).toBe('NamespaceList');
    expect(names(r.body)).toEqual(expect.arrayContaining(['default', 'kube-system', 'kube-public', 'kube-node-lease', NS]));
  });
});

describe('resourceVersion semantics (list)', () => {
  test('unset: Most Recent — includes the newest write', async () => {
    const c = await srv.json('POST', P, { metadata: { name: 'mr-new' } });
    const r = await srv.json('GET', P);
    expect(names(r.body)).toContain('mr-new');
    expect(Number(r.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(c.body.metadata.resourceVersion));
    await srv.json('DELETE', `${P}/mr-new`);
  });

  test('resourceVersion=0: Any — 200 with the objects', async () => {
    const r = await srv.json('GET', `${P}${q({ resourceVersion: 0 })}`);
    expect(r.status).toBe(200);
    expect(names(r.body)).toEqual(expect.arrayContaining(['c00', 'c09']));
  });

  test('resourceVersion=N, no limit: Not older than — collection version ≥ N, newer objects included', async () => {
    const c = await srv.json('POST', P, { metadata: { name: 'nol-new' } });
    const r = await srv.json('GET', `${P}${q({ resourceVersion: fixtureRv })}`);
    expect(r.status).toBe(200);
    expect(Number(r.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(c.body.metadata.resourceVersion));
    expect(names(r.body)).toContain('nol-new');
    const m = await srv.json('GET', `${P}${q({ resourceVersion: fixtureRv, resourceVersionMatch: 'NotOlderThan' })}`);
    expect(m.status).toBe(200);
    expect(names(m.body)).toContain('nol-new');
    const m0 = await srv.json('GET', `${P}${q({ resourceVersion: 0, resourceVersionMatch: 'NotOlderThan' })}`);
    expect(m0.status).toBe(200);
    const ml = await srv.json('GET', `${P}${q({ resourceVersion: fixtureRv, resourceVersionMatch: 'NotOlderThan', limit: 100 })}`);
    expect(ml.status).toBe(200);
    expect(names(ml.body)).toContain('nol-new');
    await srv.json('DELETE', `${P}/nol-new`);
  });

  test('resourceVersion=N with limit (match unset): Exact — collection version N, later objects absent', async () => {
    await srv.json('POST', P, { metadata: { name: 'exact-later' } });
    const r = await srv.json('GET', `${P}${q({ resourceVersion: fixtureRv, limit: 100 })}`);
    expect(r.status).toBe(200);
    expect(r.body.metadata.resourceVersion).toBe(String(fixtureRv));
    expect(names(r.body)).not.toContain('exact-later');
    expect(names(r.body)).toHaveLength(10);
    await srv.json('DELETE', `${P}/exact-later`);
  });

  test('resourceVersionMatch=Exact (with and without limit): the list as of N', async () => {
    await srv.json('POST', P, { metadata: { name: 'exact-later2' } });
    try {
      for (const extra of [{}, { limit: 4 }] as Record<string, number>[]) {
        const r = await srv.json('GET', `${P}${q({ resourceVersion: fixtureRv, resourceVersionMatch: 'Exact', ...extra })}`);
        expect(r.status).toBe(200);
        expect(r.body.metadata.resourceVersion).toBe(String(fixtureRv));
        expect(names(r.body)).not.toContain('exact-later2');
      }
      // The version of c04's create: the c0x objects created later are absent.
      const early = await srv.json('GET', `${P}${q({ resourceVersion: createdRv[4] as number, resourceVersionMatch: 'Exact' })}`);
      expect(early.status).toBe(200);
      expect(names(early.body)).toEqual(['c00', 'c01', 'c02', 'c03', 'c04']);
    } finally {
      // Later tests count the collection.
      await srv.json('DELETE', `${P}/exact-later2`);
    }
  });

  test('resourceVersionMatch without resourceVersion: 400 (issue 3) with the ListOptions causes', async () => {
    for (const m of ['Exact', 'NotOlderThan']) {
      const r = await srv.json('GET', `${P}${q({ resourceVersionMatch: m })}`);
      expect(r.status).toBe(400);
      expect(r.body).toEqual({
        ...invalidListOptions(
          'resourceVersionMatch',
          'FieldValueForbidden',
          'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
        ),
        reason: 'BadRequest',
        code: 400,
      });
    }
  });

  test('resourceVersionMatch=Exact with resourceVersion=0: 422 Invalid', async () => {
    const r = await srv.json('GET', `${P}${q({ resourceVersion: 0, resourceVersionMatch: 'Exact' })}`);
    expect(r.status).toBe(422);
    expect(r.body).toEqual(
      invalidListOptions(
        'resourceVersionMatch',
        'FieldValueForbidden',
        'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
      ),
    );
  });

  test('an unknown resourceVersionMatch: 422 Unsupported value', async () => {
    const r = await srv.json('GET', `${P}${q({ resourceVersion: 5, resourceVersionMatch: 'Newest' })}`);
    expect(r.status).toBe(422);
    expect(r.body).toEqual(
      invalidListOptions(
        'resourceVersionMatch',
        'FieldValueNotSupported',
        'Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""',
      ),
    );
  });

  test('a resourceVersion beyond the newest: waits ~3 s, then 504 "Too large resource version" with Retry-After (list and get)', async () => {
    const cur = Number((await srv.json('GET', P)).body.metadata.resourceVersion);
    const far = cur + 1000;
    const t0 = Date.now();
    const [l, g] = await Promise.all([
      srv.json('GET', `${P}${q({ resourceVersion: far })}`),
      srv.json('GET', `${P}/c00${q({ resourceVersion: far })}`),
    ]);
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(2500);
    expect(waited).toBeLessThan(10_000);
    for (const r of [l, g]) {
      expect(r.status).toBe(504);
      expect(r.headers.get('retry-after')).toBe('1');
      expect(r.body).toMatchObject({
        kind: 'Status',
        status: 'Failure',
        reason: 'Timeout',
        code: 504,
        details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
      });
      expect(r.body.message).toMatch(new RegExp(`^Timeout: Too large resource version: ${far}, current: \\d+$`));
    }
  }, 15_000);

  test('a resourceVersion reached while waiting is served', async () => {
    const cur = Number((await srv.json('GET', P)).body.metadata.resourceVersion);
    const pending = srv.json('GET', `${P}${q({ resourceVersion: cur + 1 })}`);
    await Bun.sleep(300);
    await srv.json('POST', P, { metadata: { name: 'wait-new' } });
    const r = await pending;
    expect(r.status).toBe(200);
    expect(Number(r.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(cur + 1);
    // On etcd the revision is shared with the controllers' Lease renewals, which may reach
    // cur + 1 first; on the embedded store the create is the next revision.
    if (process.env.SVC_TEST_STORE !== 'etcd') expect(names(r.body)).toContain('wait-new');
    await srv.json('DELETE', `${P}/wait-new`);
  });

  test('get: unset / 0 / N (not older than) all serve the newest object', async () => {
    const c = await srv.json('POST', P, { metadata: { name: 'get-rv' }, data: { v: '1' } });
    const u = await srv.json('PUT', `${P}/get-rv`, { metadata: { name: 'get-rv' }, data: { v: '2' } });
    for (const rv of ['', '0', c.body.metadata.resourceVersion]) {
      const g = await srv.json('GET', `${P}/get-rv${rv === '' ? '' : q({ resourceVersion: rv })}`);
      expect(g.status).toBe(200);
      expect(g.body.data).toEqual({ v: '2' });
      expect(g.body.metadata.resourceVersion).toBe(u.body.metadata.resourceVersion);
    }
    await srv.json('DELETE', `${P}/get-rv`);
  });
});

describe('malformed resourceVersion', () => {
  // The reference answers these with a 500 (kubernetes/kubernetes#139485); a client's bad input
  // is a 400 here. uint64 is the reference's range: past it is invalid, up to it is a version.
  test('not a number, negative, past uint64: 400 on list, get and watch', async () => {
    for (const rv of ['abc', '-1', '1.5', ' 1', '18446744073709551616', '99999999999999999999']) {
      for (const path of [P, `${P}/c00`, `${P}?watch=1`]) {
        const r = await srv.json('GET', `${path}${path.includes('?') ? '&' : '?'}resourceVersion=${encodeURIComponent(rv)}`);
        expect(r.status).toBe(400);
        expect(r.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', message: `invalid resource version: ${JSON.stringify(rv)}` });
      }
    }
  });

  test('uint64 max is a version from the future: a watch from it opens and waits', async () => {
    const r = await srv.fetch(`${P}?watch=1&timeoutSeconds=1&resourceVersion=18446744073709551615`);
    expect(r.status).toBe(200);
    expect((await r.text()).trim()).toBe('');
  });
});

describe('chunked lists (limit / continue)', () => {
  test('pages until done; resourceVersion constant; remainingItemCount counts down; snapshot is consistent', async () => {
    const seen: string[] = [];
    let r = await srv.json('GET', `${P}${q({ limit: 3 })}`);
    expect(r.status).toBe(200);
    const rv = r.body.metadata.resourceVersion;
    expect(r.body.metadata.remainingItemCount).toBe(7);
    expect(r.body.metadata.continue).toBeString();
    seen.push(...names(r.body));
    // Changes after the first page are not visible in later pages.
    await srv.json('POST', P, { metadata: { name: 'c05a' } });
    await srv.json('DELETE', `${P}/c08`);
    const remaining: number[] = [];
    while (r.body.metadata.continue) {
      r = await srv.json('GET', `${P}${q({ limit: 3, continue: r.body.metadata.continue })}`);
      expect(r.status).toBe(200);
      expect(r.body.kind).toBe('ConfigMapList');
      expect(r.body.metadata.resourceVersion).toBe(rv);
      if (r.body.metadata.continue) remaining.push(r.body.metadata.remainingItemCount);
      else expect(r.body.metadata.remainingItemCount).toBeUndefined();
      seen.push(...names(r.body));
    }
    expect(remaining).toEqual([4, 1]);
    expect(seen).toEqual(['c00', 'c01', 'c02', 'c03', 'c04', 'c05', 'c06', 'c07', 'c08', 'c09']);
    // Restore the fixture.
    await srv.json('DELETE', `${P}/c05a`);
    await srv.json('POST', P, { metadata: { name: 'c08', labels: { idx: '8', parity: 'even' } }, data: { i: '8' } });
  });

  test('limit larger than the collection: one page, no continue', async () => {
    const r = await srv.json('GET', `${P}${q({ limit: 500 })}`);
    expect(names(r.body)).toHaveLength(10);
    expect(r.body.metadata.continue).toBeUndefined();
    expect(r.body.metadata.remainingItemCount).toBeUndefined();
  });

  test('with a selector: pages of matching items, no remainingItemCount', async () => {
    const seen: string[] = [];
    let r = await srv.json('GET', `${P}${q({ limit: 2, labelSelector: 'parity=even' })}`);
    expect(r.status).toBe(200);
    expect(r.body.metadata.remainingItemCount).toBeUndefined();
    seen.push(...names(r.body));
    let pages = 1;
    while (r.body.metadata.continue) {
      r = await srv.json('GET', `${P}${q({ limit: 2, labelSelector: 'parity=even', continue: r.body.metadata.continue })}`);
      expect(r.status).toBe(200);
      expect(r.body.metadata.remainingItemCount).toBeUndefined();
      seen.push(...names(r.body));
      pages++;
    }
    expect(seen).toEqual(['c00', 'c02', 'c04', 'c06', 'c08']);
    expect(pages).toBeGreaterThanOrEqual(3);
  });

  test('continue with a non-zero resourceVersion: 400 BadRequest', async () => {
    const first = await srv.json('GET', `${P}${q({ limit: 2 })}`);
    const r = await srv.json('GET', `${P}${q({ limit: 2, continue: first.body.metadata.continue, resourceVersion: fixtureRv })}`);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'specifying resource version is not allowed when using continue',
      reason: 'BadRequest',
      code: 400,
    });
  });

  test('continue with resourceVersion=0: treated as continuation', async () => {
    const first = await srv.json('GET', `${P}${q({ limit: 2 })}`);
    const r = await srv.json('GET', `${P}${q({ limit: 2, continue: first.body.metadata.continue, resourceVersion: 0 })}`);
    expect(r.status).toBe(200);
    expect(names(r.body)).toEqual(['c02', 'c03']);
    expect(r.body.metadata.resourceVersion).toBe(first.body.metadata.resourceVersion);
  });

  test('continue with resourceVersionMatch: 422 Invalid', async () => {
    const first = await srv.json('GET', `${P}${q({ limit: 2 })}`);
    const r = await srv.json(
      'GET',
      `${P}${q({ limit: 2, continue: first.body.metadata.continue, resourceVersion: 0, resourceVersionMatch: 'NotOlderThan' })}`,
    );
    expect(r.status).toBe(422);
    expect(r.body).toEqual(
      invalidListOptions(
        'resourceVersionMatch',
        'FieldValueForbidden',
        'Forbidden: resourceVersionMatch is forbidden when continue is provided',
      ),
    );
  });

  test('a malformed continue token: 400 "invalid continue token"', async () => {
    const r = await srv.json('GET', `${P}${q({ limit: 2, continue: 'not-a-token' })}`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
    expect(r.body.message).toStartWith('invalid continue token: continue key is not valid');
  });
});

describe('label selectors', () => {
  const sel = async (s: string) => {
    const r = await srv.json('GET', `${P}${q({ labelSelector: s })}`);
    expect(r.status).toBe(200);
    return names(r.body);
  };

  test('=, ==, !=', async () => {
    expect(await sel('tier=front')).toEqual(['c00', 'c01', 'c02']);
    expect(await sel('tier==back')).toEqual(['c03', 'c04', 'c05']);
    // != also matches objects without the label.
    expect(await sel('tier!=front')).toEqual(['c03', 'c04', 'c05', 'c06', 'c07', 'c08', 'c09']);
  });

  test('in, notin', async () => {
    expect(await sel('idx in (1,3,9)')).toEqual(['c01', 'c03', 'c09']);
    expect(await sel('tier notin (front,back)')).toEqual(['c06', 'c07', 'c08', 'c09']);
  });

  test('exists, !key', async () => {
    expect(await sel('tier')).toEqual(['c00', 'c01', 'c02', 'c03', 'c04', 'c05']);
    expect(await sel('!tier')).toEqual(['c06', 'c07', 'c08', 'c09']);
  });

  test('several terms are ANDed; spaces are allowed', async () => {
    expect(await sel('tier=back,parity=odd')).toEqual(['c03', 'c05']);
    expect(await sel('tier in (front, back), parity!=even, idx notin (5)')).toEqual(['c01', 'c03']);
    expect(await sel('!tier,parity=even')).toEqual(['c06', 'c08']);
  });

  test('gt / lt on integer values', async () => {
    expect(await sel('idx>6')).toEqual(['c07', 'c08', 'c09']);
    expect(await sel('idx<2')).toEqual(['c00', 'c01']);
  });

  test('malformed selectors: 400 BadRequest', async () => {
    for (const s of ['tier in ()x', 'tier==', '=front', 'tier in (a', 'a,,b', 'tier=a b', '!']) {
      const r = await srv.json('GET', `${P}${q({ labelSelector: s })}`);
      if (s === 'tier==') {
        // An empty value is a valid (empty) label value.
        expect(r.status).toBe(200);
        continue;
      }
      expect([s, r.status]).toEqual([s, 400]);
      expect(r.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'BadRequest', code: 400 });
    }
  });

  test('an invalid label value: 400 with the reference validation text', async () => {
    const r = await srv.json('GET', `${P}${q({ labelSelector: 'tier=a$b' })}`);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(
      `unable to parse requirement: values[0][tier]: Invalid value: "a$b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
    );
  });

  test('an invalid label key: 400 with the reference validation text', async () => {
    const r = await srv.json('GET', `${P}${q({ labelSelector: '-bad=x' })}`);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe(
      `unable to parse requirement: key: Invalid value: "-bad": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    );
  });
});

describe('field selectors', () => {
  test('metadata.name (=, ==, !=)', async () => {
    let r = await srv.json('GET', `${P}${q({ fieldSelector: 'metadata.name=c04' })}`);
    expect(names(r.body)).toEqual(['c04']);
    r = await srv.json('GET', `${P}${q({ fieldSelector: 'metadata.name==c05' })}`);
    expect(names(r.body)).toEqual(['c05']);
    r = await srv.json('GET', `${P}${q({ fieldSelector: 'metadata.name!=c04,metadata.name!=c05' })}`);
    expect(names(r.body)).toEqual(['c00', 'c01', 'c02', 'c03', 'c06', 'c07', 'c08', 'c09']);
  });

  test('metadata.namespace across namespaces, combined with a label selector', async () => {
    const r = await srv.json('GET', `/api/v1/configmaps${q({ fieldSelector: `metadata.namespace=${NS}`, labelSelector: 'tier=front' })}`);
    expect(r.status).toBe(200);
    expect(r.body.items.map((i: Item) => `${i.metadata.namespace}/${i.metadata.name}`)).toEqual([`${NS}/c00`, `${NS}/c01`, `${NS}/c02`]);
    const ns = await srv.json('GET', `/api/v1/namespaces${q({ fieldSelector: 'metadata.name=default' })}`);
    expect(names(ns.body)).toEqual(['default']);
  });

  test('pods: spec.nodeName and status.phase', async () => {
    const pod = (name: string, nodeName?: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'nginx:1.27' }] },
    });
    const PODS = `/api/v1/namespaces/${NS}/pods`;
    for (const [n, node] of [
      ['p1', 'node-a'],
      ['p2', 'node-b'],
      ['p3', undefined],
    ] as const) {
      const c = await srv.json('POST', PODS, pod(n, node));
      expect([n, c.status]).toEqual([n, 201]);
    }
    const p2 = await srv.json('GET', `${PODS}/p2`);
    const st = await srv.json('PUT', `${PODS}/p2/status`, { ...p2.body, status: { ...p2.body.status, phase: 'Running' } });
    expect(st.status).toBe(200);
    const sel = async (s: string) => names((await srv.json('GET', `${PODS}${q({ fieldSelector: s })}`)).body);
    expect(await sel('spec.nodeName=node-a')).toEqual(['p1']);
    expect(await sel('spec.nodeName=')).toEqual(['p3']);
    expect(await sel('spec.nodeName!=')).toEqual(['p1', 'p2']);
    expect(await sel('status.phase=Running')).toEqual(['p2']);
    expect(await sel('status.phase=Pending')).toEqual(['p1', 'p3']);
    expect(await sel('status.phase!=Running,spec.nodeName=node-a')).toEqual(['p1']);
    // All namespaces.
    expect(names((await srv.json('GET', `/api/v1/pods${q({ fieldSelector: 'spec.nodeName=node-b' })}`)).body)).toEqual(['p2']);
  });

  test('an unsupported field: 400 "field label not supported"', async () => {
    const r = await srv.json('GET', `${P}${q({ fieldSelector: 'data.i=1' })}`);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'field label not supported: data.i',
      reason: 'BadRequest',
      code: 400,
    });
    // spec.nodeName is selectable for pods only.
    expect((await srv.json('GET', `${P}${q({ fieldSelector: 'spec.nodeName=x' })}`)).status).toBe(400);
  });

  test('a malformed field selector: 400 BadRequest', async () => {
    const r = await srv.json('GET', `${P}${q({ fieldSelector: 'metadata.name' })}`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
    expect(r.body.message).toBe(`invalid selector: 'metadata.name'; can't understand 'metadata.name'`);
  });
});

describe('long lists are streamed', () => {
  const BIG = 'big-list';
  const BP = `/api/v1/namespaces/${BIG}/configmaps`;
  const N = 1500;
  beforeAll(async () => {
    expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: BIG } })).status).toBe(201);
    // ~3.2 KB each: 4.8 MB of stored bytes, past the 4 MiB a JSON list is written whole under.
    const value = 'x'.repeat(3000);
    for (let i = 0; i < N; i += 50) {
      const rs = await Promise.all(
        Array.from({ length: 50 }, (_, j) => srv.json('POST', BP, { metadata: { name: `cm-${i + j}` }, data: { v: value } })),
      );
      for (const r of rs) expect(r.status).toBe(201);
    }
  }, 60_000);

  test('a list of 1,500 items (~4.8 MB) is one valid JSON document, with and without gzip, newest and from a revision', async () => {
    for (const encoding of ['identity', 'gzip']) {
      for (const query of ['', '?resourceVersion=0']) {
        const r = await srv.fetch(`${BP}${query}`, { headers: { 'accept-encoding': encoding } });
        expect(r.status).toBe(200);
        expect(r.headers.get('content-type')).toBe('application/json');
        if (encoding === 'gzip') expect(r.headers.get('content-encoding')).toBe('gzip');
        // Streamed: written as read (chunked), never built whole with a length up front.
        expect(r.headers.get('content-length')).toBeNull();
        const body = (await r.json()) as { kind: string; metadata: { resourceVersion: string }; items: Item[] };
        expect(body.kind).toBe('ConfigMapList');
        expect(Number(body.metadata.resourceVersion)).toBeGreaterThan(0);
        expect(body.items).toHaveLength(N);
        expect(new Set(names(body)).size).toBe(N);
      }
    }
  });

  test('a page of 500 of them (~1.7 MB, under 4 MiB) is written whole, with its length', async () => {
    for (const encoding of ['identity', 'gzip']) {
      const r = await srv.fetch(`${BP}?limit=500`, { headers: { 'accept-encoding': encoding } });
      expect(r.status).toBe(200);
      if (encoding === 'gzip') expect(r.headers.get('content-encoding')).toBe('gzip');
      // On etcd the answer completes after the store's read, and a late answer of more than 16 KB
      // is sent as a direct stream without its length (src/http/respond.ts lateReply).
      else if (process.env.SVC_TEST_STORE !== 'etcd') expect(Number(r.headers.get('content-length'))).toBeGreaterThan(500 * 3000);
      const body = (await r.json()) as { metadata: { continue?: string; remainingItemCount?: number }; items: Item[] };
      expect(body.items).toHaveLength(500);
      expect(body.metadata.remainingItemCount).toBe(N - 500);
      expect(body.metadata.continue).toBeTruthy();
    }
  });

  test('while a client reads a long list slowly, other requests are answered', async () => {
    const r = await srv.fetch(BP, { headers: { 'accept-encoding': 'identity' } });
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    // The list is not done (the client has not read it): a small request is served meanwhile.
    const started = performance.now();
    const small = await srv.json('GET', '/api/v1/namespaces/default');
    expect(small.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(1000);
    let bytes = first.value?.length ?? 0;
    for (;;) {
      const c = await reader.read();
      if (c.done) break;
      bytes += c.value.length;
    }
    expect(bytes).toBeGreaterThan(N * 3000);
  });
});

describe('whole lists answered again (src/http/list-memo.ts)', () => {
  test('the same list twice is the same; a write, another namespace, a selector, ?pretty each answer their own', async () => {
    const ns2 = 'lists-memo';
    expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: ns2 } })).status).toBe(201);
    const P2 = `/api/v1/namespaces/${ns2}/configmaps`;
    for (const n of ['m1', 'm2']) expect((await srv.json('POST', P2, { metadata: { name: n }, data: { v: n } })).status).toBe(201);
    const text = async (path: string) => (await srv.fetch(path)).text();
    const first = await text(P2);
    expect(await text(P2)).toBe(first);
    expect(JSON.parse(first).items.map((i: Item) => i.metadata.name)).toEqual(['m1', 'm2']);
    // The other namespace's list is its own.
    expect(names(JSON.parse(await text(P)))).toEqual(names(JSON.parse(await text(P))));
    expect(names(JSON.parse(await text(P)))).not.toEqual(['m1', 'm2']);
    // A write changes the answer (its state is the cache's revision).
    const up = await srv.json('PUT', `${P2}/m1`, { metadata: { name: 'm1' }, data: { v: 'changed' } });
    expect(up.status).toBe(200);
    const after = JSON.parse(await text(P2));
    expect(after.items[0].data.v).toBe('changed');
    expect(Number(after.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(up.body.metadata.resourceVersion));
    expect(JSON.parse(await text(P2))).toEqual(after);
    // Selectors and ?pretty are not the whole list's answer.
    expect(names(JSON.parse(await text(`${P2}?labelSelector=none%3Dx`)))).toEqual([]);
    const pretty = await text(`${P2}?pretty=true`);
    expect(pretty).toContain('\n    ');
    expect(JSON.parse(pretty)).toEqual(after);
    // A delete too.
    expect((await srv.json('DELETE', `${P2}/m2`)).status).toBe(200);
    expect(names(JSON.parse(await text(P2)))).toEqual(['m1']);
  });
});

describe('pages from the watch cache', () => {
  const NP = 'cache-pages';
  const PP = `/api/v1/namespaces/${NP}/configmaps`;
  const ON_ETCD = process.env.SVC_TEST_STORE === 'etcd';
  type Page = {
    metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
    items: (Item & { data: { v: string } })[];
  };
  const page = async (query: string): Promise<Page> => {
    const r = await srv.json('GET', `${PP}${query}`);
    expect(r.status).toBe(200);
    return r.body as Page;
  };
  const servedFromCache = async (): Promise<number> => {
    const m = /^apiserver_cache_list_total\{index="",resource_prefix="\/configmaps"\} (\d+)$/m.exec(
      await (await srv.fetch('/metrics')).text(),
    );
    return Number(m?.[1] ?? 0);
  };

  beforeAll(async () => {
    expect((await srv.json('POST', '/api/v1/namespaces', { metadata: { name: NP } })).status).toBe(201);
    for (let i = 0; i < 25; i++) {
      const name = `p${String(i).padStart(2, '0')}`;
      expect((await srv.json('POST', PP, { metadata: { name }, data: { v: `${name}-1` } })).status).toBe(201);
    }
  });

  test('paging an unchanged namespace: every object once, in order, with remainingItemCount, read from the cache on the embedded store', async () => {
    const before = await servedFromCache();
    const seen: string[] = [];
    let cont = '';
    const remaining: (number | undefined)[] = [];
    const rvs = new Set<string>();
    do {
      const b = await page(q(cont ? { limit: 10, continue: cont } : { limit: 10 }));
      seen.push(...names(b));
      remaining.push(b.metadata.remainingItemCount);
      rvs.add(b.metadata.resourceVersion);
      cont = b.metadata.continue ?? '';
    } while (cont);
    expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => `p${String(i).padStart(2, '0')}`));
    expect(remaining).toEqual([15, 5, undefined]);
    expect(rvs.size).toBe(1);
    const served = (await servedFromCache()) - before;
    // etcd (a store shared with other replicas) serves pages itself, as the unpaged list.
    if (ON_ETCD) expect(served).toBe(0);
    else expect(served).toBeGreaterThanOrEqual(3);
  });

  test("writes between pages: the later pages are still the first page's snapshot (read from the store at its revision)", async () => {
    const first = await page(q({ limit: 10 }));
    expect(names(first)).toHaveLength(10);
    const rv = first.metadata.resourceVersion;
    // Change what the later pages hold: a new object at the end, one deleted, one updated.
    expect((await srv.json('POST', PP, { metadata: { name: 'p99' }, data: { v: 'new' } })).status).toBe(201);
    expect((await srv.json('DELETE', `${PP}/p24`)).status).toBe(200);
    expect(
      (await srv.json('PATCH', `${PP}/p12`, { data: { v: 'p12-2' } }, { 'content-type': 'application/merge-patch+json' })).status,
    ).toBe(200);
    const second = await page(q({ limit: 10, continue: first.metadata.continue as string }));
    const third = await page(q({ limit: 10, continue: second.metadata.continue as string }));
    expect(second.metadata.resourceVersion).toBe(rv);
    expect(third.metadata.resourceVersion).toBe(rv);
    expect(second.items.find((i) => i.metadata.name === 'p12')?.data.v).toBe('p12-1');
    expect(names(third)).toEqual(['p20', 'p21', 'p22', 'p23', 'p24']);
    expect(third.metadata.continue).toBeUndefined();
    // A new list sees the writes, from the cache again.
    const now = (await page('')).items;
    expect(now.map((i) => i.metadata.name)).toContain('p99');
    expect(now.map((i) => i.metadata.name)).not.toContain('p24');
    const fresh = await page(q({ limit: 30 }));
    expect(fresh.items.find((i) => i.metadata.name === 'p12')?.data.v).toBe('p12-2');
    expect(Number(fresh.metadata.resourceVersion)).toBeGreaterThan(Number(rv));
  });

  test('pages with a label or field selector from the cache: the matches in order, a token after the last, no remainingItemCount', async () => {
    for (let i = 0; i < 40; i++) {
      const name = `s${String(i).padStart(2, '0')}`;
      const labels = { pick: i % 3 === 0 ? 'yes' : 'no' };
      expect((await srv.json('POST', PP, { metadata: { name, labels }, data: { v: name } })).status).toBe(201);
    }
    const want = Array.from({ length: 40 }, (_, i) => i)
      .filter((i) => i % 3 === 0)
      .map((i) => `s${String(i).padStart(2, '0')}`);
    const selectors: Record<string, string>[] = [
      { labelSelector: 'pick=yes' },
      { labelSelector: 'pick in (yes),pick!=no', fieldSelector: 'metadata.name!=zz' },
    ];
    for (const selector of selectors) {
      const before = await servedFromCache();
      const seen: string[] = [];
      let cont = '';
      let pages = 0;
      do {
        const b = await page(q({ ...selector, limit: 4, ...(cont ? { continue: cont } : {}) }));
        expect(b.metadata.remainingItemCount).toBeUndefined();
        expect(b.items.length).toBeLessThanOrEqual(4);
        seen.push(...names(b));
        cont = b.metadata.continue ?? '';
        pages++;
      } while (cont && pages < 20);
      expect(seen).toEqual(want);
      expect(pages).toBeGreaterThanOrEqual(4);
      const served = (await servedFromCache()) - before;
      if (ON_ETCD) expect(served).toBe(0);
      else expect(served).toBeGreaterThanOrEqual(pages);
    }
    // A field selector on a name: one page, no token.
    const one = await page(q({ fieldSelector: 'metadata.name=s07', limit: 5 }));
    expect(names(one)).toEqual(['s07']);
    expect(one.metadata.continue).toBeUndefined();
  });

  test("a token from another server process is read by the store, never by that process's cache", async () => {
    const first = await page(q({ limit: 5 }));
    const tok = JSON.parse(Buffer.from(first.metadata.continue as string, 'base64').toString('utf8')) as { c?: string };
    if (!ON_ETCD) expect(tok.c).toMatch(/^[0-9a-f-]+\.\d+$/);
    // The same state's generation under another cache's tag: the page comes from the store, and is the same.
    const forged = Buffer.from(JSON.stringify({ ...tok, c: `00000000-0000.${tok.c?.split('.')[1] ?? '0'}` })).toString('base64');
    const before = await servedFromCache();
    const a = await page(q({ limit: 5, continue: forged }));
    expect(await servedFromCache()).toBe(before);
    const b = await page(q({ limit: 5, continue: first.metadata.continue as string }));
    expect(names(a)).toEqual(names(b));
    expect(a.metadata.remainingItemCount).toBe(b.metadata.remainingItemCount);
  });
});
