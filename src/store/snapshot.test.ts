import { afterEach, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadSnapshot, writeSnapshot } from './snapshot';
import type { KeyValue } from './types';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const kv = (key: string, rev: number): KeyValue => ({
  key,
  value: new TextEncoder().encode(`v${rev}`),
  createRevision: rev,
  modRevision: rev,
  version: 1,
});

test('a load keeps only the newest snapshot: an older one left by a kill between rename and cleanup goes', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-snap-'));
  dirs.push(dir);
  const chunks = (items: KeyValue[]) => (after: string | undefined) => (after === undefined ? items : []);
  const first = await writeSnapshot(dir, 5, chunks([kv('/a', 5)]));
  const kept = fs.readFileSync(first.file);
  await writeSnapshot(dir, 9, chunks([kv('/a', 5), kv('/b', 9)]));
  expect(fs.existsSync(first.file)).toBe(false);
  // The process died after the rename of rev 9 and before rev 5 was removed; a half-written
  // next snapshot is there too.
  fs.writeFileSync(first.file, kept);
  fs.writeFileSync(path.join(dir, `${(12).toString(16).padStart(16, '0')}.snap.tmp`), 'partial');
  const keys: string[] = [];
  expect(loadSnapshot(dir, (e) => keys.push(e.key))).toBe(9);
  expect(keys).toEqual(['/a', '/b']);
  expect(fs.readdirSync(dir)).toEqual([`${(9).toString(16).padStart(16, '0')}.snap`]);
});
