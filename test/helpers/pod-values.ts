import { rng } from './rng';

const enc = new TextEncoder();

/**
 * Pod-like JSON values of varied length and content, some alike: what packing cold values sees
 * (src/store's packing tests).
 */
export function podLikeValues(n: number, seed: number): Uint8Array[] {
  const rand = rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const containers = Array.from({ length: 1 + Math.floor(rand() * 4) }, (_, c) => ({
      name: `c${c}-${Math.floor(rand() * 1e6)}`,
      image: `registry.example/app:${i % 7}`,
      env: Array.from({ length: Math.floor(rand() * 20) }, (_, e) => ({ name: `E${e}`, value: 'v'.repeat(Math.floor(rand() * 50)) })),
    }));
    return enc.encode(JSON.stringify({ kind: 'Pod', metadata: { name: `pod-${i}`, uid: crypto.randomUUID() }, spec: { containers } }));
  });
}

/** `packed` copied into one buffer at odd offsets, as packed bytes live inside slabs: the views. */
export function inSlab(packed: Uint8Array[]): Uint8Array[] {
  const slab = new Uint8Array(packed.reduce((a, p) => a + p.length + 3, 0));
  let at = 1;
  return packed.map((p) => {
    slab.set(p, at);
    const view = slab.subarray(at, at + p.length);
    at += p.length + 3;
    return view;
  });
}
