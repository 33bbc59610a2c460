/**
 * Regex library (Kubernetes library.Regex): `find` and `findAll` with RE2 semantics in linear time
 * through re2js. Patterns are compiled once and cached.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { RE2JS } from 're2js';

const cache = new Map<string, RE2JS>();

function re(pattern: string): RE2JS {
  let r = cache.get(pattern);
  if (r === undefined) {
    r = RE2JS.compile(pattern);
    if (cache.size > 1000) cache.clear();
    cache.set(pattern, r);
  }
  return r;
}

export function find(s: string, pattern: string): string {
  const m = re(pattern).matcher(s);
  return m.find() ? (m.group(0) ?? '') : '';
}

export function findAll(s: string, pattern: string, limit = -1n): string[] {
  if (limit === 0n) return [];
  const m = re(pattern).matcher(s);
  const out: string[] = [];
  while (m.find()) {
    out.push(m.group(0) ?? '');
    if (limit > 0n && BigInt(out.length) >= limit) break;
  }
  return out;
}

export function registerRegex(env: Environment): void {
  env
    .registerFunction('string.find(string): string', find)
    .registerFunction('string.findAll(string): list<string>', (s: string, p: string) => findAll(s, p))
    .registerFunction('string.findAll(string, int): list<string>', findAll);
}
