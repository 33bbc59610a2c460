/**
 * The standard library as the reference (cel-go) has it, where cel-js's differs: timestamps and
 * durations (src/cel/lib/time.ts), integer overflow and conversions (src/cel/lib/numbers.ts),
 * numeric equality and ordering across int, uint and double, bytes ordering
 * (src/cel/lib/comparisons.ts), has() on any expression (src/cel/lib/presence.ts), the name of
 * null's type (src/cel/lib/types.ts).
 * time.ts registers overloads of its own before it replaces any built-in handler, which gives the
 * environment its own function and operator tables (src/cel/lib/builtins.ts); the others rely
 * on that, so the order matters.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { registerComparisons } from './comparisons.ts';
import { registerNumbers } from './numbers.ts';
import { registerHas } from './presence.ts';
import { registerTime } from './time.ts';
import { registerTypes } from './types.ts';

export function registerStandard(env: Environment): void {
  registerTime(env);
  registerNumbers(env);
  registerComparisons(env);
  registerHas(env);
  registerTypes(env);
}
