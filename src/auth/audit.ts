/**
 * The audit log (the reference's audit policy and log backend): with --audit-log-path, every
 * request the --audit-policy-file rules give a level other than None is written as JSON lines of
 * audit.k8s.io/v1 Events:
 *
 *   RequestReceived    when the request arrives (after authentication)
 *   ResponseStarted    when a watch's stream begins
 *   ResponseComplete   when the answer is sent
 *
 * Levels: Metadata (who, what, when, the answer's status), Request (and the request body),
 * RequestResponse (and the response body). Rules match users, userGroups, verbs, resources
 * (group, resources with `*` and `res/sub`, resourceNames), namespaces, nonResourceURLs (`prefix*`);
 * the first matching rule decides; no match is None. omitStages (policy-wide and per rule) and
 * omitManagedFields as the reference. Events carry `authorization.k8s.io/decision` and `reason`.
 *
 * Writing never blocks a request: events wait in a bounded buffer (dropped, counted and logged when
 * it is full) and are appended in batches; the file rotates at --audit-log-maxsize megabytes,
 * keeping --audit-log-maxbackup files no older than --audit-log-maxage days ("-" writes to stdout).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import YAML from 'yaml';
import { svcGroup } from '../api/brand';
import { isObject } from '../api/meta';
import type { RequestInfo } from '../api/request-info';
import type { UserInfo } from '../api/user';

export type AuditLevel = 'None' | 'Metadata' | 'Request' | 'RequestResponse';
export type Stage = 'RequestReceived' | 'ResponseStarted' | 'ResponseComplete' | 'Panic';

interface PolicyRule {
  level: AuditLevel;
  users: string[];
  userGroups: string[];
  verbs: string[];
  resources: { group: string; resources: string[]; resourceNames: string[] }[] | undefined;
  namespaces: string[];
  nonResourceURLs: string[];
  omitStages: Stage[];
  omitManagedFields?: boolean;
}

export interface AuditPolicy {
  rules: PolicyRule[];
  omitStages: Stage[];
  omitManagedFields: boolean;
}

const LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'];
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** Parses an audit.k8s.io/v1 Policy (YAML or JSON); throws with what is wrong. */
export function parsePolicy(text: string): AuditPolicy {
  const doc = YAML.parse(text) as unknown;
  if (!isObject(doc) || doc.kind !== 'Policy') throw new Error('audit policy: not a Policy object');
  if (typeof doc.apiVersion === 'string' && !/^audit\.k8s\.io\/v1/.test(doc.apiVersion))
    throw new Error(`audit policy: unsupported apiVersion ${doc.apiVersion}`);
  const rules = (Array.isArray(doc.rules) ? doc.rules : []).map((r, i) => {
    if (!isObject(r) || !LEVELS.includes(String(r.level)))
      throw new Error(`audit policy: rules[${i}].level must be one of ${LEVELS.join(', ')}`);
    return {
      level: r.level as AuditLevel,
      users: strings(r.users),
      userGroups: strings(r.userGroups),
      verbs: strings(r.verbs),
      resources: Array.isArray(r.resources)
        ? r.resources.filter(isObject).map((g) => ({
            group: svcGroup(String(g.group ?? '')),
            resources: strings(g.resources),
            resourceNames: strings(g.resourceNames),
          }))
        : undefined,
      namespaces: strings(r.namespaces),
      nonResourceURLs: strings(r.nonResourceURLs),
      omitStages: strings(r.omitStages) as Stage[],
      omitManagedFields: typeof r.omitManagedFields === 'boolean' ? r.omitManagedFields : undefined,
    };
  });
  return { rules, omitStages: strings(doc.omitStages) as Stage[], omitManagedFields: doc.omitManagedFields === true };
}

function resourceMatches(rule: PolicyRule, info: RequestInfo): boolean {
  if (!info.isResourceRequest)
    return rule.resources === undefined && (rule.nonResourceURLs.length === 0 || urlMatches(rule.nonResourceURLs, info.path));
  if (rule.nonResourceURLs.length > 0) return false;
  if (rule.namespaces.length > 0 && !rule.namespaces.includes(info.namespace)) return false;
  if (!rule.resources) return true;
  const combined = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  return rule.resources.some(
    (g) =>
      g.group === info.group &&
      (g.resources.length === 0 ||
        g.resources.some((r) => r === '*' || r === combined || r === `${info.resource}/*` || r === `*/${info.subresource}`)) &&
      (g.resourceNames.length === 0 || g.resourceNames.includes(info.name)),
  );
}

const urlMatches = (urls: string[], p: string): boolean =>
  urls.some((u) => u === '*' || u === p || (u.endsWith('*') && p.startsWith(u.slice(0, -1))));

