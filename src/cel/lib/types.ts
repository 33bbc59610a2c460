/**
 * Type values as the reference (cel-go) names them: cel-js calls the type of null `null`, so
 * `type(null)` and the `null_type` constant print as `Type<null>`; here both are one type value
 * named `null_type` (`type(null) == null_type` stays true).
 */
import type { Environment } from '@marcbachmann/cel-js';
import { replaceConstant, replaceFunction } from './builtins.ts';

export function registerTypes(env: Environment): void {
  // cel-js's Type class is not exported: a type value's constructor is it.
  const Type = (env.evaluate('int') as object).constructor as new (name: string) => object;
  const nullType = new Type('null_type');
  replaceFunction(env, 'type(null): type', () => () => nullType);
  replaceConstant(env, 'null_type', 'type', nullType);
}
