import { describe, expect, test } from 'bun:test';
import { parseRequestInfo, requestUrl } from './request-info';
import { StatusError } from './status';

describe('requestUrl', () => {
  // Whatever the shortcut takes, it must read a URL exactly as URL parsing does.
  const urls = [
    'https://127.0.0.1:6443/api/v1/namespaces/default/configmaps',
    'https://127.0.0.1:6443/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0',
    'https://h/apis/apps/v1/deployments?labelSelector=a%3Db,c&limit=500',
    'https://h/api/v1/namespaces/a%2Fb/pods',
    'https://h/api/v1/namespaces/default/configmaps/../secrets',
    'https://h/api/v1/namespaces/default/./configmaps',
    'https://h/api/v1/pods#frag',
    'https://h/api/v1/pods?x=1#frag',
    'https://h/api/v1/namespaces/défaut/pods',
    'https://h/api/v1/namespaces/a b/pods',
    'https://h/',
    'https://h/version?',
    'https://h/openapi/v3/apis/apps/v1?hash=ABC',
    'https://h/api/v1/namespaces/default/configmaps/.dot',
  ];
  for (const u of urls) {
    test(u, () => {
      const got = requestUrl(u);
      const want = new URL(u);
      expect(got.pathname).toBe(want.pathname);
      expect([...got.searchParams]).toEqual([...want.searchParams]);
    });
  }
});

describe('parseRequestInfo', () => {
  const q = new URLSearchParams();
  test('namespaced object, leading and trailing slashes', () => {
    expect(parseRequestInfo('GET', '/api/v1/namespaces/ns/pods/p/', q)).toMatchObject({
      verb: 'get',
      namespace: 'ns',
      resource: 'pods',
      name: 'p',
    });
  });
  test('escaped segments are decoded', () => {
    expect(parseRequestInfo('GET', '/apis/apps/v1/namespaces/a%3Ab/deployments/x%20y', q)).toMatchObject({
      group: 'apps',
      namespace: 'a:b',
      name: 'x y',
    });
  });
  test('a bad escape is a 400 naming it', () => {
    for (const [path, bad] of [
      ['/api/v1/namespaces/%ZZ/configmaps', '%ZZ'],
      ['/api/v1/namespaces/default/configmaps/a%', '%'],
      ['/api/v1/namespaces/default/configmaps/a%4', '%4'],
    ]) {
      let err: unknown;
      try {
        parseRequestInfo('GET', path as string, q);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(StatusError);
      expect((err as StatusError).code).toBe(400);
      expect((err as StatusError).message).toBe(`parse "${path}": invalid URL escape "${bad}"`);
    }
  });
  test('create in a collection, deletecollection, watch', () => {
    expect(parseRequestInfo('POST', '/api/v1/namespaces/ns/configmaps', q)).toMatchObject({ verb: 'create', name: '' });
    expect(parseRequestInfo('DELETE', '/api/v1/namespaces/ns/configmaps', q)).toMatchObject({ verb: 'deletecollection' });
    expect(parseRequestInfo('GET', '/api/v1/watch/namespaces/ns/configmaps', q)).toMatchObject({ verb: 'watch' });
    expect(parseRequestInfo('GET', '/api/v1/pods', new URLSearchParams('watch=true'))).toMatchObject({ verb: 'watch' });
  });
  test("a create's path parsed again is the same frozen answer; other writes and names are parsed anew", () => {
    const path = '/apis/coordination.k8s.io/v1/namespaces/memo/leases';
    const first = parseRequestInfo('POST', path, q);
    expect(first).toMatchObject({ verb: 'create', group: 'coordination.svc.io', brand: 'k8s', resource: 'leases', namespace: 'memo' });
    expect(parseRequestInfo('POST', path, q)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(parseRequestInfo('DELETE', path, q)).toMatchObject({ verb: 'deletecollection' });
    const named = '/api/v1/namespaces/memo/pods/p/eviction';
    expect(parseRequestInfo('POST', named, q)).not.toBe(parseRequestInfo('POST', named, q));
    // Past the bound the memo starts again, with answers as before.
    for (let i = 0; i < 300; i++)
      expect(parseRequestInfo('POST', `/api/v1/namespaces/n${i}/configmaps`, q)).toMatchObject({ namespace: `n${i}` });
    expect(parseRequestInfo('POST', path, q)).toEqual(first);
  });
  test('non-resource paths', () => {
    expect(parseRequestInfo('GET', '/version', q)).toMatchObject({ isResourceRequest: false, path: '/version' });
    expect(parseRequestInfo('GET', '/api', q)).toMatchObject({ isResourceRequest: false });
  });
});
