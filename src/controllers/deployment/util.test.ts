import { expect, test } from 'bun:test';
import { canonical } from '../controller-utils';
import { equalIgnoreHash, HASH_LABEL } from './util';

/** The comparison as it was written first: clone, drop the label, prune empties, canonical JSON. */
function oracle(a: unknown, b: unknown): boolean {
  const prune = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.length === 0 ? undefined : v.map(prune);
    if (v && typeof v === 'object') {
      const o: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        const p = prune(x);
        if (p !== undefined) o[k] = p;
      }
      return Object.keys(o).length === 0 ? undefined : o;
    }
    return v;
  };
  const strip = (t: unknown) => {
    const c = structuredClone((t ?? {}) as { metadata?: { labels?: Record<string, string> } });
    if (c.metadata?.labels) delete c.metadata.labels[HASH_LABEL];
    return canonical(prune(c) ?? {});
  };
  return strip(a) === strip(b);
}

const base = () => ({
  metadata: { labels: { app: 'web', [HASH_LABEL]: 'abc' }, annotations: {} },
  spec: {
    containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }], env: [], resources: {} }],
    volumes: [],
    nodeSelector: { zone: 'a' },
  },
});

test('equalIgnoreHash agrees with the clone-and-canonicalise comparison', () => {
  const cases: [unknown, unknown][] = [];
  const variants: ((t: ReturnType<typeof base>) => unknown)[] = [
    (t) => t,
    (t) => {
      t.metadata.labels[HASH_LABEL] = 'other';
      return t;
    },
    (t) => {
      delete (t.metadata.labels as Record<string, string>)[HASH_LABEL];
      return t;
    },
    (t) => {
      (t.metadata as Record<string, unknown>).annotations = undefined;
      return t;
    },
    (t) => {
      (t.spec as Record<string, unknown>).volumes = undefined;
      (t.spec.containers[0] as Record<string, unknown>).env = [];
      return t;
    },
    (t) => {
      (t.spec.containers[0] as { image: string }).image = 'nginx:2';
      return t;
    },
    (t) => {
      t.spec.nodeSelector = {} as { zone: string };
      return t;
    },
    (t) => {
      ((t.spec.containers[0] as { ports: unknown[] }).ports[0] as Record<string, unknown>).containerPort = '80';
      return t;
    },
    (t) => {
      (t.spec as Record<string, unknown>).extra = null;
      return t;
    },
    (t) => {
      (t.spec.containers as unknown[]).push({});
      return t;
    },
    (t) => {
      (t.spec.containers as unknown[]).push(null);
      return t;
    },
    (t) => {
      t.metadata.labels = { [HASH_LABEL]: 'x' } as typeof t.metadata.labels;
      return t;
    },
    () => undefined,
    () => ({}),
    () => ({ metadata: { labels: { [HASH_LABEL]: 'z' } } }),
  ];
  for (const f of variants) for (const g of variants) cases.push([f(base()), g(base())]);
  let equal = 0;
  for (const [a, b] of cases) {
    const want = oracle(a, b);
    if (want) equal++;
    expect([a, b, equalIgnoreHash(a, b)]).toEqual([a, b, want]);
  }
  // Both answers occur.
  expect(equal).toBeGreaterThan(variants.length);
  expect(equal).toBeLessThan(cases.length);
});

test('equalIgnoreHash leaves both templates as they were', () => {
  const a = base();
  const b = base();
  b.metadata.labels[HASH_LABEL] = 'def';
  expect(equalIgnoreHash(a, b)).toBe(true);
  expect(a.metadata.labels[HASH_LABEL]).toBe('abc');
  expect(b.metadata.labels[HASH_LABEL]).toBe('def');
});
