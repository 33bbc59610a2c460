/**
 * A full disk under a running server: the data dir lives on a 100 MiB tmpfs (mounted by the
 * test; skipped where it cannot mount one). Creates of ~900 KB ConfigMaps fill the first
 * 64 MiB WAL segment; the next segment cannot be allocated. Then:
 *   - the write that does not fit, and every later one, is answered with a 500 Status and
 *     nothing else changes (no dirty read of the refused object);
 *   - reads keep working, /readyz and /livez fail naming the store, the process stays up;
 *   - a WAL segment or snapshot that could not be written in full leaves no file behind;
 *   - every acknowledged create is there, unchanged, after a restart on a disk with room
 *     (the data dir copied off the tmpfs), and the refused one is not; writes work again.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startServer } from './helpers/server';

const mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-full-'));
const mounted = Bun.spawnSync(['mount', '-t', 'tmpfs', '-o', 'size=100m', 'tmpfs', mnt], { stderr: 'pipe' }).exitCode === 0;
if (!mounted) {
  console.log('disk-full test skipped: cannot mount a 100 MiB tmpfs here (it needs root and mount rights)');
  fs.rmSync(mnt, { recursive: true, force: true });
}

// biome-ignore lint/suspicious/noExplicitAny: decoded JSON bodies of the responses under test
type Json = any;
const cms = '/api/v1/namespaces/default/configmaps';
const cm = (name: string, v: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v } });

describe.skipIf(!mounted)('a full disk', () => {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-full-copy-'));
  afterAll(() => {
    Bun.spawnSync(['umount', '-l', mnt]);
    fs.rmSync(mnt, { recursive: true, force: true });
    fs.rmSync(copy, { recursive: true, force: true });
  });

  test('writes are refused with a Status, nothing acknowledged is lost, the server stays up', async () => {
    const dataDir = path.join(mnt, 'data');
    const srv = await startServer({ dataDir });
    const acked: { name: string; uid: string; rv: string; v: string }[] = [];
    let refused: { name: string; status: number; body: Json } | undefined;
    try {
      for (let i = 0; i < 200 && !refused; i++) {
        const name = `big-${i}`;
        const v = `${i}:`.padEnd(900_000, String.fromCharCode(97 + (i % 26)));
        const r = await srv.json('POST', cms, cm(name, v));
        if (r.status === 201) acked.push({ name, uid: r.body.metadata.uid, rv: r.body.metadata.resourceVersion, v });
        else refused = { name, status: r.status, body: r.body };
      }
      console.log(`acknowledged ${acked.length} creates; then ${refused?.status}: ${refused?.body?.message}`);
      // ~70 creates fill the first segment; the next one cannot be allocated on this disk.
      expect(refused).toBeDefined();
      expect(acked.length).toBeGreaterThan(30);
      const ref = refused as { name: string; status: number; body: Json };
      expect(ref.status).toBe(500);
      expect(ref.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'InternalError', code: 500 });
      expect(String(ref.body.message)).toMatch(/ENOSPC|no space/i);

      // Later writes are refused too (small ones included), and change nothing.
      const small = await srv.json('POST', cms, cm('small', 'x'));
      expect(small.status).toBe(500);
      expect(small.body.kind).toBe('Status');
      expect((await srv.json('GET', `${cms}/${ref.name}`)).status).toBe(404);
      expect((await srv.json('GET', `${cms}/small`)).status).toBe(404);

      // Reads keep working; health names the store.
      const first = acked[0] as (typeof acked)[number];
      const got = await srv.json('GET', `${cms}/${first.name}`);
      expect(got.status).toBe(200);
      expect(got.body.metadata.uid).toBe(first.uid);
      const list = await srv.json('GET', `${cms}?limit=5`);
      expect(list.status).toBe(200);
      expect(list.body.metadata.remainingItemCount + list.body.items.length).toBe(acked.length);
      for (const p of ['/readyz?verbose', '/livez?verbose']) {
        const h = await srv.fetch(p);
        const text = await h.text();
        expect(h.status).toBe(500);
        expect(text).toContain('[-]etcd failed');
      }
      expect(srv.proc.exitCode).toBeNull();
      expect(srv.logs()).toMatch(/wal: write failed, refusing further writes/);
    } finally {
      await srv.stop();
    }

    // What could not be written in full (the next WAL segment, a snapshot) gave its space back.
    const leftovers = (fs.readdirSync(dataDir, { recursive: true }) as string[]).filter((f) => f.endsWith('.tmp'));
    expect(leftovers).toEqual([]);

    // The same data on a disk with room: every acknowledged create, unchanged; not the refused one.
    fs.cpSync(dataDir, copy, { recursive: true });
    const again = await startServer({ dataDir: copy });
    try {
      for (const a of acked) {
        const r = await again.json('GET', `${cms}/${a.name}`);
        expect(r.status).toBe(200);
        expect(r.body.metadata.uid).toBe(a.uid);
        expect(r.body.metadata.resourceVersion).toBe(a.rv);
        expect(r.body.data.v === a.v).toBe(true);
      }
      expect((await again.json('GET', `${cms}/${refused?.name}`)).status).toBe(404);
      expect((await again.json('POST', cms, cm('after', 'y'))).status).toBe(201);
      expect((await again.fetch('/readyz')).status).toBe(200);
    } finally {
      await again.stop();
    }
  }, 180_000);
});
