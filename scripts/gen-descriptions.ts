/**
 * Derives `src/schema/generated/descriptions.json`: the reference's documentation of every
 * definition of `definitions.json` (the type's description and each property's), which the
 * OpenAPI documents publish (`kubectl explain` prints it). The reference OpenAPI kept in
 * ../shared/reference has its prose removed; the same prose ships with an installed package, the
 * Kubernetes JavaScript client's generated models (`@kubernetes/client-node`, dist/gen/models):
 *
 *     V1PodStatus.d.ts   JSDoc before `export declare class V1PodStatus` → type description,
 *                        JSDoc before `'message'?: string;` → property description
 *     V1PodStatus.js     `attributeTypeMap`: TypeScript name → JSON name (`baseName`)
 *
 *     bun scripts/gen-descriptions.ts [--models <dir>] [--out <output dir>] [--verbose]
 *
 * Run it after scripts/gen-schemas.ts (it reads the definitions that one writes) or after
 * upgrading @kubernetes/client-node.
 *
 * Model names → definition names: the client's generator names a model `<Version><Kind>` and,
 * where two groups share the version and kind, `<Group><Version><Kind>`
 * (`AdmissionregistrationV1ServiceReference`, `CoreV1EndpointPort`). A definition
 * `io.svc.api.<group>.<version>.<Kind>` (the group is the segment before the version: `core`,
 * `meta`, `apiextensions`, ...) takes the group-prefixed model when there is one, else the plain
 * one. Properties are matched by JSON name, so a model of another release contributes only the
 * fields both have. What the client's generator dropped stays undescribed: properties whose value
 * is a single reference (`Pod.status`; OpenAPI 3 wraps those in `allOf`, which it does not keep),
 * and line breaks inside descriptions (it joins lines with spaces).
 *
 * Prose is copied as it is: links keep `k8s.io` and `kubernetes.io` (they are addresses, not
 * brand tokens).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DefDescription } from '../src/schema/descriptions';

const argv = process.argv.slice(2);
const VERBOSE = argv.includes('--verbose');
const root = path.resolve(import.meta.dir, '..');
const arg = (name: string, dflt: string) => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] ? path.resolve(argv[i + 1]!) : dflt;
};
const MODELS = arg('--models', path.join(root, 'node_modules/@kubernetes/client-node/dist/gen/models'));
const OUT_DIR = arg('--out', path.join(root, 'src/schema/generated'));

/**
 * The text of a JSDoc comment as the client's generator writes it: quotes and backslashes
 * escaped (`\"`, `\'`, `\\`), `*​/` written `*_/`, one paragraph per line.
 */
function jsdocText(lines: string[]): string {
  return lines
    .map((l) => l.replace(/^\s*\*\s?/, '').trim())
    .filter((l) => l !== '')
    .join(' ')
    .replaceAll('*_/', '*/')
    .replace(/\\(.)/g, '$1');
}

/** The comments of a model's .d.ts: the class's, and each property's by TypeScript name. */
function parseDts(text: string): { type?: string; props: Map<string, string> } {
  const props = new Map<string, string>();
  let type: string | undefined;
  const lines = text.split('\n');
  let comment: string[] | null = null;
  let last: string | undefined;
  for (const line of lines) {
    const t = line.trim();
    if (comment) {
      if (t === '*/') {
        last = jsdocText(comment);
        comment = null;
      } else comment.push(t);
      continue;
    }
    if (t === '/**') {
      comment = [];
      continue;
    }
    if (t.startsWith('export declare class ')) type = last;
    const m = /^'([^']+)'\??:/.exec(t);
    if (m && last !== undefined) props.set(m[1]!, last);
    if (t !== '') last = undefined;
  }
  return { type, props };
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Model names a definition may have, preferred first (null for names that are not `...<group>.<version>.<Kind>`). */
function modelNames(def: string): string[] | null {
  const parts = def.split('.');
  if (parts.length < 3) return null;
  const [group, version, kind] = parts.slice(-3) as [string, string, string];
  if (!/^v\d+((alpha|beta)\d+)?$/.test(version)) return null;
  const v = cap(version);
  return [`${cap(group.replace(/-/g, ''))}${v}${kind}`, `${v}${kind}`];
}

const definitions: Record<string, { type: string; properties?: Record<string, unknown> }> = JSON.parse(
  fs.readFileSync(path.join(OUT_DIR, 'definitions.json'), 'utf8'),
);

const out: Record<string, DefDescription> = {};
const notes: string[] = [];
let described = 0;
let fields = 0;
for (const def of Object.keys(definitions).sort()) {
  const names = modelNames(def);
  const model = names?.find((n) => fs.existsSync(path.join(MODELS, `${n}.d.ts`)));
  if (!model) {
    notes.push(`no model: ${def}`);
    continue;
  }
  const doc = parseDts(fs.readFileSync(path.join(MODELS, `${model}.d.ts`), 'utf8'));
  const mod = await import(path.join(MODELS, `${model}.js`));
  const map: { name: string; baseName: string }[] = mod[model]?.attributeTypeMap ?? [];
  const jsonName = new Map(map.map((a) => [a.name, a.baseName]));
  const entry: DefDescription = {};
  if (doc.type) entry.description = doc.type;
  const own = definitions[def]!.properties ?? {};
  const props: Record<string, string> = {};
  const missing: string[] = [];
  for (const p of Object.keys(own)) {
    // The schema's property names are rebranded (`x-svc-*` in JSONSchemaProps); the models' are not.
    const upstream = p.replace(/^x-svc-/, 'x-kubernetes-');
    const tsName = [...jsonName].find(([, b]) => b === upstream)?.[0];
    const text = tsName === undefined ? undefined : doc.props.get(tsName);
    if (text !== undefined) props[p] = text;
    else missing.push(p);
  }
  if (Object.keys(props).length > 0) entry.properties = props;
  if (missing.length > 0) notes.push(`${def} (${model}): undescribed ${missing.join(', ')}`);
  if (entry.description === undefined && entry.properties === undefined) continue;
  out[def] = entry;
  described++;
  fields += Object.keys(props).length;
}

/** Formats the JSON as the project's Biome config does (so `biome check` passes on the output). */
function formatJson(text: string): string {
  const biome = path.join(root, 'node_modules/.bin/biome');
  const r = Bun.spawnSync([biome, 'format', '--stdin-file-path=src/schema/generated/descriptions.json'], {
    cwd: root,
    stdin: new TextEncoder().encode(text),
  });
  if (r.exitCode !== 0) throw new Error(`biome format failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

const body = Object.entries(out)
  .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)
  .join(',\n');
const json = formatJson(`{\n${body}\n}\n`);
fs.writeFileSync(path.join(OUT_DIR, 'descriptions.json'), json);
if (VERBOSE) for (const n of notes) console.log(n);
console.log(
  `descriptions: ${described} of ${Object.keys(definitions).length} definitions, ${fields} properties, ${json.length} bytes → ${path.relative(process.cwd(), path.join(OUT_DIR, 'descriptions.json'))}`,
);
