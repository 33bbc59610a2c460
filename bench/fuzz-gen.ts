/**
 * The request generators and the judge of bench/fuzz.ts (issue 42 item 4): malformed requests per
 * decoder, seeded, each a mutation of something the server accepts (so that most get past the
 * first check and reach deeper code): JSON, YAML, protobuf and CBOR bodies, the four patch types,
 * query parameters, headers and paths.
 */

export type Decoder = 'json' | 'yaml' | 'protobuf' | 'cbor' | 'json-patch' | 'merge-patch' | 'smp' | 'apply' | 'query' | 'headers' | 'path';

export const DECODERS: Decoder[] = [
  'json',
  'yaml',
  'protobuf',
  'cbor',
  'json-patch',
  'merge-patch',
  'smp',
  'apply',
  'query',
  'headers',
  'path',
];

export interface FuzzRequest {
  decoder: Decoder;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** Whether a 4xx answer must leave the store as it was (every write). */
  write: boolean;
}

/** What the generators mutate: a ConfigMap in each encoding, and the collection it lives in. */
export interface Samples {
  collection: string;
  name: string;
  json: string;
  yaml: string;
  protobuf: Uint8Array;
  cbor: Uint8Array;
}

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
const int = (r: Rand, n: number) => Math.floor(r() * n);

const TEXT_NOISE = [
  '{',
  '}',
  '[',
  ']',
  '"',
  ',',
  ':',
  '\\',
  '0',
  '-',
  '1e999',
  'null',
  'true',
  '\u0000',
  '\u00ff',
  '\ud800',
  ' ',
  '\n',
  'a',
];
const YAML_NOISE = [
  ':',
  '-',
  '[',
  ']',
  '{',
  '}',
  '&a',
  '*a',
  '!!binary',
  '|',
  '>',
  '#',
  "'",
  '"',
  '\n',
  '\t',
  '  ',
  '? ',
  '<<: *a',
  '%YAML 1.1\n',
];

/** 1-3 edits of a text: a character removed, noise inserted, a span repeated, or the text cut. */
export function mutateText(r: Rand, s: string, noise: readonly string[]): string {
  let out = s;
  for (let n = 1 + int(r, 3); n > 0; n--) {
    const at = int(r, out.length + 1);
    switch (int(r, 4)) {
      case 0:
        out = out.slice(0, at) + out.slice(at + 1);
        break;
      case 1:
        out = out.slice(0, at) + pick(r, noise) + out.slice(at);
        break;
      case 2: {
        const len = 1 + int(r, 20);
        out = out.slice(0, at) + out.slice(at, at + len).repeat(2 + int(r, 5)) + out.slice(at + len);
        break;
      }
      default:
        out = out.slice(0, at);
    }
  }
  return out;
}

/** 1-4 edits of bytes: a byte flipped, removed, random bytes inserted, or the bytes cut. */
export function mutateBytes(r: Rand, b: Uint8Array): Uint8Array {
  let out = Uint8Array.from(b);
  for (let n = 1 + int(r, 4); n > 0; n--) {
    const at = int(r, out.length + 1);
    switch (int(r, 4)) {
      case 0:
        if (at < out.length) out[at] = int(r, 256);
        break;
      case 1:
        out = Uint8Array.from([...out.subarray(0, at), ...out.subarray(at + 1)]);
        break;
      case 2:
        out = Uint8Array.from([...out.subarray(0, at), ...Array.from({ length: 1 + int(r, 8) }, () => int(r, 256)), ...out.subarray(at)]);
        break;
      default:
        out = out.subarray(0, at);
    }
  }
  return out;
}

const ODD_VALUES: unknown[] = [
  null,
  true,
  0,
  -1,
  1e308,
  2 ** 53 + 1,
  '',
  'x'.repeat(300),
  '\u0000',
  [],
  {},
  [null],
  { '': 1 },
  { $patch: 'delete' },
  [[[]]],
];

