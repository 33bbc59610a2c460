/**
 * A controller's pattern: create an owner and at once its dependents in another kind, many at a
 * time. The collector must keep every dependent (it checks a missing owner in the store before
 * treating a dependent as orphaned, since the owner's kind may reach it later), and deleting the
 * owners must still take the dependents along.
 */
import { expect, test } from 'bun:test';
import { serverForFile } from './helpers/server';

const srv = serverForFile();

test('dependents created right after their owners (other kinds) survive', async () => {
  const pairs = 60;
  await Promise.all(
    Array.from({ length: pairs }, async (_, i) => {
      const owner = await srv.json('POST', '/apis/coordination.svc.io/v1/namespaces/default/leases', {
        metadata: { name: `owner-${i}` },
        spec: {},
      });
      expect(owner.status).toBe(201);
      const dep = await srv.json('POST', '/api/v1/namespaces/default/configmaps', {
        metadata: {
          name: `dep-${i}`,
          ownerReferences: [{ apiVersion: 'coordination.svc.io/v1', kind: 'Lease', name: `owner-${i}`, uid: owner.body.metadata.uid }],
        },
      });
      expect(dep.status).toBe(201);
    }),
  );
  await Bun.sleep(1500);
  const left = await srv.json('GET', '/api/v1/namespaces/default/configmaps');
  const deps = left.body.items.filter((c: { metadata: { name: string } }) => c.metadata.name.startsWith('dep-'));
  expect(deps.length).toBe(pairs);
  // And the collector still works: deleting the owners takes the dependents along.
  await Promise.all(
    Array.from({ length: pairs }, (_, i) => srv.json('DELETE', `/apis/coordination.svc.io/v1/namespaces/default/leases/owner-${i}`)),
  );
  const deadline = Date.now() + 10_000;
  let remaining = pairs;
  while (Date.now() < deadline && remaining > 0) {
    await Bun.sleep(200);
    const l = await srv.json('GET', '/api/v1/namespaces/default/configmaps');
    remaining = l.body.items.filter((c: { metadata: { name: string } }) => c.metadata.name.startsWith('dep-')).length;
  }
  expect(remaining).toBe(0);
}, 30_000);
