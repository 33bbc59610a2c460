import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type MvccOptions, MvccStore } from '../src/store/mvcc';
import { storeContract } from './store-contract';

storeContract(
  'embedded, in memory',
  async () => {
    const kv = await MvccStore.open();
    return { kv, cleanup: () => kv.close() };
  },
  { persistent: false },
);

/** A store in a temporary directory opened with `opts`, reopened on the same directory. */
const onDisk = (name: string, opts: Omit<MvccOptions, 'dir'>) => async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), name));
  const all = { ...opts, dir };
  let kv = await MvccStore.open(all);
  return {
    kv,
    reopen: async () => {
      await kv.close();
      kv = await MvccStore.open(all);
      return kv;
    },
    cleanup: async () => {
      await kv.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
};

// Small segments so rollover happens inside the suite.
storeContract('embedded, on disk (durable)', onDisk('store-contract-', { segmentBytes: 64 << 10 }), { persistent: true });

// The history spill's byte bound at zero: each write spills what it superseded, so every read of
// history and every watch event's previous value comes from the spill files.
storeContract(
  'embedded, on disk, every superseded value spilled at once',
  onDisk('store-contract-spill-', {
    segmentBytes: 64 << 10,
    spill: { afterMs: 0, maxPendingBytes: 0, minValueBytes: 0, fileBytes: 4096 },
  }),
  { persistent: true },
);
