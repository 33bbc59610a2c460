/**
 * What ValidatingAdmissionPolicies add to a create (issue 13 bench), with 0 policies, 10 policies
 * that do not match the request (rules on another resource), 1 and 10 matching policies with a
 * simple expression, and what one MutatingAdmissionPolicy adds (issue 38: one ApplyConfiguration
 * mutation adding a label to each create, `one-mutating`):
 *
 * 1. in process (tinybench): the admission chain's check and the plugin's validate() on a
 *    ConfigMap create, as the registry calls them: the cost per policy without sockets or storage
 * 2. against a real server: dry-run creates of a ConfigMap (admission runs as for a real create;
 *    nothing is stored, so the heap does not grow from phase to phase and skew later phases),
 *    the server's CPU per create (all threads, /proc) in each configuration, the configurations
 *    alternating over rounds (policies written and deleted through the API between phases)
 *
 *   bun bench/policy.ts [--rounds=N] [--phase-ms=MS] [--in-process-only]
 */
import { Bench } from 'tinybench';
import { MutatingPolicyAdmission } from '../src/admission/policy/mutating-plugin';
import { PolicyAdmission } from '../src/admission/policy/plugin';
import { cloneJson, type Obj } from '../src/api/meta';
import { builtinTypes } from '../src/kinds/builder';
import { AdmissionChain, type Attributes, type Plugin } from '../src/registry/admission';
import { startServer } from '../test/helpers/server';
import { load, serverCpuPerRequest, threadCpu, WRK } from './harness';

const arg = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const ROUNDS = Number(arg('rounds') ?? 3);
const PHASE_MS = Number(arg('phase-ms') ?? 6000);

type Config = 'none' | 'ten-not-matching' | 'one-matching' | 'ten-matching' | 'one-mutating';
const CONFIGS: Config[] = ['none', 'ten-not-matching', 'one-matching', 'ten-matching', 'one-mutating'];
const MAP_VERSION = 'admissionregistration.svc.io/v1beta1';

/** The MutatingAdmissionPolicy and binding of `one-mutating`: one ApplyConfiguration adding a label. */
function mutating(c: Config): { policies: Obj[]; bindings: Obj[] } {
  if (c !== 'one-mutating') return { policies: [], bindings: [] };
  const name = 'bench-mutating-0';
  const policy: Obj = {
    apiVersion: MAP_VERSION,
    kind: 'MutatingAdmissionPolicy',
    metadata: { name, labels: { bench: 'policy' } },
    spec: {
      failurePolicy: 'Fail',
      reinvocationPolicy: 'Never',
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] },
      mutations: [
        {
          patchType: 'ApplyConfiguration',
          applyConfiguration: { expression: 'Object{metadata: Object.metadata{labels: {"mutated": "yes"}}}' },
        },
      ],
    },
  };
  const binding: Obj = {
    apiVersion: MAP_VERSION,
    kind: 'MutatingAdmissionPolicyBinding',
    metadata: { name: `${name}-binding`, labels: { bench: 'policy' } },
    spec: { policyName: name },
  };
  return { policies: [policy], bindings: [binding] };
}
const { schemas } = builtinTypes({}, { MutatingAdmissionPolicy: true });

/** The policies and bindings of a configuration. */
function objects(c: Config): { policies: Obj[]; bindings: Obj[] } {
  const count = c === 'none' || c === 'one-mutating' ? 0 : c === 'one-matching' ? 1 : 10;
  const resource = c === 'ten-not-matching' ? 'secrets' : 'configmaps';
  const policies: Obj[] = [];
  const bindings: Obj[] = [];
  for (let i = 0; i < count; i++) {
    const name = `bench-${c}-${i}`;
    policies.push({
      apiVersion: 'admissionregistration.svc.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name, labels: { bench: 'policy' } },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: [resource] }] },
        validations: [{ expression: `object.metadata.name != 'forbidden-${i}'` }],
      },
    });
    bindings.push({
      apiVersion: 'admissionregistration.svc.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: `${name}-binding`, labels: { bench: 'policy' } },
      spec: { policyName: name, validationActions: ['Deny'] },
    });
  }
  return { policies, bindings };
}

const configMap: Obj = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cm-1', namespace: 'bench', uid: 'u', creationTimestamp: '2026-11-24T00:00:00Z' },
  data: { a: 'b', c: 'd' },
};

async function inProcess(): Promise<Record<Config, number>> {
  const bench = new Bench({ time: 1500, warmupTime: 300 });
  const out = {} as Record<Config, number>;
  for (const c of CONFIGS) {
    const plugin = new PolicyAdmission({
      policies: undefined as never,
      bindings: undefined as never,
      params: () => undefined,
      namespace: async () => undefined,
    });
    const { policies, bindings } = objects(c);
    for (const p of policies) plugin.setPolicy(p);
    for (const b of bindings) plugin.setBinding(b);
    plugin.rebuild();
    const mutator = new MutatingPolicyAdmission({
      policies: undefined as never,
      bindings: undefined as never,
      params: () => undefined,
      namespace: async () => undefined,
      schemas,
      schemaOf: () => 'io.svc.api.core.v1.ConfigMap',
    });
    const m = mutating(c);
    for (const p of m.policies) mutator.setPolicy(p);
    for (const b of m.bindings) mutator.setBinding(b);
    mutator.rebuild();
    const chain = new AdmissionChain([mutator, plugin] as Plugin[]);
    const attrs: Attributes = {
      operation: 'CREATE',
      group: '',
      version: 'v1',
      kind: 'ConfigMap',
      resource: 'configmaps',
      subresource: '',
      namespace: 'bench',
      name: 'cm-1',
      object: cloneJson(configMap) as Obj,
      dryRun: false,
      user: { name: 'admin', uid: '', groups: ['system:masters'] },
      options: { kind: 'CreateOptions', apiVersion: 'meta.svc.io/v1' },
    };
    bench.add(c, async () => {
      // A fresh object for each create (a mutation changes it), in every configuration alike.
      attrs.object = cloneJson(configMap) as Obj;
      if (chain.wants('', 'configmaps', '', 'CREATE')) {
        await chain.admit(attrs);
        await chain.validate(attrs);
      }
    });
  }
  await bench.run();
  for (const t of bench.tasks) {
    const mean = (t.result as { latency?: { mean: number } } | undefined)?.latency?.mean ?? Number.NaN;
    out[t.name as Config] = mean * 1000; // ms → us
  }
  return out;
}

