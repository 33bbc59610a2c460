/**
 * Which store the server runs on: etcd when `--etcd-servers` is set (several replicas may share
 * it), else the embedded MVCC store in the data dir. Everything else sees only the KV interface;
 * this adds what the server shows about its store (the `etcd` health check, /metrics figures,
 * /debug/runtime).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MvccStore } from './mvcc';
import type { KV } from './types';

/** What chooses and opens the store (the server's flags of the same names). */
export interface StoreConfig {
  /** --etcd-servers: empty for the embedded store. */
  etcdServers: string[];
  etcdPrefix: string;
  etcdCafile: string;
  etcdCertfile: string;
  etcdKeyfile: string;
  /** --fsync of the embedded store's write-ahead log. */
  fsync: 'always' | 'none';
}

/** The store's figures on /metrics (the embedded store's WAL counters; 0 on etcd). */
export interface StoreFigures {
  revision: number;
  compacted: number;
  keys: number;
  walFsyncs: number;
  walRecords: number;
}

export interface StoreBackend {
  kv: KV;
  /** undefined while the store works; else why not (the `etcd` check of /livez, /readyz). */
  check(): string | undefined;
  figures(): StoreFigures;
  stats(): unknown;
  /**
   * Slow the store's disk by `ms` until the returned release is called (a fault injection's
   * `store.slowFsyncMs`): every write committed meanwhile waits. Absent on etcd (its disk is not
   * ours), undefined from a store without a log.
   */
  slowFsync?: (ms: number) => (() => void) | undefined;
}

const REGISTRY = '/registry';

export async function openStore(cfg: StoreConfig, dataDir: string, log: (msg: string) => void): Promise<StoreBackend> {
  if (cfg.etcdServers.length === 0) {
    const store = await MvccStore.open({ dir: path.join(dataDir, 'store'), fsync: cfg.fsync, logger: log });
    return {
      kv: store,
      check: () => (store.isClosed ? 'store closed' : store.failure ? `store cannot persist writes: ${store.failure.message}` : undefined),
      figures: () => {
        const s = store.stats();
        return { revision: s.committed, compacted: s.compacted, keys: s.keys, walFsyncs: s.walFsyncs, walRecords: s.walRecords };
      },
      stats: () => store.stats(),
      slowFsync: (ms) => store.holdFsync(ms),
    };
  }
  // Loaded only here: the embedded store needs none of the etcd client.
  const { EtcdStore } = await import('./etcd');
  const read = (f: string) => (f ? fs.readFileSync(f, 'utf8') : '');
  // The server's keys start with /registry; --etcd-prefix takes its place.
  const prefix = cfg.etcdPrefix.endsWith(REGISTRY) ? cfg.etcdPrefix.slice(0, -REGISTRY.length) : cfg.etcdPrefix;
  const store = await EtcdStore.open({
    endpoints: cfg.etcdServers,
    prefix,
    ...(cfg.etcdCafile || cfg.etcdCertfile
      ? { tls: { ca: read(cfg.etcdCafile), cert: read(cfg.etcdCertfile) || undefined, key: read(cfg.etcdKeyfile) || undefined } }
      : {}),
  });
  store.startProbe();
  log(`store: etcd at ${cfg.etcdServers.join(', ')} (prefix ${cfg.etcdPrefix}), revision ${store.currentRevision()}`);
  return {
    kv: store,
    check: () => store.health(),
    figures: () => {
      const s = store.stats();
      return { revision: s.revision, compacted: s.compacted, keys: 0, walFsyncs: 0, walRecords: 0 };
    },
    stats: () => store.stats(),
  };
}
