/**
 * The store contract against a real etcd (Debian's etcd-server; .ci/run installs it when
 * missing): a new single-member etcd per test, so that revisions start where the contract
 * expects (etcd's empty revision is 1). Needs etcd (helpers/needs: a failure under CI, else a skip
 * with a message).
 */
import { expect, test } from 'bun:test';
import { startEtcd } from '../bench/etcd';
import { EtcdStore } from '../src/store/etcd';
import { needs } from './helpers/needs';
import { storeContract } from './store-contract';

const withEtcd = needs('etcd');
if (!withEtcd.ok) {
  withEtcd.describe('store contract: etcd', () => {});
} else {
  storeContract(
    'etcd',
    async () => {
      const etcd = await startEtcd();
      if (!etcd) throw new Error('etcd did not start');
      const kv = await EtcdStore.open({ endpoints: [etcd.endpoint], prefix: '/registry' });
      return {
        kv,
        cleanup: async () => {
          await kv.close();
          await etcd.stop();
        },
      };
    },
    { persistent: false, base: 1, cutsSlowConsumers: false, watchesAtCompacted: false },
  );
}

withEtcd.describe('etcd: large answers', () => {
  test('a range larger than gRPC’s default 4 MiB message limit is read whole', async () => {
    const etcd = await startEtcd();
    if (!etcd) throw new Error('etcd did not start');
    const kv = await EtcdStore.open({ endpoints: [etcd.endpoint], prefix: '/registry' });
    try {
      const value = new Uint8Array(200 * 1024).fill(120);
      // 30 × 200 KiB = 6 MiB in one range (each put stays under etcd's 1.5 MiB request limit).
      for (let i = 0; i < 30; i++) await kv.txn({ success: [{ op: 'put', key: `/big/${String(i).padStart(2, '0')}`, value }] });
      const all = await kv.range('/big/', { end: '/big0' });
      expect(all.kvs.length).toBe(30);
      expect(all.kvs.every((x) => x.value.length === value.length)).toBe(true);
    } finally {
      await kv.close();
      await etcd.stop();
    }
  }, 60_000);
});
