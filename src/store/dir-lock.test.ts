/**
 * One process at a time in a store's directory: a second open is refused while the first holds
 * it, in the same process or another; a close, or the death of the holder (SIGKILL included),
 * lets it go.
 */
import { afterEach, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DirLockedError, lockDir } from './dir-lock';
import { MvccStore } from './mvcc';
import { create } from './ops';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-lock-'));
  dirs.push(d);
  return d;
};

test('a second open of a directory in use is refused, naming it; after close it opens', async () => {
  const dir = tempDir();
  const a = await MvccStore.open({ dir, fsync: 'none' });
  await create(a, '/k', new TextEncoder().encode('v'));
  const second = MvccStore.open({ dir, fsync: 'none' });
  await expect(second).rejects.toBeInstanceOf(DirLockedError);
  await expect(MvccStore.open({ dir, fsync: 'none' })).rejects.toThrow(`the store's directory ${dir} is in use by another process`);
  // The refused open changed nothing: the first store goes on writing.
  await create(a, '/k2', new TextEncoder().encode('v'));
  await a.close();
  const b = await MvccStore.open({ dir, fsync: 'none' });
  expect((await b.range('/k2')).kvs).toHaveLength(1);
  await b.close();
});

test('on Linux the lock is taken (held), and released it can be taken again', () => {
  const dir = tempDir();
  const a = lockDir(dir);
  expect(a.held).toBe(true);
  expect(() => lockDir(dir)).toThrow(DirLockedError);
  a.release();
  a.release();
  const b = lockDir(dir);
  expect(b.held).toBe(true);
  b.release();
});

test('another process holding the directory keeps it until it is killed', async () => {
  const dir = tempDir();
  const script = `
    import { MvccStore } from ${JSON.stringify(path.join(import.meta.dir, 'mvcc.ts'))};
    await MvccStore.open({ dir: ${JSON.stringify(dir)}, fsync: 'none' });
    console.log('open');
    setInterval(() => {}, 1000);
  `;
  const file = path.join(dir, '..', `${path.basename(dir)}-holder.ts`);
  fs.writeFileSync(file, script);
  dirs.push(file);
  const child = Bun.spawn([process.execPath, file], { stdout: 'pipe', stderr: 'inherit' });
  try {
    const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('open');
    await expect(MvccStore.open({ dir, fsync: 'none' })).rejects.toBeInstanceOf(DirLockedError);
  } finally {
    child.kill('SIGKILL');
    await child.exited;
  }
  // The kernel let the lock go with the killed process: no stale lock to clear by hand.
  const s = await MvccStore.open({ dir, fsync: 'none' });
  await s.close();
});
