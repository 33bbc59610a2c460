/**
 * Write hooks: side effects a kind's writes carry beyond the object itself, taken before the
 * write and given back when it fails or the object goes (a Service's cluster IP and node ports).
 * The registry calls them on create, update and removal; a kind without hooks pays nothing.
 */
import type { Obj } from '../api/meta';

/** Side effects of a write: reserve before it, give back after a failure or a removal. */
export interface WriteHooks {
  /** Reserve what `obj` needs that `old` did not hold (it may fill fields); returns an undo. */
  reserve(obj: Obj, old: Obj | undefined, dryRun: boolean): Promise<(() => Promise<void>) | undefined>;
  /** Give back what `obj` held and `keep` (the object's next version) no longer holds. */
  release(obj: Obj, keep?: Obj): Promise<void>;
}
