import { afterEach, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AuditLog } from './audit';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

test('the log rotates at --audit-log-maxsize and keeps at most --audit-log-maxbackup backups, every event in one file', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-rotate-'));
  dirs.push(dir);
  const file = path.join(dir, 'audit.log');
  // 2 KB per file: each batch below is ~1.2 KB, so every second batch rotates.
  const log = new AuditLog({ path: file, maxSizeMB: 2 / 1024, maxBackups: 2, maxAgeDays: 0 });
  let n = 0;
  for (let batch = 0; batch < 8; batch++) {
    for (let i = 0; i < 10; i++) log.add({ kind: 'Event', auditID: `id-${n++}`, pad: 'x'.repeat(80) });
    await log.flush();
    await Bun.sleep(3); // backups are named by the time to the millisecond
  }
  const names = fs.readdirSync(dir).sort();
  expect(names).toContain('audit.log');
  const backups = names.filter((f) => f !== 'audit.log');
  expect(backups).toHaveLength(2);
  for (const b of backups) expect(b).toMatch(/^audit-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}\.log$/);
  // No file past the bound, and the newest events are all there, in order.
  const ids = [...backups, 'audit.log'].flatMap((f) => {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    expect(text.length).toBeLessThanOrEqual(2048);
    return text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).auditID as string);
  });
  expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => `id-${n - ids.length + i}`));
  expect(ids.length).toBeGreaterThanOrEqual(30);
  expect(log.written).toBe(n);
});
