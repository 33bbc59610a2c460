/**
 * Would a leaner etcd client pay for itself? (design measurement for the etcd backend)
 *
 * Durable 1 KB puts from 64 concurrent loops against one real etcd, two ways, each phase run
 * twice (the first warms the JIT): the `etcd3` client the server uses (@grpc/grpc-js over Bun's
 * node:http2, protobufjs), and a bare gRPC unary call over one node:http2 session with the
 * PutRequest encoded by hand (key = 1, value = 2) and the answer only checked for grpc-status.
 * Prints puts/s and this process's CPU per put. The lean client is bench/etcd-put.ts. A third
 * phase runs the server's own client (src/store/etcd.ts over src/store/grpc.ts): a create, the
 * transaction the server sends (compare create_revision = 0, put with prev_kv), decoded.
 *
 *     bun bench/etcd-client.ts        (needs Debian's etcd-server)
 */
import { Etcd3 } from 'etcd3';
import { EtcdStore } from '../src/store/etcd';
import { create } from '../src/store/ops';
import { startEtcd } from './etcd';
import { leanPutClient } from './etcd-put';

const PHASE_MS = Number(process.env.PHASE_MS ?? 5000);
const WRITERS = 64;
const value = Buffer.alloc(1024, 'v');

const etcd = await startEtcd();
if (!etcd) {
  console.log('etcd not installed (apt-get install etcd-server)');
  process.exit(0);
}

async function measure(label: string, put: (key: string) => Promise<unknown>): Promise<void> {
  let done = 0;
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + PHASE_MS;
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; performance.now() < end; i++) {
        await put(`/bench/client/${label}/${w}/${i}`);
        done++;
      }
    }),
  );
  const used = process.cpuUsage(cpu);
  const secs = (performance.now() - t0) / 1000;
  console.log(
    `${label.padEnd(16)} ${Math.round(done / secs)} puts/s, client CPU ${((used.user + used.system) / done).toFixed(1)} us per put`,
  );
}

try {
  const client = new Etcd3({ hosts: etcd.endpoint });
  await measure('etcd3 (warm-up)', (k) => client.put(k).value(value).exec());
  await measure('etcd3', (k) => client.put(k).value(value).exec());
  client.close();

  const lean = leanPutClient(etcd.endpoint);
  const rawPut = (key: string) => lean.put(key, value);
  await measure('raw (warm-up)', rawPut);
  await measure('raw http2 gRPC', rawPut);
  lean.close();

  const store = await EtcdStore.open({ endpoints: [etcd.endpoint], prefix: '/bench' });
  const storeCreate = (key: string) => create(store, key, value);
  await measure('store (warm-up)', storeCreate);
  await measure('store create txn', storeCreate);
  await store.close();
} finally {
  await etcd.stop();
}
process.exit(0);