/** A random JSON value of depth <= d with the usual and the odd. */
export function randomValue(r: Rand, d = 3): unknown {
  if (d === 0 || r() < 0.4) return pick(r, ODD_VALUES);
  if (r() < 0.5) return Array.from({ length: int(r, 4) }, () => randomValue(r, d - 1));
  const o: Record<string, unknown> = {};
  for (let n = int(r, 4); n > 0; n--)
    o[
      pick(r, [
        'data',
        'metadata',
        'name',
        'labels',
        'a',
        '$patch',
        '$retainKeys',
        '$setElementOrder/data',
        'kind',
        'apiVersion',
        'binaryData',
        'immutable',
      ])
    ] = randomValue(r, d - 1);
  return o;
}

const PATHS = [
  '',
  '/',
  '/data',
  '/data/a',
  '/data/-',
  '/metadata',
  '/metadata/labels/a~1b',
  '/metadata/name',
  '/metadata/uid',
  '/kind',
  '/data/~2',
  '/0',
  '/data/a/b/c',
  '/metadata/managedFields/0',
];
const OPS = ['add', 'remove', 'replace', 'move', 'copy', 'test', 'bogus', ''];

const QUERY_KEYS = [
  'limit',
  'continue',
  'resourceVersion',
  'resourceVersionMatch',
  'labelSelector',
  'fieldSelector',
  'timeoutSeconds',
  'watch',
  'allowWatchBookmarks',
  'sendInitialEvents',
  'pretty',
  'dryRun',
  'fieldManager',
  'fieldValidation',
  'propagationPolicy',
  'gracePeriodSeconds',
  'orphanDependents',
  'force',
];
const QUERY_VALUES = [
  '',
  '-1',
  '0',
  '1',
  'abc',
  '1e400',
  'true',
  'True',
  'maybe',
  'All',
  'Exact',
  'NotOlderThan',
  '(((',
  'a in (',
  'a=b,,c',
  'metadata.name=',
  '%00',
  '%ZZ',
  'x'.repeat(2000),
  '99999999999999999999',
  'eyJ2Ijoi',
];

const TYPES = [
  'application/json',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
  'application/cbor',
  'application/merge-patch+json',
  'application/json-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
  'text/plain',
  'application/json; charset=latin1',
  '*/*',
  'application/',
  ';;;',
  'application/json;g=meta.k8s.io;as=Table;v=v1',
];

