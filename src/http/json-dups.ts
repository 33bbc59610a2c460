/**
 * Duplicate member names in JSON text. JSON.parse keeps the last value silently; field
 * validation (spec 1) must report every duplicate, so request bodies are scanned once with this
 * small tokenizer (no allocation beyond the path stack and the key sets).
 *
 * Paths are the reference's: `metadata.name`, `spec.containers[0].image`.
 */

/** Nesting deeper than this is refused, as by Go's encoding/json (the reference's decoder). */
export const MAX_JSON_DEPTH = 10_000;

/** Thrown by findDuplicateKeys for text nested deeper than MAX_JSON_DEPTH. */
export class JsonDepthError extends Error {
  constructor() {
    super('exceeded max depth');
  }
}

export function findDuplicateKeys(text: string): string[] {
  const dups: string[] = [];
  let i = 0;
  let depth = 0;
  const n = text.length;
  // The path to the current value as segments (`name`, `[0]`), joined only when a duplicate is
  // reported: no string is built per member.
  const path: string[] = [];
  const pathWith = (key: string): string => {
    let out = '';
    for (const seg of path) out = out === '' || seg.charCodeAt(0) === 91 ? `${out}${seg}` : `${out}.${seg}`;
    return out === '' ? key : `${out}.${key}`;
  };

  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else break;
    }
  };

  /** At an opening quote: moves past the closing one (a native search, long values included). */
  const skipString = (): number => {
    const start = i + 1;
    let q = text.indexOf('"', start);
    for (;;) {
      if (q < 0) {
        i = n;
        return n;
      }
      let b = q - 1;
      while (b >= start && text.charCodeAt(b) === 92) b--;
      if ((q - 1 - b) % 2 === 0) break; // not escaped
      q = text.indexOf('"', q + 1);
    }
    i = q + 1;
    return q;
  };

  const readString = (): string => {
    const start = i + 1;
    const end = skipString();
    const raw = text.slice(start, end);
    if (raw.indexOf('\\') < 0) return raw;
    try {
      return JSON.parse(`"${raw}"`) as string;
    } catch {
      return raw;
    }
  };

  const value = (): void => {
    ws();
    const c = text.charCodeAt(i);
    if (c === 123 || c === 91) {
      if (++depth > MAX_JSON_DEPTH) throw new JsonDepthError();
      container(c);
      depth--;
    } else if (c === 34) {
      skipString();
    } else {
      // number, true, false, null
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 44 || d === 125 || d === 93 || d === 32 || d === 9 || d === 10 || d === 13) break;
        i++;
      }
    }
  };

  /** At '{' or '[' (c): the object's members or the array's items. */
  const container = (c: number): void => {
    if (c === 123) {
      i++;
      ws();
      if (text.charCodeAt(i) === 125) {
        i++;
        return;
      }
      let seen: Set<string> | undefined;
      let first: string | undefined;
      while (i < n) {
        ws();
        if (text.charCodeAt(i) !== 34) return; // malformed: JSON.parse reports it
        const key = readString();
        // Objects with one member (common) need no set.
        if (first === undefined) first = key;
        else {
          if (!seen) seen = new Set([first]);
          if (seen.has(key)) dups.push(pathWith(key));
          else seen.add(key);
        }
        ws();
        i++; // ':'
        path.push(key);
        value();
        path.pop();
        ws();
        const d = text.charCodeAt(i);
        i++;
        if (d === 125) return;
        if (d !== 44) return;
      }
    } else {
      i++;
      ws();
      if (text.charCodeAt(i) === 93) {
        i++;
        return;
      }
      for (let idx = 0; i < n; idx++) {
        path.push(`[${idx}]`);
        value();
        path.pop();
        ws();
        const d = text.charCodeAt(i);
        i++;
        if (d === 93) return;
        if (d !== 44) return;
      }
    }
  };

  value();
  return dups;
}
