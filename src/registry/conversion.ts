/**
 * The stored values of a kind served in another form (KindDef.storedAs), as that form's resource
 * reads and writes them: each value parsed, converted and written again in the stored layout
 * (kind, apiVersion, metadata first). Only kinds with `storedAs` pay for this.
 */
import type { Obj } from '../api/meta';
import { stringifyStored } from '../codec/stringify';
import type { ValueMapping } from '../store/mapped';
import { valueSlabs } from '../store/slabs';
import type { StoredAs } from './kind';

const dec = new TextDecoder();

function through(convert: (o: Obj) => Obj): (value: Uint8Array) => Uint8Array {
  return (value) => {
    const { kind, apiVersion, metadata, ...rest } = convert(JSON.parse(dec.decode(value)) as Obj);
    return valueSlabs.encode(stringifyStored(kind, apiVersion, metadata as Record<string, unknown>, rest));
  };
}

export function conversionValues(s: StoredAs): ValueMapping {
  return { read: through(s.read), write: through(s.write) };
}
