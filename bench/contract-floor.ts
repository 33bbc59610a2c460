/**
 * The contract floor for creates, spawned by bench/api.ts after the durable create floor: a bare
 * Bun.serve over TLS that does, for a ConfigMap create, everything issue 42 item 2 counts in a
 * full create (authentication, admission, validation, managedFields, durable write, watch cache)
 * and what the reference answers with, in straight-line code and by the server's own
 * mechanisms where they are the contract's work:
 *
 * - authentication (a bearer token's user from a table) and authorization (the user's groups:
 *   `system:masters` is allowed everything, as the server's RBAC authorizer short-circuits);
 * - decoding: the body parsed, its duplicate keys found (src/codec/json-dups.ts), the type meta
 *   checked, the schema's pruning, defaults and unknown fields (src/schema/engine.ts), each
 *   problem a Warning (fieldValidation Warn, the reference's default);
 * - the namespace looked up (NamespaceLifecycle), the namespace's quotas and the validating
 *   admission policies looked up (none here: ResourceQuota and the policies let the create pass);
 * - metadata (namespace, uid, creationTimestamp), the writer's managedFields
 *   (src/registry/apply/update.ts's recordUpdate), validation (src/api/validation.ts's
 *   ObjectMeta rules, src/kinds/validation/core.ts's ConfigMap rules);
 * - the store: a name in use is 409 AlreadyExists, else the object is encoded into the stored
 *   bytes (src/codec/stored.ts's encodeStored, into slabs), given the next revision, put in a
 *   revision index (a history per key, src/store/slot-map.ts, and the keys' order for lists and
 *   ranges, src/store/ordered-keys.ts) and appended to the floors' durable log (bench/floor-log.ts:
 *   checksummed frame, group-committed fdatasync); acknowledged only once durable;
 * - the watch cache: the event kept in a history of 102,400 (the server's default) and the
 *   object, with what selectors read of it, in the current state (a SlotMap and the keys' order);
 * - a request metric (a count by code and a latency histogram) and the answer: 201 with the
 *   object as stored (resourceVersion spliced into the stored text, src/codec/stored.ts), an
 *   Audit-Id, the reference's headers.
 *
 * Not here: what the server has besides the contract's work for this request (its HTTP chain,
 * priority and fairness, the registry's generality over kinds, the store's transactions and
 * change streams, the watch cache's fan-out machinery). So the server's CPU per create against
 * this floor's is what that machinery costs, and this floor's rate against etcd's puts is what
 * item 2's rate target asks of a server that does the contract's work on this runtime and machine.
 *
 * Environment: C, K (certificate and key), DIR (for the log), TOKEN (the bearer token of a user
 * in system:masters). Prints the port.
 */
import type { Obj } from '../src/api/meta';
import { validateObjectMeta } from '../src/api/validation';
import { findDuplicateKeys } from '../src/codec/json-dups';
import { encodeStored, writtenText } from '../src/codec/stored';
import { validateConfigMap } from '../src/kinds/validation/core';
import { recordUpdate } from '../src/registry/apply/update';
import { SchemaSet } from '../src/schema/engine';
import definitions from '../src/schema/generated/definitions.json';
import { overlays } from '../src/schema/overlays';
import type { Definitions } from '../src/schema/types';
import { OrderedKeys } from '../src/store/ordered-keys';
import { SlotMap } from '../src/store/slot-map';
import { floorLog, serveFloor } from './floor-log';

// A clean exit on SIGTERM (the bench stops it so), so that a CPU profile (BUN_OPTIONS=--cpu-prof) is written.
process.on('SIGTERM', () => process.exit(0));
const DEF = 'io.svc.api.core.v1.ConfigMap';
const HISTORY = 102_400;
const schemas = new SchemaSet(definitions as unknown as Definitions, overlays);
const log = floorLog(process.env.DIR as string);
const users = new Map([[`Bearer ${process.env.TOKEN}`, { name: 'admin', groups: ['system:masters', 'system:authenticated'] }]]);
const namespaces = new Map([['default', { phase: 'Active' }]]);
const quotasByNamespace = new Map<string, unknown[]>();
const policyBindings: unknown[] = [];

interface KV {
  key: string;
  value: Uint8Array;
  createRevision: number;
  modRevision: number;
  version: number;
}
interface Cached {
  kv: KV;
  name: string;
  namespace: string;
  labels: Record<string, string> | undefined;
}
const index = new SlotMap<KV[]>();
const indexOrder = new OrderedKeys();
const cache = new SlotMap<Cached>();
const cacheOrder = new OrderedKeys();
const history: ({ type: string; obj: Cached } | undefined)[] = new Array(HISTORY);
let historyAt = 0;
let revision = 1;

const BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];
const requests = new Map<string, number>();
const latency = new Float64Array(BUCKETS.length + 1);
function observe(code: number, started: number): void {
  const k = `POST configmaps ${code}`;
  requests.set(k, (requests.get(k) ?? 0) + 1);
  const s = (performance.now() - started) / 1000;
  let b = 0;
  while (b < BUCKETS.length && s > (BUCKETS[b] as number)) b++;
  (latency as Float64Array)[b] = (latency[b] as number) + 1;
}

