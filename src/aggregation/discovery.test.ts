import { expect, test } from 'bun:test';
import type { RemoteApiService } from './api-services';
import { mergeDiscovery } from './discovery';

const remote = (group: string, version: string, gp = 1000, vp = 15): RemoteApiService => ({
  name: `${version}.${group}`,
  group,
  version,
  service: { namespace: 'ns', name: 'svc', port: 443 },
  caPem: '',
  insecureSkipTLSVerify: false,
  groupPriorityMinimum: gp,
  versionPriority: vp,
  available: false,
  obj: { metadata: { name: `${version}.${group}` } },
});

const gv = (group: string, version: string) => ({ groupVersion: `${group}/${version}`, version });
const LOCAL = {
  kind: 'APIGroupList',
  apiVersion: 'v1',
  groups: [{ name: 'apps', versions: [gv('apps', 'v1')], preferredVersion: gv('apps', 'v1') }],
};

test('remote groups are appended to /apis by priority; a local group gets the remote versions', () => {
  const doc = mergeDiscovery('/apis', LOCAL, [
    remote('b.example.io', 'v1', 100),
    remote('a.example.io', 'v1beta1', 500, 10),
    remote('a.example.io', 'v1', 500, 20),
    remote('apps', 'v2alpha1'),
  ]) as typeof LOCAL;
  expect(doc.groups).toEqual([
    { name: 'apps', versions: [gv('apps', 'v1'), gv('apps', 'v2alpha1')], preferredVersion: gv('apps', 'v1') },
    {
      name: 'a.example.io',
      versions: [gv('a.example.io', 'v1'), gv('a.example.io', 'v1beta1')],
      preferredVersion: gv('a.example.io', 'v1'),
    },
    { name: 'b.example.io', versions: [gv('b.example.io', 'v1')], preferredVersion: gv('b.example.io', 'v1') },
  ]);
  // The cached local document is not changed.
  expect(LOCAL.groups[0]?.versions).toHaveLength(1);
});

test('/apis/<group> of a remote group; other paths keep the local document', () => {
  const rs = [remote('a.example.io', 'v1')];
  expect(mergeDiscovery('/apis/a.example.io/', undefined, rs)).toEqual({
    kind: 'APIGroup',
    apiVersion: 'v1',
    name: 'a.example.io',
    versions: [gv('a.example.io', 'v1')],
    preferredVersion: gv('a.example.io', 'v1'),
  });
  expect(mergeDiscovery('/apis/apps', { kind: 'APIGroup', name: 'apps' }, rs)).toEqual({ kind: 'APIGroup', name: 'apps' });
  expect(mergeDiscovery('/api/v1', 'x', rs)).toBe('x');
  expect(mergeDiscovery('/apis', LOCAL, [])).toBe(LOCAL);
});
