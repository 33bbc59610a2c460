/**
 * The store contract against a real etcd (Debian's etcd-server; .ci/run installs it when
 * missing): a new single-member etcd per test, so that revisions start where the contract
 * expects (etcd's empty revision is 1). Skipped, with a message, when there is no etcd binary.
 */
import { describe, test } from 'bun:test';
import { etcdVersion, startEtcd } from '../bench/etcd';
import { EtcdStore } from '../src/store/etcd';
import { storeContract } from './store-contract';

if (etcdVersion() === undefined) {
  describe('store contract: etcd', () => {
    test.skip('etcd is not installed (apt-get install etcd-server): the etcd backend is not tested', () => {});
  });
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
