/**
 * The revision a stale GET reads at, kept beside the request (as a watch's action is, watch.ts)
 * from the fault filter to the resource handler, which passes it to the registry's get.
 */
const revisions = new WeakMap<Request, number>();

export function setStaleRead(req: Request, revision: number): void {
  revisions.set(req, revision);
}

/** The revision a stale-read fault makes this GET read at, if any. */
export function staleReadOf(req: Request): number | undefined {
  return revisions.get(req);
}
