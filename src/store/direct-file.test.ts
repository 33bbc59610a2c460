import { describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DirectFile } from './direct-file';

/** `n` bytes that differ from block to block and within one. */
function pattern(n: number, seed: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed * 7 + (i >> 12)) & 255;
  return b;
}

async function roundTrip(dir: string, pieces: number[], direct: boolean, skew = 0): Promise<{ out: DirectFile; ok: boolean }> {
  const file = path.join(dir, `f-${pieces.join('-')}-${direct}-${skew}`);
  const out = DirectFile.open(file, direct, skew);
  const want: Uint8Array[] = [];
  for (const [i, n] of pieces.entries()) {
    const p = pattern(n, i);
    want.push(p);
    await out.write(p);
    // The caller may reuse its buffer once write() resolves.
    p.fill(0xee);
  }
  await out.finish();
  await out.sync();
  out.close();
  const got = fs.readFileSync(file);
  const expected = Buffer.concat(want.map((p, i) => pattern(p.length, i)));
  return { out, ok: got.length === out.length && Buffer.compare(got, expected) === 0 };
}

const SIZES = [[], [1], [4095], [4096], [4097], [(4 << 20) - 1], [4 << 20], [(4 << 20) + 1], [3, (4 << 20) - 3, 5000, 9 << 20, 7]];

describe('DirectFile: a file written once, past the page cache where it can be', () => {
  test('every length, in any pieces, reads back exactly (O_DIRECT where the file system takes it)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'direct-file-'));
    try {
      const probe = DirectFile.open(path.join(dir, 'probe'));
      const direct = probe.direct;
      probe.close();
      for (const pieces of SIZES) {
        const { out, ok } = await roundTrip(dir, pieces, true);
        expect([pieces.join('+'), ok]).toEqual([pieces.join('+'), true]);
        expect(out.length).toBe(pieces.reduce((a, b) => a + b, 0));
        // Where the file system took O_DIRECT at open, the aligned writes went through with it
        // (a runtime copying buffers before the write would turn them down: EINVAL).
        expect([pieces.join('+'), out.direct]).toEqual([pieces.join('+'), direct]);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('through the page cache when asked, and when O_DIRECT refuses a write (memory off a block): the same bytes', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'direct-file-'));
    try {
      const probe = DirectFile.open(path.join(dir, 'probe'));
      const direct = probe.direct;
      probe.close();
      for (const pieces of SIZES.slice(-3)) {
        const plain = await roundTrip(dir, pieces, false);
        expect([pieces.join('+'), plain.ok, plain.out.direct]).toEqual([pieces.join('+'), true, false]);
        // Where the file system takes O_DIRECT at all, a buffer off a block is refused (EINVAL)
        // and the file is finished through the page cache.
        const refused = await roundTrip(dir, pieces, true, 1);
        expect([pieces.join('+'), refused.ok, refused.out.direct]).toEqual([pieces.join('+'), true, false]);
        if (direct) expect(fs.statSync(path.join(dir, `f-${pieces.join('-')}-true-1`)).size).toBe(refused.out.length);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
