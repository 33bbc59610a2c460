import { expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseRequestInfo, requestUrl } from '../api/request-info';
import { AuditLog, parsePolicy } from './audit';
import { Auditor } from './auditor';

test('a request that fails inside the server ends its audit with a Panic event (500), as the reference audits a recovered panic', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-panic-'));
  try {
    const file = path.join(dir, 'audit.log');
    const log = new AuditLog({ path: file, maxSizeMB: 100, maxBackups: 1, maxAgeDays: 1 });
    const auditor = new Auditor(parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n'), log);
    const req = new Request('https://127.0.0.1/api/v1/namespaces/default/configmaps/x');
    const url = requestUrl(req.url);
    const info = parseRequestInfo('GET', url.pathname, url.searchParams);
    const record = auditor.begin(req, info, url, { name: 'alice', uid: 'u1', groups: ['system:authenticated'] }, undefined, 'audit-1');
    expect(record).toBeDefined();
    record?.panic('boom');
    expect(record?.done).toBe(true);
    await log.flush();
    const events = fs
      .readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.map((e) => e.stage)).toEqual(['RequestReceived', 'Panic']);
    expect(events[1]).toMatchObject({
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: 'Metadata',
      verb: 'get',
      user: { username: 'alice' },
      objectRef: { resource: 'configmaps', namespace: 'default', name: 'x' },
      responseStatus: { code: 500, status: 'Failure', message: "APIServer panic'd: boom" },
    });
    expect(events[1].auditID).toBe(events[0].auditID);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