/** The n-th request of a decoder (deterministic given the seeded `r`). */
export function generate(r: Rand, decoder: Decoder, s: Samples): FuzzRequest {
  const item = `${s.collection}/${s.name}`;
  const post = (type: string, body: string | Uint8Array): FuzzRequest => ({
    decoder,
    method: r() < 0.7 ? 'POST' : 'PUT',
    path: r() < 0.7 ? s.collection : item,
    headers: { 'content-type': type },
    body,
    write: true,
  });
  const patch = (type: string, body: string): FuzzRequest => ({
    decoder,
    method: 'PATCH',
    path: `${item}${type === 'application/apply-patch+yaml' ? '?fieldManager=fuzz' : ''}`,
    headers: { 'content-type': type },
    body,
    write: true,
  });
  switch (decoder) {
    case 'json':
      return post('application/json', mutateText(r, s.json, TEXT_NOISE));
    case 'yaml':
      return post('application/yaml', mutateText(r, s.yaml, YAML_NOISE));
    case 'protobuf':
      return post('application/vnd.kubernetes.protobuf', mutateBytes(r, s.protobuf));
    case 'cbor':
      return post('application/cbor', mutateBytes(r, s.cbor));
    case 'json-patch': {
      const ops = Array.from({ length: 1 + int(r, 3) }, () => {
        const o: Record<string, unknown> = { op: pick(r, OPS), path: pick(r, PATHS) };
        if (r() < 0.7) o.value = randomValue(r);
        if (r() < 0.3) o.from = pick(r, PATHS);
        return o;
      });
      const text = JSON.stringify(r() < 0.9 ? ops : randomValue(r));
      return patch('application/json-patch+json', r() < 0.3 ? mutateText(r, text, TEXT_NOISE) : text);
    }
    case 'merge-patch':
    case 'smp': {
      const text = JSON.stringify(randomValue(r));
      const type = decoder === 'smp' ? 'application/strategic-merge-patch+json' : 'application/merge-patch+json';
      return patch(type, r() < 0.3 ? mutateText(r, text, TEXT_NOISE) : text);
    }
    case 'apply':
      return patch('application/apply-patch+yaml', r() < 0.5 ? mutateText(r, s.yaml, YAML_NOISE) : JSON.stringify(randomValue(r)));
    case 'query': {
      const q = Array.from({ length: 1 + int(r, 4) }, () => `${pick(r, QUERY_KEYS)}=${pick(r, QUERY_VALUES)}`);
      // A watch that is accepted streams until its timeout: keep it short.
      q.push('timeoutSeconds=1');
      return {
        decoder,
        method: pick(r, ['GET', 'GET', 'DELETE']),
        path: `${pick(r, [s.collection, item])}?${q.join('&')}`,
        headers: {},
        write: true,
      };
    }
    case 'headers': {
      const headers: Record<string, string> = { 'content-type': pick(r, TYPES), accept: pick(r, TYPES) };
      if (r() < 0.3) headers['content-encoding'] = pick(r, ['gzip', 'br', 'bogus']);
      if (r() < 0.2) headers['x-kubernetes-pf-flowschema-uid'] = 'x';
      const write = r() < 0.5;
      return {
        decoder,
        method: write ? 'POST' : 'GET',
        path: write ? s.collection : pick(r, [s.collection, item]),
        headers,
        body: write ? pick(r, [s.json, s.yaml, s.protobuf, s.cbor, 'garbage']) : undefined,
        write,
      };
    }
    default: {
      const segs = [
        'api',
        'apis',
        'v1',
        'namespaces',
        'default',
        'configmaps',
        s.name,
        'status',
        'scale',
        '..',
        '.',
        '%2F',
        '%ZZ',
        '%00',
        'x'.repeat(300),
        'ü',
        '',
        'watch',
        'proxy',
        'log',
      ];
      const path = `/${Array.from({ length: 1 + int(r, 7) }, () => pick(r, segs)).join('/')}`;
      const method = pick(r, ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
      return {
        decoder,
        method,
        path,
        headers: { 'content-type': 'application/json' },
        body: method === 'GET' ? undefined : s.json,
        write: method !== 'GET',
      };
    }
  }
}

/** The reference's own 500s for patch inputs (mirrored on purpose; src/registry/patch/errors.ts). */
const REFERENCE_500: Partial<Record<Decoder, RegExp>> = {
  smp: /does not contain declared merge key|list element types are not identical|unknown patch type|^expected a /,
  apply: /^failed to create typed patch object \(/,
};

/** What is wrong with an answer (undefined: nothing). */
export function judge(req: FuzzRequest, status: number, contentType: string, text: string): string | undefined {
  let status_: { kind?: string; message?: string } | undefined;
  try {
    status_ = JSON.parse(text);
  } catch {}
  if (status >= 500) {
    const allowed = status === 500 && REFERENCE_500[req.decoder]?.test(String(status_?.message ?? ''));
    if (!allowed) return `${status} ${text.slice(0, 200)}`;
    return undefined;
  }
  if (status < 400 || req.method === 'HEAD') return undefined;
  // A 4xx is a Status in the type it was negotiated to: JSON parsed; YAML, protobuf (the Unknown
  // envelope's TypeMeta) and CBOR (a text string) carry the kind's name as text; anything else (a
  // plain-text page, an empty body) is not a Status.
  const isStatus = contentType.includes('json')
    ? status_?.kind === 'Status'
    : /yaml|protobuf|cbor/.test(contentType)
      ? /Status/.test(text)
      : false;
  if (!isStatus) return `${status} without a Status body (${contentType || 'no content-type'}): ${text.slice(0, 200)}`;
  return undefined;
}