/** The level and omitted stages of a request under the policy (the first matching rule). */
export function levelOf(
  policy: AuditPolicy,
  user: UserInfo,
  info: RequestInfo,
): { level: AuditLevel; omit: Set<Stage>; omitManagedFields: boolean } {
  for (const r of policy.rules) {
    if (r.users.length > 0 && !r.users.includes(user.name)) continue;
    if (r.userGroups.length > 0 && !r.userGroups.some((g) => user.groups.includes(g))) continue;
    if (r.verbs.length > 0 && !r.verbs.includes(info.verb)) continue;
    if (!resourceMatches(r, info)) continue;
    return {
      level: r.level,
      omit: new Set([...policy.omitStages, ...r.omitStages]),
      omitManagedFields: r.omitManagedFields ?? policy.omitManagedFields,
    };
  }
  return { level: 'None', omit: new Set(), omitManagedFields: false };
}

export interface AuditLogOptions {
  path: string;
  maxSizeMB: number;
  maxBackups: number;
  maxAgeDays: number;
  /** Events held before writing; more are dropped (counted, logged). */
  bufferSize?: number;
  log?: (msg: string) => void;
}

/** The log backend: a bounded buffer written in batches, with size-based rotation. */
export class AuditLog {
  private buffer: string[] = [];
  private flushing = false;
  private size = 0;
  /** Events dropped because the buffer was full (apiserver_audit_error_total). */
  dropped = 0;
  /** Events written (apiserver_audit_event_total counts these and those queued). */
  written = 0;

  /** Events waiting to be written. */
  get queued(): number {
    return this.buffer.length;
  }

  constructor(private readonly o: AuditLogOptions) {
    if (o.path !== '-') {
      fs.mkdirSync(path.dirname(o.path), { recursive: true });
      this.size = fs.existsSync(o.path) ? fs.statSync(o.path).size : 0;
    }
  }

  add(event: Record<string, unknown>): void {
    if (this.buffer.length >= (this.o.bufferSize ?? 10_000)) {
      if (this.dropped++ === 0 || this.dropped % 1000 === 0) this.o.log?.(`audit: buffer full, ${this.dropped} events dropped`);
      return;
    }
    this.buffer.push(`${JSON.stringify(event)}\n`);
    if (!this.flushing) {
      this.flushing = true;
      setImmediate(() => void this.flush());
    }
  }

  /** Writes what is buffered (awaitable at shutdown). */
  async flush(): Promise<void> {
    try {
      while (this.buffer.length > 0) {
        const lines = this.buffer;
        this.buffer = [];
        const text = lines.join('');
        if (this.o.path === '-') process.stdout.write(text);
        else {
          if (this.o.maxSizeMB > 0 && this.size > 0 && this.size + text.length > this.o.maxSizeMB * 1024 * 1024) await this.rotate();
          await fs.promises.appendFile(this.o.path, text);
          this.size += Buffer.byteLength(text);
        }
        this.written += lines.length;
      }
    } catch (e) {
      this.o.log?.(`audit: cannot write ${this.o.path}: ${(e as Error).message}`);
    } finally {
      this.flushing = false;
    }
  }

  /** Renames the log aside; backups past maxBackups or maxAgeDays are unlinked off the event loop. */
  private async rotate(): Promise<void> {
    const ext = path.extname(this.o.path);
    const base = this.o.path.slice(0, this.o.path.length - ext.length);
    const stamp = new Date()
      .toISOString()
      .replace(/[:]/g, '-')
      .replace(/\.(\d{3})Z$/, '.$1');
    fs.renameSync(this.o.path, `${base}-${stamp}${ext}`);
    this.size = 0;
    const dir = path.dirname(this.o.path);
    const prefix = `${path.basename(base)}-`;
    const backups = fs
      .readdirSync(dir)
      .filter((f) => f.startsWith(prefix) && f.endsWith(ext))
      .sort()
      .reverse();
    const cutoff = Date.now() - this.o.maxAgeDays * 86_400_000;
    await Promise.all(
      backups.flatMap((f, i) => {
        const p = path.join(dir, f);
        const old = (this.o.maxBackups > 0 && i >= this.o.maxBackups) || (this.o.maxAgeDays > 0 && fs.statSync(p).mtimeMs < cutoff);
        return old ? [fs.promises.rm(p, { force: true })] : [];
      }),
    );
  }
}

/** The objectRef of a resource request. */
export function objectRef(info: RequestInfo): Record<string, string> | undefined {
  if (!info.isResourceRequest) return undefined;
  const ref: Record<string, string> = { resource: info.resource };
  if (info.namespace) ref.namespace = info.namespace;
  if (info.name) ref.name = info.name;
  ref.apiGroup = info.group;
  ref.apiVersion = info.version;
  if (info.subresource) ref.subresource = info.subresource;
  return ref;
}
