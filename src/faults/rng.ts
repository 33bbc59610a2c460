/**
 * The seeded generator of a FaultInjection: mulberry32 (32-bit state, period 2^32, passes
 * gjrand/PractRand to 2^32 outputs; plenty for deciding injections, and a few ns per draw). The
 * same seed gives the same sequence on every platform, so the same seed and the same sequence of
 * matched requests give the same injections.
 *
 * A seed beyond 32 bits is folded (high and low words xor-ed): every safe integer is a valid seed.
 */
export interface Rng {
  /** The next number in [0, 1). */
  next(): number;
}

export function mulberry32(seed: number): Rng {
  let a = (seed | 0) ^ Math.floor(seed / 2 ** 32);
  return {
    next(): number {
      a = (a + 0x6d2b79f5) | 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}
