/**
 * The durable apply floor, spawned by bench/api.ts after the server's apply phase: a bare
 * Bun.serve over TLS that does the least a server-side apply the server acknowledges can do, by
 * the server's own mechanism. Objects are held as the server holds them, JSON text; an apply
 * parses the body, parses the stored object, merges with the server's `apply()` (structured
 * merge and ownership: src/registry/apply), gives it the next resourceVersion, appends its JSON to
 * the floors' durable log (bench/floor-log.ts: checksummed frame, group-committed fdatasync),
 * keeps the text and answers 200 with it. No authentication, no admission, no decoding checks
 * (duplicate or unknown fields), no defaults or validation, no index of revisions, no watch
 * cache, no metrics: whatever an apply costs here, the server's cannot be less on this runtime
 * and machine.
 *
 * Environment: C, K (certificate and key), DIR (for the log), T (the stored text of the server's
 * `cm-<i>`, as its apply phase found it: created, then labelled `patched: yes-<i>` by the strategic
 * merge patch phase), PREBUILD (objects made ahead per prefix, 150,000 by default). The object `<prefix>-<i>` is that text with its own name,
 * uid and label `yes-<i>`, as the server's objects of the same name are; those the bench's phases
 * reach are made before the port is printed, so that a request pays for none of them.
 */
import { apply } from '../src/registry/apply';
import { SchemaSet } from '../src/schema/engine';
import definitions from '../src/schema/generated/definitions.json';
import { overlays } from '../src/schema/overlays';
import type { Definitions } from '../src/schema/types';
import { floorLog, serveFloor } from './floor-log';

// biome-ignore lint/suspicious/noExplicitAny: bench data
type Any = any;
const schemas = new SchemaSet(definitions as unknown as Definitions, overlays);
const log = floorLog(process.env.DIR as string);

// The template: the stored object with holes for the name, the uid and the label's number.
const t: Any = JSON.parse(process.env.T as string);
const tName = String(t.metadata?.name);
if (t.metadata?.labels?.patched !== `yes-${tName.slice(tName.lastIndexOf('-') + 1)}`)
  throw new Error(`apply-floor: T is not an object after the strategic merge patch phase: ${JSON.stringify(t.metadata)}`);
t.metadata.name = '@@name@@';
t.metadata.uid = '@@uid@@';
t.metadata.labels.patched = 'yes-@@num@@';
const parts = JSON.stringify(t).split(/@@(name|uid|num)@@/);
if (parts.length !== 7) throw new Error('apply-floor: the template lost a hole');
const made = (name: string): string => {
  const fill: Record<string, string> = { name, uid: crypto.randomUUID(), num: name.slice(name.lastIndexOf('-') + 1) };
  return parts.map((p, i) => (i % 2 === 1 ? (fill[p] as string) : p)).join('');
};

const objects = new Map<string, string>();
// PREBUILD: how many of each the phases may reach (tests make a few).
const prebuild = Number(process.env.PREBUILD ?? 150_000);
for (const [prefix, n] of [
  ['cm', prebuild],
  ['warm', Math.ceil(prebuild / 4)],
] as const)
  for (let i = 0; i < n; i++) objects.set(`${prefix}-${i}`, made(`${prefix}-${i}`));

let rev = 1;
let second = 0;
let nowText = '';
const now = (): string => {
  const s = Math.floor(Date.now() / 1000);
  if (s !== second) {
    second = s;
    nowText = `${new Date(s * 1000).toISOString().slice(0, 19)}Z`;
  }
  return nowText;
};
const json = { 'content-type': 'application/json' };

serveFloor(async (req) => {
  try {
    const url = new URL(req.url);
    const name = url.pathname.slice(url.pathname.lastIndexOf('/') + 1);
    const config = (await req.json()) as Any;
    const live = JSON.parse(objects.get(name) ?? made(name)) as Any;
    const { obj } = apply(live, config, {
      apiVersion: 'v1',
      schemas,
      defName: 'io.svc.api.core.v1.ConfigMap',
      manager: url.searchParams.get('fieldManager') ?? 'unknown',
      now: now(),
      force: url.searchParams.get('force') === 'true',
    });
    obj.metadata.resourceVersion = String(++rev);
    const text = JSON.stringify(obj);
    objects.set(name, text);
    await log.append(rev, text);
    return new Response(text, { headers: json });
  } catch (e) {
    return new Response(JSON.stringify({ kind: 'Status', code: 500, message: String(e) }), { status: 500, headers: json });
  }
});
