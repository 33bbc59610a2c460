/**
 * Debian's Python client (python3-kubernetes) against a real server, the way users run it:
 * typed APIs of the core group and of upstream-named groups (networking.k8s.io,
 * coordination.k8s.io, ...), paging, patches, watch streams and ApiException (issue 9, Tests).
 * Each test runs one Python script that prints a JSON report; the assertions are made here.
 * `.ci/run` installs the package; without it they fail under CI and skip elsewhere (helpers/needs).
 */
import { expect, test } from 'bun:test';
import { needs, PYTHON } from './helpers/needs';
import { serverForFile } from './helpers/server';

// biome-ignore lint/suspicious/noExplicitAny: the JSON reports the Python scripts print
type Json = any;

const srv = serverForFile();

const PRELUDE = `
import json, sys, threading, time
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException
config.load_kube_config(config_file=sys.argv[1])
out = {}
def meta(name, **kw):
    return client.V1ObjectMeta(name=name, **kw)
`;

/** Runs a script (after the prelude, with `out` to fill) and returns what it put in `out`. */
async function python(script: string): Promise<Json> {
  const proc = Bun.spawn([PYTHON, '-c', `${PRELUDE}\n${script}\nprint(json.dumps(out, default=str))`, srv.kubeconfig], {
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`python exited ${code}:\n${stderr}\n${stdout}`);
  return JSON.parse(stdout.trim().split('\n').pop() as string);
}

needs('python-client').describe('python3-kubernetes', () => {
  test('CoreV1: namespaces, configmaps with paging, patch and delete, pods, services, events', async () => {
    const r = await python(`
core = client.CoreV1Api()
core.create_namespace(client.V1Namespace(metadata=meta('py-core')))
out['ns'] = core.read_namespace('py-core').status.phase
for i in range(5):
    core.create_namespaced_config_map('py-core', client.V1ConfigMap(metadata=meta('cm-%d' % i), data={'i': str(i)}))
pages, names, cont = 0, [], None
while True:
    l = core.list_namespaced_config_map('py-core', limit=2, _continue=cont)
    pages += 1
    names += [c.metadata.name for c in l.items]
    cont = l.metadata._continue
    if not cont: break
out['pages'] = pages
out['names'] = names
p = core.patch_namespaced_config_map('cm-0', 'py-core', {'data': {'patched': 'yes'}})
out['patched'] = p.data
core.delete_namespaced_config_map('cm-1', 'py-core')
out['after_delete'] = len(core.list_namespaced_config_map('py-core').items)
pod = client.V1Pod(metadata=meta('p'), spec=client.V1PodSpec(containers=[client.V1Container(name='c', image='nginx:1.25')]))
created = core.create_namespaced_pod('py-core', pod)
out['pod'] = [created.spec.containers[0].image_pull_policy, created.status.phase, created.spec.restart_policy]
svc = client.V1Service(metadata=meta('s'), spec=client.V1ServiceSpec(selector={'a': 'b'}, ports=[client.V1ServicePort(port=80)]))
s = core.create_namespaced_service('py-core', svc)
out['svc'] = [s.spec.type, s.spec.ports[0].protocol, s.spec.ports[0].target_port]
ev = client.CoreV1Event(metadata=meta('e'), involved_object=client.V1ObjectReference(kind='Pod', name='p', namespace='py-core'), reason='Tested', message='hello', type='Normal')
core.create_namespaced_event('py-core', ev)
out['events'] = [e.reason for e in core.list_namespaced_event('py-core').items]
`);
    expect(r.ns).toBe('Active');
    expect(r.pages).toBe(3);
    expect(r.names).toEqual(['cm-0', 'cm-1', 'cm-2', 'cm-3', 'cm-4']);
    expect(r.patched).toEqual({ i: '0', patched: 'yes' });
    expect(r.after_delete).toBe(4);
    expect(r.pod).toEqual(['IfNotPresent', 'Pending', 'Always']);
    expect(r.svc).toEqual(['ClusterIP', 'TCP', 80]);
    expect(r.events).toEqual(['Tested']);
  });

  test('AppsV1 Deployment and ReplicaSet: create, read, list, scale by patch, delete', async () => {
    const r = await python(`
apps = client.AppsV1Api()
client.CoreV1Api().create_namespace(client.V1Namespace(metadata=meta('py-apps')))
tmpl = client.V1PodTemplateSpec(metadata=meta(None, labels={'app': 'd'}), spec=client.V1PodSpec(containers=[client.V1Container(name='c', image='i')]))
d = client.V1Deployment(metadata=meta('d'), spec=client.V1DeploymentSpec(replicas=2, selector=client.V1LabelSelector(match_labels={'app': 'd'}), template=tmpl))
c = apps.create_namespaced_deployment('py-apps', d)
out['strategy'] = [c.spec.strategy.type, c.spec.strategy.rolling_update.max_surge, c.spec.revision_history_limit]
out['listed'] = [x.metadata.name for x in apps.list_namespaced_deployment('py-apps').items]
p = apps.patch_namespaced_deployment('d', 'py-apps', {'spec': {'replicas': 5}})
out['replicas'] = p.spec.replicas
rs = client.V1ReplicaSet(metadata=meta('rs'), spec=client.V1ReplicaSetSpec(replicas=0, selector=client.V1LabelSelector(match_labels={'app': 'd'}), template=tmpl))
out['rs_status_replicas'] = apps.create_namespaced_replica_set('py-apps', rs).status.replicas
apps.delete_namespaced_deployment('d', 'py-apps')
try:
    apps.read_namespaced_deployment('d', 'py-apps')
    out['gone'] = False
except ApiException as e:
    out['gone'] = e.status
`);
    expect(r.strategy).toEqual(['RollingUpdate', '25%', 10]);
    expect(r.listed).toEqual(['d']);
    expect(r.replicas).toBe(5);
    expect(r.rs_status_replicas).toBe(0);
    expect(r.gone).toBe(404);
  });

  test('NetworkingV1, CoordinationV1 and PolicyV1 (upstream group names): create, get, list, replace, delete', async () => {
    const r = await python(`
client.CoreV1Api().create_namespace(client.V1Namespace(metadata=meta('py-groups')))
net = client.NetworkingV1Api()
np = client.V1NetworkPolicy(metadata=meta('np'), spec=client.V1NetworkPolicySpec(pod_selector=client.V1LabelSelector()))
out['np'] = [net.create_namespaced_network_policy('py-groups', np).api_version, net.create_namespaced_network_policy('py-groups', client.V1NetworkPolicy(metadata=meta('np2'), spec=client.V1NetworkPolicySpec(pod_selector=client.V1LabelSelector()))).spec.policy_types]
out['np_list'] = [x.metadata.name for x in net.list_namespaced_network_policy('py-groups').items]
net.delete_namespaced_network_policy('np', 'py-groups')
co = client.CoordinationV1Api()
l = co.create_namespaced_lease('py-groups', client.V1Lease(metadata=meta('l'), spec=client.V1LeaseSpec(holder_identity='me', lease_duration_seconds=15)))
l.spec.holder_identity = 'you'
out['lease'] = [l.api_version, co.replace_namespaced_lease('l', 'py-groups', l).spec.holder_identity, co.read_namespaced_lease('l', 'py-groups').spec.holder_identity]
pol = client.PolicyV1Api()
pdb = client.V1PodDisruptionBudget(metadata=meta('pdb'), spec=client.V1PodDisruptionBudgetSpec(min_available=1, selector=client.V1LabelSelector(match_labels={'a': 'b'})))
created = pol.create_namespaced_pod_disruption_budget('py-groups', pdb)
out['pdb'] = [created.api_version, created.status.current_healthy, created.status.desired_healthy, created.status.expected_pods, created.status.disruptions_allowed]
out['pdb_list'] = [x.metadata.name for x in pol.list_namespaced_pod_disruption_budget('py-groups').items]
pol.delete_namespaced_pod_disruption_budget('pdb', 'py-groups')
`);
    expect(r.np).toEqual(['networking.k8s.io/v1', ['Ingress']]);
    expect(r.np_list).toEqual(['np', 'np2']);
    expect(r.lease).toEqual(['coordination.k8s.io/v1', 'you', 'you']);
    expect(r.pdb).toEqual(['policy/v1', 0, 0, 0, 0]);
    expect(r.pdb_list).toEqual(['pdb']);
  });

  test('watch.Watch().stream sees ADDED, MODIFIED and DELETED in order', async () => {
    const r = await python(`
core = client.CoreV1Api()
core.create_namespace(client.V1Namespace(metadata=meta('py-watch')))
rv = core.list_namespaced_config_map('py-watch').metadata.resource_version
def writer():
    time.sleep(0.3)
    core.create_namespaced_config_map('py-watch', client.V1ConfigMap(metadata=meta('w'), data={'v': '1'}))
    core.patch_namespaced_config_map('w', 'py-watch', {'data': {'v': '2'}})
    core.delete_namespaced_config_map('w', 'py-watch')
threading.Thread(target=writer).start()
events = []
w = watch.Watch()
for ev in w.stream(core.list_namespaced_config_map, 'py-watch', resource_version=rv, timeout_seconds=10):
    events.append([ev['type'], ev['object'].metadata.name, (ev['object'].data or {}).get('v')])
    if ev['type'] == 'DELETED':
        w.stop()
out['events'] = events
`);
    expect(r.events).toEqual([
      ['ADDED', 'w', '1'],
      ['MODIFIED', 'w', '2'],
      ['DELETED', 'w', '2'],
    ]);
  });

  test('a 409 and a 422 arrive as ApiException with the Status', async () => {
    const r = await python(`
core = client.CoreV1Api()
core.create_namespace(client.V1Namespace(metadata=meta('py-errors')))
core.create_namespaced_config_map('py-errors', client.V1ConfigMap(metadata=meta('dup')))
for key, name in (('conflict', 'dup'), ('invalid', 'Not_Valid')):
    try:
        core.create_namespaced_config_map('py-errors', client.V1ConfigMap(metadata=meta(name)))
        out[key] = None
    except ApiException as e:
        body = json.loads(e.body)
        out[key] = [e.status, e.reason, body['reason'], body['message']]
`);
    expect(r.conflict).toEqual([409, 'Conflict', 'AlreadyExists', 'configmaps "dup" already exists']);
    expect(r.invalid[0]).toBe(422);
    expect(r.invalid[1]).toBe('Unprocessable Entity');
    expect(r.invalid[2]).toBe('Invalid');
    expect(r.invalid[3]).toContain('ConfigMap "Not_Valid" is invalid: metadata.name: Invalid value: "Not_Valid"');
  });
});
