import { test } from 'bun:test';
import { STATIC_WORKLOADS, serverForFile } from './helpers/server';

const srv = serverForFile({ args: [STATIC_WORKLOADS] });
const J = 'application/json';
const JP = 'application/json-patch+json';
const MP = 'application/merge-patch+json';
const SMP = 'application/strategic-merge-patch+json';
const AP = 'application/apply-patch+yaml';
type C = [string, string, string, string | undefined, string];
const NS = '/api/v1/namespaces';
const CM = '/api/v1/namespaces/default/configmaps';
const cases: C[] = [
  ['json syntax', 'POST', NS, '{', J],
  ['json syntax2', 'POST', NS, '{"apiVersion":"v1",', J],
  ['json garbage', 'POST', NS, 'hello', J],
  ['empty body', 'POST', NS, '', J],
  ['wrong kind Pod', 'POST', NS, '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}}', J],
  ['unknown kind', 'POST', NS, '{"apiVersion":"v1","kind":"Foo","metadata":{"name":"a"}}', J],
  ['wrong version', 'POST', NS, '{"apiVersion":"v2","kind":"Namespace","metadata":{"name":"a"}}', J],
  ['wrong group', 'POST', NS, '{"apiVersion":"apps/v1","kind":"Namespace","metadata":{"name":"a"}}', J],
  [
    'hpa v2 to v1',
    'POST',
    '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers',
    '{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"a"},"spec":{"scaleTargetRef":{"kind":"Deployment","name":"x"},"maxReplicas":2}}',
    J,
  ],
  ['kind only', 'POST', NS, '{"kind":"Namespace","metadata":{"name":"a"}}', J],
  ['apiVersion only', 'POST', NS, '{"apiVersion":"v1","metadata":{"name":"a"}}', J],
  ['field type', 'POST', NS, '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":1}}', J],
  ['field type2', 'POST', CM, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"x":1}}', J],
  ['field type3', 'POST', CM, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":"s"}', J],
  [
    'strict unknown',
    'POST',
    `${CM}?fieldValidation=Strict`,
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s1"},"foo":1,"data":{"a":"b"},"spec":{"x":1}}',
    J,
  ],
  [
    'strict dup',
    'POST',
    `${CM}?fieldValidation=Strict`,
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s2","name":"s2"},"data":{"a":"b"}}',
    J,
  ],
  [
    'strict both',
    'POST',
    `${CM}?fieldValidation=Strict`,
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s2","name":"s2"},"foo":1}',
    J,
  ],
  ['bad fieldValidation', 'POST', `${CM}?fieldValidation=Nope`, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s3"}}', J],
  ['yaml bad', 'POST', CM, 'a: b: c', 'application/yaml'],
  ['yaml list', 'POST', CM, '- a', 'application/yaml'],
  ['yaml tab', 'POST', CM, 'apiVersion: v1\n\tkind: x', 'application/yaml'],
  ['protobuf garbage', 'POST', CM, 'garbage', 'application/vnd.kubernetes.protobuf'],
  ['cbor garbage', 'POST', CM, '\xff\xff', 'application/cbor'],
  ['415 create', 'POST', CM, '{}', 'text/plain'],
  ['415 patch', 'PATCH', `${NS}/default`, '{}', 'text/plain'],
  ['415 patch json', 'PATCH', `${NS}/default`, '{}', J],
  ['jp not list', 'PATCH', `${NS}/default`, '{}', JP],
  ['jp syntax', 'PATCH', `${NS}/default`, '[', JP],
  ['jp bad op', 'PATCH', `${NS}/default`, '[{"op":"frob","path":"/a"}]', JP],
  ['jp missing path', 'PATCH', `${NS}/default`, '[{"op":"remove","path":"/metadata/nope"}]', JP],
  ['jp replace missing', 'PATCH', `${NS}/default`, '[{"op":"replace","path":"/metadata/nope","value":1}]', JP],
  ['jp test failed', 'PATCH', `${NS}/default`, '[{"op":"test","path":"/metadata/name","value":"x"}]', JP],
  ['jp bad index', 'PATCH', `${NS}/default`, '[{"op":"add","path":"/spec/finalizers/9","value":"x"}]', JP],
  ['jp no op', 'PATCH', `${NS}/default`, '[{"path":"/a"}]', JP],
  [
    'jp strict unknown member',
    'PATCH',
    `${NS}/default?fieldValidation=Strict`,
    '[{"op":"test","path":"/metadata/name","value":"default","x":1}]',
    JP,
  ],
  ['jp strict result unknown', 'PATCH', `${NS}/default?fieldValidation=Strict`, '[{"op":"add","path":"/foo","value":1}]', JP],
  ['jp result type', 'PATCH', `${NS}/default`, '[{"op":"add","path":"/metadata/labels","value":"x"}]', JP],
  ['mp not object', 'PATCH', `${NS}/default`, '[]', MP],
  ['mp syntax', 'PATCH', `${NS}/default`, '{', MP],
  ['mp string', 'PATCH', `${NS}/default`, '"x"', MP],
  ['mp strict unknown', 'PATCH', `${NS}/default?fieldValidation=Strict`, '{"foo":1}', MP],
  ['mp strict dup', 'PATCH', `${NS}/default?fieldValidation=Strict`, '{"metadata":{},"metadata":{}}', MP],
  ['mp result type', 'PATCH', `${NS}/default`, '{"metadata":{"labels":"x"}}', MP],
  ['smp syntax', 'PATCH', `${NS}/default`, '{', SMP],
  ['smp array', 'PATCH', `${NS}/default`, '[]', SMP],
  ['smp bad $patch', 'PATCH', `${NS}/default`, '{"metadata":{"$patch":"frob"}}', SMP],
  ['smp $patch delete in map', 'PATCH', `${NS}/default`, '{"metadata":{"labels":{"$patch":"replace","a":"b"}}}', SMP],
  ['smp primitive list $patch', 'PATCH', `${NS}/default`, '{"spec":{"finalizers":[{"$patch":"delete"}]}}', SMP],
  ['smp setElementOrder bad', 'PATCH', '/api/v1/namespaces/default/pods/p1', '{"spec":{"$setElementOrder/containers":"x"}}', SMP],
  ['smp retainKeys bad', 'PATCH', '/apis/apps/v1/namespaces/default/deployments/d1', '{"spec":{"strategy":{"$retainKeys":"x"}}}', SMP],
  [
    'smp retainKeys mismatch',
    'PATCH',
    '/apis/apps/v1/namespaces/default/deployments/d1',
    '{"spec":{"strategy":{"$retainKeys":["type"],"rollingUpdate":{"maxSurge":1}}}}',
    SMP,
  ],
  ['smp list of lists', 'PATCH', '/api/v1/namespaces/default/pods/p1', '{"spec":{"containers":[[1]]}}', SMP],
  ['smp list no merge key', 'PATCH', '/api/v1/namespaces/default/pods/p1', '{"spec":{"containers":[{"image":"x"}]}}', SMP],
  ['smp map is string', 'PATCH', `${NS}/default`, '{"metadata":{"labels":"x"}}', SMP],
  ['smp list is map', 'PATCH', `${NS}/default`, '{"spec":{"finalizers":{"a":1}}}', SMP],
  ['smp string is map', 'PATCH', `${NS}/default`, '{"metadata":{"generateName":{"a":1}}}', SMP],
  ['smp struct is string', 'PATCH', `${NS}/default`, '{"spec":"x"}', SMP],
  ['smp strict unknown', 'PATCH', `${NS}/default?fieldValidation=Strict`, '{"foo":1}', SMP],
  ['smp strict dup', 'PATCH', `${NS}/default?fieldValidation=Strict`, '{"metadata":{},"metadata":{}}', SMP],
  ['smp deleteFromPrimitiveList bad', 'PATCH', `${NS}/default`, '{"spec":{"$deleteFromPrimitiveList/finalizers":"x"}}', SMP],
  ['smp setElementOrder primitive bad', 'PATCH', `${NS}/default`, '{"spec":{"$setElementOrder/finalizers":[{"a":1}]}}', SMP],
  ['apply no manager', 'PATCH', `${CM}/a1`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a1\n', AP],
  ['apply bad yaml', 'PATCH', `${CM}/a1?fieldManager=m`, 'a: b: c', AP],
  ['apply yaml list', 'PATCH', `${CM}/a1?fieldManager=m`, '- a', AP],
  ['apply no apiVersion', 'PATCH', `${CM}/a1?fieldManager=m`, 'kind: ConfigMap\nmetadata:\n  name: a1\n', AP],
  ['apply no kind', 'PATCH', `${CM}/a1?fieldManager=m`, 'apiVersion: v1\nmetadata:\n  name: a1\n', AP],
  ['apply wrong kind', 'PATCH', `${CM}/a1?fieldManager=m`, 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: a1\n', AP],
  ['apply wrong version', 'PATCH', `${CM}/a1?fieldManager=m`, 'apiVersion: v2\nkind: ConfigMap\nmetadata:\n  name: a1\n', AP],
  ['apply name mismatch', 'PATCH', `${CM}/a1?fieldManager=m`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: zz\n', AP],
  ['apply type mismatch', 'PATCH', `${CM}/a1?fieldManager=m`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a1\ndata: 3\n', AP],
  [
    'apply strict unknown',
    'PATCH',
    `${CM}/a1?fieldManager=m&fieldValidation=Strict`,
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a1\nfoo: 1\n',
    AP,
  ],
  [
    'apply strict dup',
    'PATCH',
    `${CM}/a1?fieldManager=m&fieldValidation=Strict`,
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a1\n  name: a1\n',
    AP,
  ],
  ['force non-apply', 'PATCH', `${NS}/default?force=true`, '{}', MP],
  ['manager too long', 'PATCH', `${NS}/default?fieldManager=${'x'.repeat(200)}`, '{}', MP],
  [
    'apply ok1',
    'PATCH',
    `${CM}/c1?fieldManager=one`,
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c1\ndata:\n  x: "1"\n  y: "1"\n',
    AP,
  ],
  [
    'apply conflict1',
    'PATCH',
    `${CM}/c1?fieldManager=two`,
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c1\ndata:\n  x: "2"\n',
    AP,
  ],
  [
    'apply conflict2',
    'PATCH',
    `${CM}/c1?fieldManager=two`,
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c1\ndata:\n  x: "2"\n  y: "2"\n',
    AP,
  ],
  ['413', 'POST', CM, `{"a":"${'x'.repeat(3 * 1024 * 1024 + 10)}"}`, J],
  ['crd-less update wrong kind', 'PUT', `${NS}/default`, '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"default"}}', J],
  ['update syntax', 'PUT', `${NS}/default`, '{', J],
  ['update name mismatch', 'PUT', `${NS}/default`, '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"other"}}', J],
  ['create ns mismatch', 'POST', CM, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"q","namespace":"kube-system"}}', J],
];

test('probe', async () => {
  await srv.json('POST', '/api/v1/namespaces/default/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p1' },
    spec: { containers: [{ name: 'c', image: 'x' }] },
  });
  await srv.json('POST', '/apis/apps/v1/namespaces/default/deployments', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd1' },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
    },
  });
  await srv.json('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a1' } });
  const only = process.env.ONLY;
  for (const [name, method, p, body, ct] of cases) {
    if (only && !name.includes(only)) continue;
    const r = await srv.fetch(p, {
      method,
      headers: { 'content-type': ct },
      body: body === undefined ? undefined : ct === 'application/cbor' ? Buffer.from(body, 'latin1') : body,
    });
    const t = await r.text();
    let b: any = t;
    try {
      b = JSON.parse(t);
    } catch {}
    const out =
      typeof b === 'object' && b.kind === 'Status'
        ? `${b.code} ${b.reason ?? '-'} ${JSON.stringify(b.message)}${b.details && Object.keys(b.details).length ? ` details=${JSON.stringify(b.details)}` : ''}`
        : `${r.status} ${t.slice(0, 150)}`;
    console.log(`## ${name}: ${out}`);
  }
}, 60000);
