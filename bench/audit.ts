/**
 * The audit log's cost per request (issue 11 bench): the Auditor's work for one request at
 * Metadata level (policy match, RequestReceived and ResponseComplete events, JSON lines into the
 * buffered log file), against the same request with auditing off (a policy deciding None).
 *
 *     bun bench/audit.ts
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Bench } from 'tinybench';
import { parseRequestInfo, requestUrl } from '../src/api/request-info';
import { AuditLog, parsePolicy } from '../src/auth/audit';
import { Auditor } from '../src/auth/auditor';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-audit-bench-'));
const log = new AuditLog({ path: path.join(dir, 'audit.log'), maxSizeMB: 100, maxBackups: 1, maxAgeDays: 0, bufferSize: 1_000_000 });
const metadata = new Auditor(parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n'), log);
const none = new Auditor(parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n'), log);
const user = { name: 'admin', uid: 'admin', groups: ['system:masters', 'system:authenticated'] };
const href = 'https://127.0.0.1:6443/api/v1/namespaces/default/configmaps/cm-1';
const url = requestUrl(href);
const info = parseRequestInfo('GET', url.pathname, url.searchParams);
const res = new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });

const bench = new Bench({ time: 1000 });
for (const [name, a] of [
  ['auditing off (level None)', none],
  ['Metadata level', metadata],
] as const) {
  bench.add(name, () => {
    const req = new Request(href, { headers: { 'user-agent': 'kubectl/v1.33' } });
    const r = a.begin(req, info, url, user, undefined, crypto.randomUUID());
    r?.decide(true);
    r?.respond(res, false);
  });
}
await bench.run();
await Bun.sleep(200);
await log.flush();
for (const t of bench.tasks) {
  const r = t.result as { latency?: { mean: number } } | undefined;
  console.log(`${t.name.padEnd(28)} ${((r?.latency?.mean ?? Number.NaN) * 1000).toFixed(2)} us/request`);
}
console.log(
  `events written ${log.written}, dropped ${log.dropped}; file ${(fs.statSync(path.join(dir, 'audit.log')).size / 1e6).toFixed(1)} MB`,
);
fs.rmSync(dir, { recursive: true, force: true });
