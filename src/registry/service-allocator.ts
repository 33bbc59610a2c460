/**
 * Service addresses: cluster IPs from `--service-cluster-ip-range` and node ports from
 * `--service-node-port-range`, as the reference's service registry allocates them.
 *
 * Every allocation is a key of its own in the store, created only if absent:
 *
 *   /registry/ranges/serviceips/10.0.0.17        → "default/web"
 *   /registry/ranges/servicenodeports/30080      → "default/web"
 *
 * so two creates (in one process or on two replicas sharing etcd) can never hold the same address,
 * and the allocation survives restarts with the store. An allocation is taken before the Service
 * is written and given back if the write fails; a crash in between leaves a key without its
 * Service, which the repair pass at start removes (the reference runs the same repair loop).
 *
 * Dynamic picks prefer the upper band of a range and leave the lower band to addresses clients
 * ask for (the reference's ServiceIPStaticSubrange): band = min(max(size/16, 16), 256) IPs,
 * min(max(size/32, 16), 128) ports. The first IP of the range is the `kubernetes` Service's.
 */
import type { Obj } from '../api/meta';
import { type IPv4Range, ipv4ToNumber, ipv4ToString, parseIPv4Range } from '../api/net';
import { GO_SYNTAX, invalid } from '../api/status';
import type { FieldError } from '../api/validation';
import { type KV, prefixEnd, StoreError } from '../store/types';
import type { WriteHooks } from './hooks';

const IP_PREFIX = '/registry/ranges/serviceips/';
const PORT_PREFIX = '/registry/ranges/servicenodeports/';
const enc = new TextEncoder();
const dec = new TextDecoder();

export interface ServiceRanges {
  /** e.g. 10.0.0.0/24 */
  clusterIPRange: string;
  /** e.g. [30000, 32767] */
  nodePortRange: [number, number];
}

type ServiceSpec = {
  type?: string;
  clusterIP?: string;
  clusterIPs?: string[];
  ipFamilies?: string[];
  ipFamilyPolicy?: string;
  ports?: { nodePort?: number; port?: number }[];
};

const specOf = (o: Obj): ServiceSpec => (o.spec ?? {}) as ServiceSpec;
const needsIp = (s: ServiceSpec): boolean => s.type !== 'ExternalName' && s.clusterIP !== 'None';
const needsNodePorts = (s: ServiceSpec): boolean => s.type === 'NodePort' || s.type === 'LoadBalancer';

/** A random pick among `n` candidates starting at a random offset: the first free one. */
function* scan(start: number, n: number): Generator<number> {
  const first = Math.floor(Math.random() * n);
  for (let i = 0; i < n; i++) yield start + ((first + i) % n);
}

export class ServiceAllocator implements WriteHooks {
  private readonly cidr: IPv4Range;
  private readonly ports: [number, number];

  constructor(
    private readonly kv: KV,
    ranges: ServiceRanges,
  ) {
    this.cidr = parseIPv4Range(ranges.clusterIPRange);
    this.ports = ranges.nodePortRange;
  }

  /** The IP of the `kubernetes` Service: the first address of the range. */
  get kubernetesIP(): string {
    return ipv4ToString(this.cidr.base + 1);
  }

