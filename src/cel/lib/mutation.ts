/**
 * The mutation library of mutating admission policies (the reference's cel/mutation): the
 * function behind desugared object initializers (src/cel/object-initializers.ts) and
 * `jsonpatch.escapeKey(string)`.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { escapeJsonPatchKey, makeObject, OBJECT_FUNCTION } from '../object-initializers.ts';

/** The receiver of `jsonpatch.escapeKey(...)`. */
class JsonPatchNamespace {}

export function registerMutation(env: Environment): void {
  env
    .registerFunction(`${OBJECT_FUNCTION}(string, dyn): dyn`, makeObject)
    .registerType('JsonPatchNamespace', JsonPatchNamespace)
    .registerConstant('jsonpatch', 'JsonPatchNamespace', new JsonPatchNamespace())
    .registerFunction('JsonPatchNamespace.escapeKey(string): string', (_ns: JsonPatchNamespace, s: string) => escapeJsonPatchKey(s));
}
