/**
 * Repeat `f` until `done` holds of its answer or `ms` pass; answers the last result (the test then
 * asserts on it). For effects that follow a write asynchronously (controllers, caches).
 */
export async function until<T>(f: () => Promise<T>, done: (r: T) => boolean, ms = 2000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const r = await f();
    if (done(r) || Date.now() > end) return r;
    await Bun.sleep(20);
  }
}