const ip = await inProcess();
console.log('in process, admission of one ConfigMap create (mean us/op):');
for (const c of CONFIGS) console.log(`  ${c.padEnd(18)} ${ip[c].toFixed(3)} us`);
console.log(
  `  per matching policy ${((ip['ten-matching'] - ip.none) / 10).toFixed(3)} us (1: ${(ip['one-matching'] - ip.none).toFixed(3)} us); ` +
    `per non-matching policy ${((ip['ten-not-matching'] - ip.none) / 10).toFixed(3)} us; ` +
    `one ApplyConfiguration mutation ${(ip['one-mutating'] - ip.none).toFixed(3)} us`,
);

if (!process.argv.includes('--in-process-only')) {
  const srv = await startServer({
    args: ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0', '--feature-gates=MutatingAdmissionPolicy=true'],
  });
  try {
    const auth = { authorization: `Bearer ${srv.token}`, 'content-type': 'application/json' };
    await srv.json('POST', '/api/v1/namespaces', { metadata: { name: 'bench' } });
    const ADM = '/apis/admissionregistration.svc.io/v1';
    const configure = async (c: Config) => {
      await srv.json('DELETE', `${ADM}/validatingadmissionpolicybindings?labelSelector=bench%3Dpolicy`);
      await srv.json('DELETE', `${ADM}/validatingadmissionpolicies?labelSelector=bench%3Dpolicy`);
      await srv.json('DELETE', `/apis/${MAP_VERSION}/mutatingadmissionpolicybindings?labelSelector=bench%3Dpolicy`);
      await srv.json('DELETE', `/apis/${MAP_VERSION}/mutatingadmissionpolicies?labelSelector=bench%3Dpolicy`);
      const { policies, bindings } = objects(c);
      for (const p of policies) await srv.json('POST', `${ADM}/validatingadmissionpolicies`, p);
      for (const b of bindings) await srv.json('POST', `${ADM}/validatingadmissionpolicybindings`, b);
      const m = mutating(c);
      for (const p of m.policies) await srv.json('POST', `/apis/${MAP_VERSION}/mutatingadmissionpolicies`, p);
      for (const b of m.bindings) await srv.json('POST', `/apis/${MAP_VERSION}/mutatingadmissionpolicybindings`, b);
      await Bun.sleep(300); // in force within milliseconds; settle
    };
    const phase = async (prefix: string, ms: number) => {
      const before = threadCpu(srv.proc.pid);
      const r = await load({
        url: `${srv.url}/api/v1/namespaces/bench/configmaps?dryRun=All`,
        method: 'POST',
        headers: auth,
        ca: srv.ca,
        bodyTemplate: JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `${prefix}-{{i}}` },
          data: { a: 'b', c: 'd' },
        }),
        durationMs: ms,
      });
      return { ops: r.ops, errors: r.errors, cpu: serverCpuPerRequest(before, srv.proc.pid, r.ok) };
    };
    console.log(`load generator: ${WRK ? 'wrk -t1 -c64' : 'bench/load.ts'}; ${ROUNDS} rounds of ${PHASE_MS} ms per configuration`);
    await phase('warm', 2000);
    const cpu = Object.fromEntries(CONFIGS.map((c) => [c, [] as number[]])) as Record<Config, number[]>;
    for (let r = 1; r <= ROUNDS; r++) {
      for (const c of r % 2 ? CONFIGS : [...CONFIGS].reverse()) {
        await configure(c);
        const x = await phase(`r${r}-${c}`, PHASE_MS);
        cpu[c].push(x.cpu);
        console.log(`round ${r} ${c}: ${x.ops} creates/s (errors ${x.errors}), server CPU ${x.cpu.toFixed(1)} us/create`);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    const m = Object.fromEntries(CONFIGS.map((c) => [c, median(cpu[c])])) as Record<Config, number>;
    console.log(
      `median server CPU per create: ${CONFIGS.map((c) => `${c} ${m[c].toFixed(1)} us`).join(', ')}; ` +
        `per matching policy ${((m['ten-matching'] - m.none) / 10).toFixed(1)} us, per non-matching ${((m['ten-not-matching'] - m.none) / 10).toFixed(1)} us, ` +
        `one ApplyConfiguration mutation ${(m['one-mutating'] - m.none).toFixed(1)} us`,
    );
  } finally {
    await srv.stop();
  }
}