  async reserve(obj: Obj, old: Obj | undefined, dryRun: boolean): Promise<(() => Promise<void>) | undefined> {
    const spec = specOf(obj);
    const owner = `${obj.metadata.namespace}/${obj.metadata.name}`;
    const taken: string[] = [];
    const undo = async () => {
      for (const k of taken) await this.free(k, owner);
    };
    const errs: FieldError[] = [];
    try {
      // IP families on this single-stack IPv4 range: every Service with a cluster IP, and headless
      // ones with a selector (the reference leaves headless Services without one to their own).
      if (needsIp(spec) || (spec.type !== 'ExternalName' && (obj.spec as { selector?: unknown }).selector !== undefined)) {
        if (spec.ipFamilyPolicy === undefined) spec.ipFamilyPolicy = 'SingleStack';
        if (spec.ipFamilies === undefined) spec.ipFamilies = ['IPv4'];
      }
      const oldSpec = old ? specOf(old) : undefined;
      const held = oldSpec && needsIp(oldSpec) ? oldSpec.clusterIP : undefined;
      if (needsIp(spec) && !(held && held === (spec.clusterIP ?? held))) {
        const requested = spec.clusterIP || spec.clusterIPs?.[0] || '';
        const ip = requested ? await this.claimIp(requested, owner, dryRun, errs) : await this.anyIp(owner, dryRun, errs);
        if (ip) {
          if (!dryRun) taken.push(IP_PREFIX + ip);
          spec.clusterIP = ip;
          spec.clusterIPs = [ip];
        }
      } else if (held && needsIp(spec)) {
        spec.clusterIP = held;
        spec.clusterIPs = [held];
      }
      if (needsNodePorts(spec)) {
        const before = new Set((oldSpec && needsNodePorts(oldSpec) ? (oldSpec.ports ?? []) : []).map((p) => p.nodePort));
        const ports = spec.ports ?? [];
        for (let i = 0; i < ports.length; i++) {
          const p = ports[i] as { nodePort?: number };
          if (p.nodePort !== undefined && before.has(p.nodePort)) continue;
          const n = p.nodePort
            ? await this.claimPort(p.nodePort, owner, dryRun, errs, i)
            : await this.anyPort(owner, dryRun, errs, i, new Set(ports.map((x) => x.nodePort)));
          if (n !== undefined) {
            if (!dryRun) taken.push(PORT_PREFIX + n);
            p.nodePort = n;
          }
        }
      }
    } catch (e) {
      await undo();
      throw e;
    }
    if (errs.length > 0) {
      await undo();
      throw invalid('Service', '', obj.metadata.name as string, errs);
    }
    return taken.length > 0 ? undo : undefined;
  }

  async release(obj: Obj, keep?: Obj): Promise<void> {
    const spec = specOf(obj);
    const next = keep ? specOf(keep) : undefined;
    const owner = `${obj.metadata.namespace}/${obj.metadata.name}`;
    if (needsIp(spec) && spec.clusterIP && !(next && needsIp(next) && next.clusterIP === spec.clusterIP)) {
      await this.free(IP_PREFIX + spec.clusterIP, owner);
    }
    if (needsNodePorts(spec)) {
      const still = new Set(next && needsNodePorts(next) ? (next.ports ?? []).map((p) => p.nodePort) : []);
      for (const p of spec.ports ?? []) if (p.nodePort && !still.has(p.nodePort)) await this.free(PORT_PREFIX + p.nodePort, owner);
    }
  }

  /**
   * The repair pass: allocation keys whose Service is gone (a crash between allocation and write)
   * are removed; addresses Services hold without a key (written before this allocator) get one.
   */
  async repair(services: Obj[]): Promise<{ removed: number; added: number }> {
    const want = new Map<string, string>();
    for (const s of services) {
      const spec = specOf(s);
      const owner = `${s.metadata.namespace}/${s.metadata.name}`;
      if (needsIp(spec) && spec.clusterIP) want.set(IP_PREFIX + spec.clusterIP, owner);
      if (needsNodePorts(spec)) for (const p of spec.ports ?? []) if (p.nodePort) want.set(PORT_PREFIX + p.nodePort, owner);
    }
    let removed = 0;
    let added = 0;
    for (const prefix of [IP_PREFIX, PORT_PREFIX]) {
      const r = await this.kv.range(prefix, { end: prefixEnd(prefix) });
      for (const kv of r.kvs) {
        if (want.get(kv.key) === dec.decode(kv.value)) want.delete(kv.key);
        else {
          await this.kv.txn({
            compare: [{ key: kv.key, target: 'mod', result: '=', value: kv.modRevision }],
            success: [{ op: 'delete', key: kv.key }],
          });
          removed++;
        }
      }
    }
    for (const [key, owner] of want) if (await this.claim(key, owner)) added++;
    return { removed, added };
  }

  // ---- IPs -------------------------------------------------------------------------------------

  private async claimIp(requested: string, owner: string, dryRun: boolean, errs: FieldError[]): Promise<string | undefined> {
    const n = ipv4ToNumber(requested);
    const bad = (detail: string) =>
      errs.push({
        type: 'FieldValueInvalid',
        field: 'spec.clusterIPs',
        badValue: goStrings([requested]),
        detail: `failed to allocate IP ${requested}: ${detail}`,
      });
    if (n === undefined) return void bad('not a valid IP');
    const { base, size, text } = this.cidr;
    if (n <= base || n >= base + size - 1) {
      return void bad(`the provided IP (${requested}) is not in the valid range. The range of valid IPs is ${text}`);
    }
    const ok = dryRun ? !(await this.held(IP_PREFIX + requested)) : await this.claim(IP_PREFIX + requested, owner);
    if (!ok) return void bad('provided IP is already allocated');
    return requested;
  }

