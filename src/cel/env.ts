/**
 * The engine's environment: a cel-js Environment with the options and libraries spec 1 lists
 * (optional types, homogeneous aggregate literals, strings/lists/regex libraries), the set and map
 * semantics of typed lists (src/cel/lists-typed.ts) and the given variables declared by CEL type name.
 */
import { Environment } from '@marcbachmann/cel-js';
import { registerAuthz } from './lib/authz.ts';
import { registerTwoVarComprehensions } from './lib/comprehensions2.ts';
import { registerFormat } from './lib/format.ts';
import { registerIp } from './lib/ip.ts';
import { registerLists } from './lib/lists.ts';
import { registerMutation } from './lib/mutation.ts';
import { registerOptionals } from './lib/optionals.ts';
import { registerQuantity } from './lib/quantity.ts';
import { registerRegex } from './lib/regex.ts';
import { registerStandard } from './lib/standard.ts';
import { registerStrings } from './lib/strings.ts';
import { registerUrl } from './lib/url.ts';
import { registerTypedLists } from './lists-typed.ts';

export interface EngineOptions {
  /** The reference enables homogeneous aggregate literals; the cel-spec suite assumes them off. */
  readonly homogeneousAggregateLiterals?: boolean;
}

/**
 * cel-js is patched (patches/@marcbachmann+cel-js+8.0.0.patch, applied by patch-package when npm
 * installs): raw and UTF-8 bytes literals, quoted field names, optional list and map entries,
 * qualified identifiers, heterogeneous equality and cel-go's unchecked semantics. A server on an
 * unpatched copy would quietly miss them, so it refuses to start.
 */
function assertPatched(): void {
  const probe = new Environment({ enableOptionalTypes: true });
  let patched = false;
  try {
    patched = probe.evaluate("size([?optional.none(), ?optional.of(.5)]) == 1 && {'a-b': 1}.`a-b` == 1") === true;
  } catch {}
  if (!patched) throw new Error('@marcbachmann/cel-js is not patched: run `npm install` (patch-package applies patches/*.patch)');
}
assertPatched();

export function engineEnvironment(vars: Readonly<Record<string, string>>, opts: EngineOptions = {}): Environment {
  const e = new Environment({
    enableOptionalTypes: true,
    homogeneousAggregateLiterals: opts.homogeneousAggregateLiterals ?? true,
  });
  registerStrings(e);
  registerLists(e);
  registerRegex(e);
  registerFormat(e);
  registerQuantity(e);
  registerAuthz(e);
  registerUrl(e);
  registerIp(e);
  registerStandard(e);
  registerOptionals(e);
  registerTwoVarComprehensions(e);
  registerTypedLists(e);
  registerMutation(e);
  for (const [name, type] of Object.entries(vars)) e.registerVariable(name, type);
  return e;
}
