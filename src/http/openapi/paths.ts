/**
 * The paths and operations of each served kind, as the reference's endpoint installer registers
 * them, and their rendering as Swagger 2.0 or OpenAPI 3.0 path items (with each group/version's
 * resource-list path).
 */
import type { KindDef } from '../../registry/kind';
import type { DefName } from '../../schema/types';
import { API_RESOURCE_LIST, DELETE_OPTIONS, ext, type Flavor, gvkOf, type Json, listSchema, PATCH, REF_PREFIX, STATUS } from './schema';

export const PATCH_TYPES = [
  'application/apply-patch+yaml',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
];
const PRODUCES = ['application/json', 'application/yaml'];
const PRODUCES_WATCH = [...PRODUCES, 'application/json;stream=watch'];

interface Param {
  name: string;
  in: 'query' | 'path';
  type: 'string' | 'integer' | 'boolean';
}

export type Action = 'get' | 'list' | 'post' | 'put' | 'patch' | 'delete' | 'deletecollection';

interface Op {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  operationId: string;
  action: Action;
  kind: KindDef;
  params: Param[];
  /** Request body: a definition, and whether it is required. PATCH bodies take the patch types. */
  body?: { def: DefName; required: boolean };
  /** Response code → definition. */
  responses: [string, DefName][];
  produces: string[];
  consumes: string[];
}

interface PathItem {
  path: string;
  params: Param[];
  ops: Op[];
}

const query = (name: string, type: Param['type'] = 'string'): Param => ({ name, in: 'query', type });
const NAME: Param = { name: 'name', in: 'path', type: 'string' };
const NAMESPACE: Param = { name: 'namespace', in: 'path', type: 'string' };
const PRETTY = query('pretty');
const LIST_QUERY = [
  query('allowWatchBookmarks', 'boolean'),
  query('continue'),
  query('fieldSelector'),
  query('labelSelector'),
  query('limit', 'integer'),
  query('resourceVersion'),
  query('resourceVersionMatch'),
  query('sendInitialEvents', 'boolean'),
  query('timeoutSeconds', 'integer'),
  query('watch', 'boolean'),
];
const WRITE_QUERY = [query('dryRun'), query('fieldManager'), query('fieldValidation')];
const PATCH_QUERY = [...WRITE_QUERY, query('force', 'boolean')];
const DELETE_QUERY = [
  query('dryRun'),
  query('gracePeriodSeconds', 'integer'),
  query('orphanDependents', 'boolean'),
  query('propagationPolicy'),
];
const DELETECOLLECTION_QUERY = [...DELETE_QUERY, ...LIST_QUERY.filter((p) => p.name !== 'watch' && p.name !== 'allowWatchBookmarks')].sort(
  (a, b) => (a.name < b.name ? -1 : 1),
);

const RESPONSE_TEXT: Record<string, string> = { '200': 'OK', '201': 'Created', '202': 'Accepted', '401': 'Unauthorized' };

/** `networking.svc.io` → `Networking`, `flowcontrol.apiserver.svc.io` → `FlowcontrolApiserver`, '' → `Core`. */
export function groupPart(group: string): string {
  if (!group) return 'Core';
  const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
  return group
    .replace(/\.(svc|k8s)\.io$/, '')
    .split(/[.-]/)
    .map(cap)
    .join('');
}

/** The operation tag of a group/version: `core_v1`, `apps_v1`, `flowcontrol_apiserver_v1`. */
function tag(group: string, version: string): string {
  return `${group ? group.replace(/\.(svc|k8s)\.io$/, '').replace(/[.-]/g, '_') : 'core'}_${version}`;
}

/** The path prefix of a group/version: /api/v1 or /apis/<group>/<version>. */
export function gvPrefix(group: string, version: string): string {
  return group ? `/apis/${group}/${version}` : `/api/${version}`;
}

