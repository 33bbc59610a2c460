/**
 * The reference fixtures (fully populated objects of every kind) through create + get: the
 * schemas must know every field, so a strict create never reports an unknown field, and what is
 * stored comes back unchanged. Fixtures hold placeholder values ("dnsPolicyValue") that
 * validation rightly refuses for some kinds; those must fail with 422 Invalid, not with a 400
 * strict decoding error. Needs ../shared/reference (helpers/needs: a failure under CI, else a skip).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FIXTURE_KINDS, FIXTURES, sanitizeFixture } from './helpers/fixtures';
import { has, needs } from './helpers/needs';
import { type Server, STATIC_WORKLOADS, startServer } from './helpers/server';

const REF = FIXTURES;
const present = has('reference');
const KINDS = FIXTURE_KINDS;
const sanitize = sanitizeFixture;

let srv: Server;
beforeAll(async () => {
  // The Deployment fixture comes back as sent: no controller annotates it with a revision.
  if (present) srv = await startServer({ args: [STATIC_WORKLOADS] });
}, 30_000);
afterAll(async () => {
  if (present) await srv.stop();
});

needs('reference').describe('reference fixtures through create + get', () => {
  for (const [file, collection] of Object.entries(KINDS)) {
    test(file, async () => {
      const fixture = JSON.parse(fs.readFileSync(path.join(REF, `${file}.json`), 'utf8'));
      const name = `fx-${file.split('.').pop()?.toLowerCase()}`;
      const body = sanitize(structuredClone(fixture), name, collection.includes('/namespaces/default/'));
      // The Priority and ServiceAccount admission plugins refuse (403, before validation) a pod
      // naming a PriorityClass or a service account that does not exist, or giving a priority of
      // its own: the fixture's placeholders are left out.
      if (file === 'core.v1.Pod') {
        for (const k of ['priorityClassName', 'priority', 'preemptionPolicy', 'serviceAccountName', 'serviceAccount']) delete body.spec[k];
      }
      const c = await srv.json('POST', `${collection}?fieldValidation=Strict`, body);
      // Never an unknown field: the schema knows everything in the reference object.
      expect(JSON.stringify(c.body)).not.toContain('unknown field');
      if (c.status === 422) {
        // Placeholder values refused by validation: the fields were all known (no 400).
        expect(c.body.reason).toBe('Invalid');
        console.log(`${file}: 422 on placeholder values (${c.body.details.causes.length} causes); schema knew every field`);
        return;
      }
      expect(c.status).toBe(201);
      const g = await srv.json('GET', `${collection}/${name}`);
      expect(g.status).toBe(200);
      // Every field except server-owned metadata and status comes back as sent. A Secret's
      // write-only stringData is merged into data (base64), as the reference does.
      const want = structuredClone(body);
      if (want.stringData) {
        for (const [k, v] of Object.entries(want.stringData as Record<string, string>)) want.data[k] = Buffer.from(v).toString('base64');
        delete want.stringData;
        expect(g.body.stringData).toBeUndefined();
      }
      for (const k of Object.keys(want)) {
        if (k === 'metadata' || k === 'status') continue;
        expect(g.body[k]).toEqual(want[k]);
      }
      expect(g.body.metadata.labels).toEqual(body.metadata.labels);
      expect(g.body.metadata.annotations).toEqual(body.metadata.annotations);
    });
  }
});
