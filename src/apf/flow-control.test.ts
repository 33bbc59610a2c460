/**
 * FlowControl's memos (the flow schema by user and request, the flow's hash and hand, its
 * stats): a request is classified, queued and counted as without them, and a new configuration
 * is seen by the next request of a user already classified.
 */
import { expect, test } from 'bun:test';
import type { Obj } from '../api/meta';
import { parseRequestInfo } from '../api/request-info';
import type { UserInfo } from '../api/user';
import { bootstrapConfig } from './bootstrap-config';
import { FakeClock } from './clock';
import { FLOW_SCHEMA_UID_HEADER, FlowControl, PRIORITY_LEVEL_UID_HEADER } from './flow-control';

const uid = (o: Obj): Obj => {
  o.metadata.uid = `uid-${o.metadata.name}`;
  return o;
};
const cfg = bootstrapConfig();
const schemas = [...cfg.mandatory.flowSchemas, ...cfg.suggested.flowSchemas].map(uid);
const levels = [...cfg.mandatory.priorityLevels, ...cfg.suggested.priorityLevels].map(uid);

/** A FlowSchema sending `user`'s requests to workload-low, ahead of every bootstrap one but exempt. */
const forUser = (user: string): Obj =>
  uid({
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: { name: `for-${user}` },
    spec: {
      priorityLevelConfiguration: { name: 'workload-low' },
      matchingPrecedence: 2,
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [{ kind: 'User', user: { name: user } }],
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
        },
      ],
    },
  });

const get = parseRequestInfo('GET', '/api/v1/namespaces/default/configmaps/x', new URLSearchParams());
const list = parseRequestInfo('GET', '/api/v1/namespaces/other/configmaps', new URLSearchParams());

async function pf(fc: FlowControl, user: UserInfo, info = get): Promise<[string | null, string | null]> {
  const res = await fc.serve(user, info, new URLSearchParams(), undefined, async () => new Response('{}'));
  return [res.headers.get(FLOW_SCHEMA_UID_HEADER), res.headers.get(PRIORITY_LEVEL_UID_HEADER)];
}

test('a frozen user is classified as an unfrozen one, request by request, and a new configuration applies at once', async () => {
  const fc = new FlowControl({ serverConcurrencyLimit: 600, requestWaitLimitMs: 15_000, clock: new FakeClock() });
  fc.configure(schemas, levels);
  const frozen = Object.freeze({ name: 'alice', uid: '', groups: ['devs', 'system:authenticated'] });
  const fresh = () => ({ name: 'alice', uid: '', groups: ['devs', 'system:authenticated'] });
  const admin = Object.freeze({ name: 'admin', uid: '', groups: ['system:masters', 'system:authenticated'] });
  for (let i = 0; i < 3; i++) {
    expect(await pf(fc, frozen)).toEqual(['uid-global-default', 'uid-global-default']);
    expect(await pf(fc, frozen, list)).toEqual(await pf(fc, fresh(), list));
    expect(await pf(fc, admin)).toEqual(['uid-exempt', 'uid-exempt']);
  }
  // alice now has a schema of her own: the memo of the old configuration is not used.
  fc.configure([...schemas, forUser('alice')], levels);
  expect(await pf(fc, frozen)).toEqual(['uid-for-alice', 'uid-workload-low']);
  expect(await pf(fc, fresh())).toEqual(['uid-for-alice', 'uid-workload-low']);
  expect(await pf(fc, admin)).toEqual(['uid-exempt', 'uid-exempt']);
  // And back.
  fc.configure(schemas, levels);
  expect(await pf(fc, frozen)).toEqual(['uid-global-default', 'uid-global-default']);
  // Each request was counted once, in its flow's stats.
  const stats = [...fc.flowStats].find((f) => f.flowSchema === 'for-alice');
  expect(stats?.dispatched).toBe(2);
});