  private async anyIp(owner: string, dryRun: boolean, errs: FieldError[]): Promise<string | undefined> {
    const { base, size, text } = this.cidr;
    // Usable: base+1 .. base+size-2; base+1 is the kubernetes Service's.
    const usable = size - 2;
    const band = Math.min(Math.max(Math.floor(size / 16), 16), 256, usable);
    const lower = base + 1;
    for (const [start, n] of [
      [lower + band, usable - band],
      [lower + 1, band - 1],
    ] as const) {
      if (n <= 0) continue;
      for (const ip of scan(start, n)) {
        const key = IP_PREFIX + ipv4ToString(ip);
        if (dryRun ? !(await this.held(key)) : await this.claim(key, owner)) return ipv4ToString(ip);
      }
    }
    errs.push({
      type: 'FieldValueInvalid',
      field: 'spec.clusterIPs',
      badValue: goStrings([]),
      detail: `failed to allocate a serviceIP: range is full (${text})`,
    });
    return undefined;
  }

  // ---- node ports ------------------------------------------------------------------------------

  private async claimPort(port: number, owner: string, dryRun: boolean, errs: FieldError[], i: number): Promise<number | undefined> {
    const [lo, hi] = this.ports;
    const field = `spec.ports[${i}].nodePort`;
    if (port < lo || port > hi) {
      errs.push({
        type: 'FieldValueInvalid',
        field,
        badValue: port,
        detail: `provided port is not in the valid range. The range of valid ports is ${lo}-${hi}`,
      });
      return undefined;
    }
    const ok = dryRun ? !(await this.held(PORT_PREFIX + port)) : await this.claim(PORT_PREFIX + port, owner);
    if (!ok) {
      errs.push({ type: 'FieldValueInvalid', field, badValue: port, detail: 'provided port is already allocated' });
      return undefined;
    }
    return port;
  }

  private async anyPort(
    owner: string,
    dryRun: boolean,
    errs: FieldError[],
    i: number,
    mine: Set<number | undefined>,
  ): Promise<number | undefined> {
    const [lo, hi] = this.ports;
    const size = hi - lo + 1;
    const band = Math.min(Math.max(Math.floor(size / 32), 16), 128, size);
    for (const [start, n] of [
      [lo + band, size - band],
      [lo, band],
    ] as const) {
      if (n <= 0) continue;
      for (const port of scan(start, n)) {
        if (mine.has(port)) continue;
        const key = PORT_PREFIX + port;
        if (dryRun ? !(await this.held(key)) : await this.claim(key, owner)) return port;
      }
    }
    errs.push({
      type: 'FieldValueInvalid',
      field: `spec.ports[${i}].nodePort`,
      badValue: 0,
      detail: `failed to allocate a nodePort: range is full (${lo}-${hi})`,
    });
    return undefined;
  }

  // ---- keys ------------------------------------------------------------------------------------

  /** Create the key if absent; false when someone holds it. */
  private async claim(key: string, owner: string): Promise<boolean> {
    const r = await this.kv.txn({
      compare: [{ key, target: 'mod', result: '=', value: 0 }],
      success: [{ op: 'put', key, value: enc.encode(owner) }],
    });
    return r.succeeded;
  }

  private async held(key: string): Promise<boolean> {
    return (await this.kv.range(key)).kvs.length > 0;
  }

  /** Remove the key if `owner` holds it. */
  private async free(key: string, owner: string): Promise<void> {
    const r = await this.kv.range(key);
    const kv = r.kvs[0];
    if (!kv || dec.decode(kv.value) !== owner) return;
    const t = await this.kv.txn({
      compare: [{ key, target: 'mod', result: '=', value: kv.modRevision }],
      success: [{ op: 'delete', key }],
    });
    if (!t.succeeded) throw new StoreError('conflict', `allocation ${key} changed while it was freed`);
  }
}

/** Go's %#v of a []string, as the reference prints the bad value of spec.clusterIPs. */
function goStrings(v: string[]): { [k: symbol]: string } {
  return { [GO_SYNTAX]: `[]string{${v.map((s) => JSON.stringify(s)).join(', ')}}` };
}