let second = 0;
let nowText = '';
function now(): string {
  const s = Math.floor(Date.now() / 1000);
  if (s !== second) {
    second = s;
    nowText = `${new Date(s * 1000).toISOString().slice(0, 19)}Z`;
  }
  return nowText;
}

const PREFIX = '/api/v1/namespaces/';
function status(code: number, reason: string, message: string, auditId: string, started: number, details?: object): Response {
  observe(code, started);
  const body = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, details, code };
  return new Response(JSON.stringify(body), {
    status: code,
    headers: { 'audit-id': auditId, 'cache-control': 'no-cache, private', 'content-type': 'application/json' },
  });
}

serveFloor(async (req) => {
  const started = performance.now();
  const auditId = crypto.randomUUID();
  const user = users.get(req.headers.get('authorization') ?? '');
  if (user === undefined) return status(401, 'Unauthorized', 'Unauthorized', auditId, started);
  if (!user.groups.includes('system:masters')) return status(403, 'Forbidden', 'forbidden', auditId, started);
  const url = req.url;
  const path = url.slice(url.indexOf('/', 8), url.includes('?') ? url.indexOf('?') : url.length);
  const slash = path.indexOf('/', PREFIX.length);
  if (!path.startsWith(PREFIX) || path.slice(slash) !== '/configmaps')
    return status(404, 'NotFound', 'the server could not find the requested resource', auditId, started);
  const ns = path.slice(PREFIX.length, slash);
  const text = await req.text();
  let obj: Obj;
  try {
    obj = JSON.parse(text) as Obj;
  } catch (e) {
    return status(400, 'BadRequest', String(e), auditId, started);
  }
  const warnings = findDuplicateKeys(text).map((f) => `duplicate field "${f}"`);
  if (obj.apiVersion !== 'v1' || obj.kind !== 'ConfigMap' || typeof obj.metadata !== 'object' || obj.metadata === null)
    return status(400, 'BadRequest', 'not a v1 ConfigMap', auditId, started);
  const r = schemas.normalize(DEF, obj, { prune: true, defaults: true });
  if (r.typeErrors.length > 0) return status(400, 'BadRequest', 'type error', auditId, started);
  for (const f of r.unknown) warnings.push(`unknown field "${f}"`);
  const meta = obj.metadata;
  if (meta.namespace && meta.namespace !== ns)
    return status(
      400,
      'BadRequest',
      'the namespace of the provided object does not match the namespace sent on the request',
      auditId,
      started,
    );
  if (meta.resourceVersion)
    return status(400, 'BadRequest', 'resourceVersion should not be set on objects to be created', auditId, started);
  meta.namespace = ns;
  meta.uid = crypto.randomUUID();
  meta.creationTimestamp = now();
  const ua = req.headers.get('user-agent') ?? '';
  recordUpdate(undefined, obj, { manager: ua.split('/')[0] || 'unknown', apiVersion: 'v1', now: now(), schemas, defName: DEF });
  // Admission: NamespaceLifecycle, ResourceQuota, the validating admission policies.
  if (namespaces.get(ns)?.phase !== 'Active') return status(404, 'NotFound', `namespaces "${ns}" not found`, auditId, started);
  if ((quotasByNamespace.get(ns)?.length ?? 0) > 0 || policyBindings.length > 0) throw new Error('the floor evaluates no quota or policy');
  const errs = [...validateObjectMeta(meta, true, 'subdomain'), ...validateConfigMap(obj)];
  if (errs.length > 0) return status(422, 'Invalid', `ConfigMap "${meta.name}" is invalid`, auditId, started, { causes: errs });
  const key = `/registry/configmaps/${ns}/${meta.name}`;
  if (index.get(key) !== undefined)
    return status(409, 'AlreadyExists', `configmaps "${meta.name}" already exists`, auditId, started, {
      name: meta.name,
      kind: 'configmaps',
    });
  const rev = ++revision;
  const kv: KV = { key, value: encodeStored(obj), createRevision: rev, modRevision: rev, version: 1 };
  index.insert(key, [kv]);
  indexOrder.add(key);
  await log.append(rev, kv.value);
  meta.resourceVersion = String(rev);
  const cached: Cached = { kv, name: meta.name as string, namespace: ns, labels: meta.labels };
  if (cache.set(key, cached)) cacheOrder.add(key);
  history[historyAt] = { type: 'ADDED', obj: cached };
  historyAt = (historyAt + 1) % HISTORY;
  observe(201, started);
  const headers: Record<string, string> = { 'audit-id': auditId, 'cache-control': 'no-cache, private', 'content-type': 'application/json' };
  if (warnings.length > 0) headers.warning = warnings.map((w) => `299 - ${JSON.stringify(w)}`).join(', ');
  return new Response(writtenText(obj) as string, { status: 201, headers });
});
