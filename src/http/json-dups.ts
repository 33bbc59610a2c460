/**
 * Duplicate member names in JSON text. JSON.parse keeps the last value silently; field
 * validation (spec 1) must report every duplicate, so request bodies are scanned once with this
 * small tokenizer (no allocation beyond the path stack and the key sets).
 *
 * Paths are the reference's: `metadata.name`, `spec.containers[0].image`.
 */

export function findDuplicateKeys(text: string): string[] {
  const dups: string[] = [];
  let i = 0;
  const n = text.length;

  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else break;
    }
  };

  const readString = (): string => {
    // at opening quote
    i++;
    const start = i;
    let escaped = false;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 92) {
        escaped = true;
        i += 2;
        continue;
      }
      if (c === 34) break;
      i++;
    }
    const raw = text.slice(start, i);
    i++; // closing quote
    if (!escaped) return raw;
    try {
      return JSON.parse(`"${raw}"`) as string;
    } catch {
      return raw;
    }
  };

  const join = (path: string, key: string) => (path === '' ? key : `${path}.${key}`);

  const value = (path: string): void => {
    ws();
    const c = text.charCodeAt(i);
    if (c === 123) {
      i++;
      const seen = new Set<string>();
      ws();
      if (text.charCodeAt(i) === 125) {
        i++;
        return;
      }
      while (i < n) {
        ws();
        if (text.charCodeAt(i) !== 34) return; // malformed: JSON.parse reports it
        const key = readString();
        const p = join(path, key);
        if (seen.has(key)) dups.push(p);
        else seen.add(key);
        ws();
        i++; // ':'
        value(p);
        ws();
        const d = text.charCodeAt(i);
        i++;
        if (d === 125) return;
        if (d !== 44) return;
      }
    } else if (c === 91) {
      i++;
      ws();
      if (text.charCodeAt(i) === 93) {
        i++;
        return;
      }
      for (let idx = 0; i < n; idx++) {
        value(`${path}[${idx}]`);
        ws();
        const d = text.charCodeAt(i);
        i++;
        if (d === 93) return;
        if (d !== 44) return;
      }
    } else if (c === 34) {
      readString();
    } else {
      // number, true, false, null
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 44 || d === 125 || d === 93 || d === 32 || d === 9 || d === 10 || d === 13) break;
        i++;
      }
    }
  };

  value('');
  return dups;
}
