import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MvccStore } from '../src/store/mvcc';
import { storeContract } from './store-contract';

storeContract(
  'embedded, in memory',
  async () => {
    const kv = await MvccStore.open();
    return { kv, cleanup: () => kv.close() };
  },
  { persistent: false },
);

storeContract(
  'embedded, on disk (durable)',
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-contract-'));
    // Small segments so rollover happens inside the suite.
    const opts = { dir, segmentBytes: 64 << 10 };
    let kv = await MvccStore.open(opts);
    return {
      kv,
      reopen: async () => {
        await kv.close();
        kv = await MvccStore.open(opts);
        return kv;
      },
      cleanup: async () => {
        await kv.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  { persistent: true },
);

storeContract(
  'embedded, on disk, every superseded value spilled at once',
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-contract-spill-'));
    // The history spill's byte bound at zero: each write spills what it superseded, so every
    // read of history and every watch event's previous value below comes from the spill files.
    const opts = { dir, segmentBytes: 64 << 10, spill: { afterMs: 0, maxPendingBytes: 0, minValueBytes: 0, fileBytes: 4096 } };
    let kv = await MvccStore.open(opts);
    return {
      kv,
      reopen: async () => {
        await kv.close();
        kv = await MvccStore.open(opts);
        return kv;
      },
      cleanup: async () => {
        await kv.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  { persistent: true },
);