/** The operations of one kind, as the reference's installer registers them. */
export function kindPaths(k: KindDef): PathItem[] {
  const p = `${groupPart(k.group)}${k.version.charAt(0).toUpperCase()}${k.version.slice(1)}`;
  const scope = k.namespaced ? 'Namespaced' : '';
  const base = `${gvPrefix(k.group, k.version)}${k.namespaced ? '/namespaces/{namespace}' : ''}/${k.plural}`;
  const scopeParams = k.namespaced ? [NAMESPACE] : [];
  const list = listSchema(k);
  const deleted = k.returnDeletedObject ? k.schema : STATUS;
  const op = (o: Omit<Op, 'kind' | 'produces' | 'consumes'> & Partial<Pick<Op, 'produces' | 'consumes'>>): Op => ({
    kind: k,
    produces: PRODUCES,
    consumes: ['*/*'],
    ...o,
  });
  const item = (s: string, writeResponses: [string, DefName][]): Op[] => [
    op({ method: 'get', operationId: `read${p}${scope}${k.kind}${s}`, action: 'get', params: [], responses: [['200', k.schema]] }),
    op({
      method: 'put',
      operationId: `replace${p}${scope}${k.kind}${s}`,
      action: 'put',
      params: WRITE_QUERY,
      body: { def: k.schema, required: true },
      responses: writeResponses,
    }),
    op({
      method: 'patch',
      operationId: `patch${p}${scope}${k.kind}${s}`,
      action: 'patch',
      params: PATCH_QUERY,
      body: { def: PATCH, required: true },
      responses: writeResponses,
      consumes: PATCH_TYPES,
    }),
  ];
  const written: [string, DefName][] = [
    ['200', k.schema],
    ['201', k.schema],
  ];
  const create = op({
    method: 'post',
    operationId: `create${p}${scope}${k.kind}`,
    action: 'post',
    params: WRITE_QUERY,
    body: { def: k.schema, required: true },
    responses: [...written, ['202', k.schema]],
  });
  // A virtual kind (access reviews) has one operation: create.
  if (k.virtual) return [{ path: base, params: [...scopeParams, PRETTY], ops: [create] }];
  const out: PathItem[] = [
    {
      path: base,
      params: [...scopeParams, PRETTY],
      ops: [
        op({
          method: 'get',
          operationId: `list${p}${scope}${k.kind}`,
          action: 'list',
          params: LIST_QUERY,
          responses: [['200', list]],
          produces: PRODUCES_WATCH,
        }),
        create,
        ...(k.deleteCollection
          ? [
              op({
                method: 'delete',
                operationId: `delete${p}Collection${scope}${k.kind}`,
                action: 'deletecollection',
                params: DELETECOLLECTION_QUERY,
                body: { def: DELETE_OPTIONS, required: false },
                responses: [['200', STATUS]],
              }),
            ]
          : []),
      ],
    },
    {
      path: `${base}/{name}`,
      params: [NAME, ...scopeParams, PRETTY],
      ops: [
        ...item('', written),
        op({
          method: 'delete',
          operationId: `delete${p}${scope}${k.kind}`,
          action: 'delete',
          params: DELETE_QUERY,
          body: { def: DELETE_OPTIONS, required: false },
          responses: [
            ['200', deleted],
            ['202', deleted],
          ],
        }),
      ],
    },
  ];
  // status and the kind's partial subresources, in name order (as the reference registers them).
  const parts = [...(k.status ? ['status'] : []), ...Object.keys(k.subresources ?? {}).filter((n) => n !== 'status')].sort();
  for (const sub of parts) {
    const title = `${sub[0]?.toUpperCase() ?? ''}${sub.slice(1)}`;
    out.push({ path: `${base}/{name}/${sub}`, params: [NAME, ...scopeParams, PRETTY], ops: item(title, written) });
  }
  if (k.namespaced) {
    out.push({
      path: `${gvPrefix(k.group, k.version)}/${k.plural}`,
      params: [PRETTY],
      ops: [
        op({
          method: 'get',
          operationId: `list${p}${k.kind}ForAllNamespaces`,
          action: 'list',
          params: LIST_QUERY,
          responses: [['200', list]],
          produces: PRODUCES_WATCH,
        }),
      ],
    });
  }
  return out;
}

function v2Param(p: Param): Json {
  const o: Json = { name: p.name, in: p.in, type: p.type, uniqueItems: true };
  if (p.in === 'path') o.required = true;
  return o;
}

function v3Param(p: Param): Json {
  const o: Json = { name: p.name, in: p.in, schema: { type: p.type, uniqueItems: true } };
  if (p.in === 'path') o.required = true;
  return o;
}

function renderOp(o: Op, flavor: Flavor): Json {
  const ref = (def: DefName) => ({ $ref: `${REF_PREFIX[flavor]}${def}` });
  const out: Json = { operationId: o.operationId, tags: [tag(o.kind.group, o.kind.version)] };
  const params: Json[] = [];
  if (flavor === 'v2') {
    out.consumes = o.consumes;
    out.produces = o.produces;
    out.schemes = ['https'];
    if (o.body) params.push({ name: 'body', in: 'body', required: o.body.required, schema: ref(o.body.def) });
    params.push(...o.params.map(v2Param));
    const responses: Json = {};
    for (const [code, def] of o.responses) responses[code] = { description: RESPONSE_TEXT[code], schema: ref(def) };
    responses['401'] = { description: RESPONSE_TEXT['401'] };
    out.responses = responses;
  } else {
    params.push(...o.params.map(v3Param));
    if (o.body) {
      const content: Json = {};
      for (const t of o.consumes) content[t] = { schema: ref(o.body.def) };
      out.requestBody = o.body.required ? { content, required: true } : { content };
    }
    const responses: Json = {};
    for (const [code, def] of o.responses) {
      const content: Json = {};
      for (const t of o.produces) content[t] = { schema: ref(def) };
      responses[code] = { description: RESPONSE_TEXT[code], content };
    }
    responses['401'] = { description: RESPONSE_TEXT['401'] };
    out.responses = responses;
  }
  if (params.length > 0) out.parameters = params;
  ext(out, 'action', o.action);
  ext(out, 'group-version-kind', gvkOf(o.kind));
  return out;
}

export function renderPaths(items: PathItem[], flavor: Flavor): Json {
  const out: Json = {};
  for (const it of items) {
    const p: Json = {};
    for (const o of it.ops) p[o.method] = renderOp(o, flavor);
    p.parameters = it.params.map(flavor === 'v2' ? v2Param : v3Param);
    out[it.path] = p;
  }
  return out;
}

/** The group/version's resource list (GET /api/v1/, /apis/<group>/<version>/). */
export function resourcesPath(group: string, version: string, flavor: Flavor): Json {
  const ref = { $ref: `${REF_PREFIX[flavor]}${API_RESOURCE_LIST}` };
  const op: Json = {
    operationId: `get${groupPart(group)}${version.charAt(0).toUpperCase()}${version.slice(1)}APIResources`,
    tags: [tag(group, version)],
  };
  if (flavor === 'v2') {
    Object.assign(op, {
      consumes: PRODUCES,
      produces: PRODUCES,
      schemes: ['https'],
      responses: { '200': { description: 'OK', schema: ref }, '401': { description: 'Unauthorized' } },
    });
  } else {
    const content: Json = {};
    for (const t of PRODUCES) content[t] = { schema: ref };
    op.responses = { '200': { description: 'OK', content }, '401': { description: 'Unauthorized' } };
  }
  return { [`${gvPrefix(group, version)}/`]: { get: op } };
}
