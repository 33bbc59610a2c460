/**
 * The watch action of a request, kept beside the request (as its user is) from the fault filter
 * to the watch handler, which reads it once when the stream starts.
 */
import type { WatchAction } from './compile';

const actions = new WeakMap<Request, WatchAction>();

export function setWatchFault(req: Request, a: WatchAction): void {
  actions.set(req, a);
}

/** The watch action injected into this request, if any. */
export function watchFaultOf(req: Request): WatchAction | undefined {
  return actions.get(req);
}
