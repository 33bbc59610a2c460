/**
 * Would a leaner etcd client pay for itself? (design measurement for the etcd backend)
 *
 * Durable 1 KB puts from 64 concurrent loops against one real etcd, two ways, each phase run
 * twice (the first warms the JIT): the `etcd3` client the server uses (@grpc/grpc-js over Bun's
 * node:http2, protobufjs), and a bare gRPC unary call over one node:http2 session with the
 * PutRequest encoded by hand (key = 1, value = 2) and the answer only checked for grpc-status.
 * Prints puts/s and this process's CPU per put. The lean client is bench/etcd-put.ts.
 *
 *     bun bench/etcd-client.ts        (needs Debian's etcd-server)
 */
import { Etcd3 } from 'etcd3';
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
} finally {
  await etcd.stop();
}
process.exit(0);
