/**
 * The engine's environment: a cel-js Environment with the options and libraries spec 1 lists
 * (optional types, homogeneous aggregate literals, strings/lists/regex libraries) and the given
 * variables declared by CEL type name.
 */
import { Environment } from '@marcbachmann/cel-js';
import { registerLists } from './lib/lists.ts';
import { registerRegex } from './lib/regex.ts';
import { registerStrings } from './lib/strings.ts';

export function engineEnvironment(vars: Readonly<Record<string, string>>): Environment {
  const e = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: true });
  registerStrings(e);
  registerLists(e);
  registerRegex(e);
  for (const [name, type] of Object.entries(vars)) e.registerVariable(name, type);
  return e;
}
