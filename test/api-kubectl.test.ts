/**
 * kubectl (upstream v1.32, unmodified) end to end against the real server: create -f with a
 * multi-document YAML and a JSON file, get (table, -o yaml/json/name/jsonpath, -l, -A), replace,
 * apply (create), delete (waits via watch), and the errors kubectl prints from Status bodies.
 * Needs kubectl (helpers/needs).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import * as fs from 'node:fs';
import * as path from 'node:path';
import YAML from 'yaml';
import { needs } from './helpers/needs';
import { type Server, startServer } from './helpers/server';

let srv: Server;
let dir: string;

const MANIFEST = `apiVersion: v1
kind: Namespace
metadata:
  name: kube-e2e
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
  namespace: kube-e2e
  labels:
    app: web
data:
  color: blue
  enabled: "on"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: db-config
  namespace: kube-e2e
  labels:
    app: db
data:
  port: "5432"
`;

const JSON_MANIFEST = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'from-json', namespace: 'kube-e2e', labels: { app: 'web', src: 'json' } },
  data: { a: '1' },
};

beforeAll(async () => {
  srv = await startServer();
  dir = srv.dataDir;
  fs.writeFileSync(path.join(dir, 'manifest.yaml'), MANIFEST);
  fs.writeFileSync(path.join(dir, 'cm.json'), JSON.stringify(JSON_MANIFEST));
}, 30_000);
afterAll(async () => {
  await srv.stop();
});

const k = (...args: string[]) => srv.kubectl(args);

needs('kubectl').describe('kubectl', () => {
  test('create -f: a multi-document YAML with a Namespace and ConfigMaps', () => {
    const r = k('create', '-f', path.join(dir, 'manifest.yaml'));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual([
      'namespace/kube-e2e created',
      'configmap/web-config created',
      'configmap/db-config created',
    ]);
  });

  test('create -f: a JSON file', () => {
    const r = k('create', '-f', path.join(dir, 'cm.json'));
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('configmap/from-json created');
  });

  test('create -f again: AlreadyExists errors, exit 1', () => {
    const r = k('create', '-f', path.join(dir, 'manifest.yaml'));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Error from server (AlreadyExists): error when creating');
    expect(r.stderr).toContain('namespaces "kube-e2e" already exists');
    expect(r.stderr).toContain('configmaps "web-config" already exists');
  });

  test('get: table output with NAME column', () => {
    const r = k('get', 'configmaps', '-n', 'kube-e2e');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+/);
    const rows = lines.slice(1).map((l) => l.split(/\s+/)[0]);
    expect(rows).toEqual(['db-config', 'from-json', 'web-config']);
    const ns = k('get', 'namespace', 'kube-e2e', '--no-headers');
    expect(ns.stdout.split(/\s+/)[0]).toBe('kube-e2e');
  });

  test('get -o yaml / -o json / -o name / -o jsonpath', () => {
    const y = k('get', 'configmap', 'web-config', '-n', 'kube-e2e', '-o', 'yaml');
    expect(y.code).toBe(0);
    const obj = YAML.parse(y.stdout);
    expect(obj).toMatchObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'web-config', namespace: 'kube-e2e', labels: { app: 'web' } },
      data: { color: 'blue', enabled: 'on' },
    });
    expect(obj.metadata.uid).toBeString();
    expect(obj.metadata.resourceVersion).toBeString();
    const j = k('get', 'configmaps', '-n', 'kube-e2e', '-o', 'json');
    const list = JSON.parse(j.stdout);
    expect(list.kind).toBe('List');
    expect(list.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['db-config', 'from-json', 'web-config']);
    const n = k('get', 'cm', '-n', 'kube-e2e', '-o', 'name');
    expect(n.stdout.trim().split('\n')).toEqual(['configmap/db-config', 'configmap/from-json', 'configmap/web-config']);
    const jp = k('get', 'cm', 'db-config', '-n', 'kube-e2e', '-o', 'jsonpath={.data.port}');
    expect(jp.stdout).toBe('5432');
  });

  test('get -l (label selector) and -A (all namespaces), --field-selector', () => {
    const l = k('get', 'cm', '-n', 'kube-e2e', '-l', 'app=web', '-o', 'name');
    expect(l.stdout.trim().split('\n')).toEqual(['configmap/from-json', 'configmap/web-config']);
    const notin = k('get', 'cm', '-n', 'kube-e2e', '-l', 'app notin (web)', '-o', 'name');
    expect(notin.stdout.trim().split('\n')).toEqual(['configmap/db-config']);
    const all = k('get', 'cm', '-A', '-l', 'app', '--no-headers');
    expect(all.code).toBe(0);
    const rows = all.stdout
      .trim()
      .split('\n')
      .map((x) => x.split(/\s+/).slice(0, 2).join('/'));
    expect(rows).toEqual(['kube-e2e/db-config', 'kube-e2e/from-json', 'kube-e2e/web-config']);
    const fs1 = k('get', 'cm', '-n', 'kube-e2e', '--field-selector', 'metadata.name=db-config', '-o', 'name');
    expect(fs1.stdout.trim()).toBe('configmap/db-config');
  });

  test('get --chunk-size pages through the list', () => {
    const r = k('get', 'cm', '-n', 'kube-e2e', '--chunk-size=1', '-o', 'name', '-v=6');
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual(['configmap/db-config', 'configmap/from-json', 'configmap/web-config']);
    // Three pages were requested (limit=1 with continue tokens).
    expect((r.stderr.match(/limit=1/g) ?? []).length).toBeGreaterThanOrEqual(3);
    expect(r.stderr).toContain('continue=');
  });

  test('get of a missing object: NotFound, exit 1', () => {
    const r = k('get', 'cm', 'nope', '-n', 'kube-e2e');
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('Error from server (NotFound): configmaps "nope" not found');
  });

  test('replace -f (PUT)', () => {
    const r = srv.kubectl(
      ['replace', '-f', '-'],
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: db-config\n  namespace: kube-e2e\n  labels:\n    app: db\ndata:\n  port: "6543"\n',
    );
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('configmap/db-config replaced');
    expect(k('get', 'cm', 'db-config', '-n', 'kube-e2e', '-o', 'jsonpath={.data.port}').stdout).toBe('6543');
  });

  test('apply -f of a new object (create path)', () => {
    const r = srv.kubectl(
      ['apply', '-f', '-'],
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: kube-e2e\ndata:\n  x: "1"\n',
    );
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('configmap/applied created');
    const y = YAML.parse(k('get', 'cm', 'applied', '-n', 'kube-e2e', '-o', 'yaml').stdout);
    expect(y.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).toContain('"name":"applied"');
  });

  test('delete (waits for the deletion via watch) returns promptly', () => {
    const t0 = Date.now();
    const r = k('delete', 'configmap', 'applied', '-n', 'kube-e2e', '--timeout=20s');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe('configmap "applied" deleted');
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(k('get', 'cm', 'applied', '-n', 'kube-e2e').code).toBe(1);
  });

  test('delete -l (label selector)', () => {
    const r = k('delete', 'cm', '-n', 'kube-e2e', '-l', 'src=json');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe('configmap "from-json" deleted');
  });

  test('delete of a missing object: NotFound, exit 1', () => {
    const r = k('delete', 'cm', 'nope', '-n', 'kube-e2e');
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('Error from server (NotFound): configmaps "nope" not found');
  });

  test('delete -f of the manifest (namespace and its configmaps): the namespace and its content go', () => {
    const t0 = Date.now();
    // The namespace controller may empty the namespace before kubectl reaches the configmaps of
    // the manifest, hence --ignore-not-found.
    const r = k('delete', '-f', path.join(dir, 'manifest.yaml'), '--timeout=30s', '--ignore-not-found');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('namespace "kube-e2e" deleted');
    expect(Date.now() - t0).toBeLessThan(30_000);
    expect(k('get', 'namespace', 'kube-e2e').stderr.trim()).toBe('Error from server (NotFound): namespaces "kube-e2e" not found');
    expect(k('get', 'cm', '-n', 'kube-e2e', '-o', 'name').stdout).toBe('');
  }, 40_000);

  // kubectl label/annotate send strategic merge patches.
  test('label (PATCH)', () => {
    const c = srv.kubectl(['create', '-f', '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lab\n  namespace: default\n');
    expect(c.code).toBe(0);
    const r = k('label', 'cm', 'lab', 'tier=gold');
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('configmap/lab labeled');
    expect(k('get', 'cm', 'lab', '-o', 'jsonpath={.metadata.labels.tier}').stdout).toBe('gold');
  });

  test('annotate (PATCH)', () => {
    srv.kubectl(['create', '-f', '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ann\n  namespace: default\n');
    const r = k('annotate', 'cm', 'ann', 'note=hello');
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('configmap/ann annotated');
    expect(k('get', 'cm', 'ann', '-o', 'jsonpath={.metadata.annotations.note}').stdout).toBe('hello');
  });
});
