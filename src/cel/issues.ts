/**
 * Checker errors in cel-go's issue format, which the reference's messages carry (CRD rule
 * compilation errors, admission policy type-checking warnings):
 *
 *   ERROR: <input>:1:12: undefined field 'replicass'
 *    | object.spec.replicass <= 5
 *    | ...........^
 */

/**
 * A checker error in cel-go's issue format (cel-js says `No such key: x` at the field name;
 * cel-go says `undefined field 'x'` at the selecting dot).
 */
export function celGoIssue(expr: string, e: unknown): string {
  const err = e as { message?: string; range?: { start: number } } | undefined;
  let message = String(err?.message ?? e).split('\n')[0] as string;
  let at = err?.range?.start ?? 0;
  const key = /^No such key: (.*)$/.exec(message);
  if (key) {
    message = `undefined field '${key[1]}'`;
    if (at > 0 && expr[at - 1] === '.') at--;
  }
  const op = /^no such overload: (\S+) (\S+) (\S+)$/.exec(message);
  if (op) {
    message = `found no matching overload for '_${op[2]}_' applied to '(${op[1]}, ${op[3]})'`;
    // cel-go points at the operator; cel-js's range is the whole binary expression.
    const end = (e as { range?: { end?: number } }).range?.end ?? expr.length;
    const found = operatorAt(expr, at, end, op[2] as string);
    if (found >= 0) at = found;
  }
  const before = expr.slice(0, at);
  const line = before.split('\n').length;
  const col = at - (before.lastIndexOf('\n') + 1);
  const text = expr.split('\n')[line - 1] ?? '';
  return `ERROR: <input>:${line}:${col + 1}: ${message}\n | ${text}\n | ${'.'.repeat(col)}^`;
}

/** The last position of `op` between `from` and `to` outside brackets and quotes, or -1. */
function operatorAt(expr: string, from: number, to: number, op: string): number {
  let depth = 0;
  let quote = '';
  let last = -1;
  for (let i = from; i < to; i++) {
    const c = expr[i] as string;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (depth === 0 && expr.startsWith(op, i)) {
      last = i;
      i += op.length - 1;
    }
  }
  return last;
}
