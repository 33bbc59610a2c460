/**
 * Shuffle sharding: a flow's hash value deals it a hand of `handSize` distinct queues out of a
 * deck of `deckSize`; the flow's requests go to the emptiest queue of its hand. Two flows share
 * all their queues only with probability about C(deck, hand)^-1, so a heavy flow disturbs few
 * others.
 *
 * The deal reads the hash as a mixed-radix number: digit i (base deckSize - i) picks the i-th
 * card among those not dealt yet. Worked example, deck 8, hand 3, hash 100:
 *
 *   100 mod 8 = 4, 100 div 8 = 12   -> card 4 of {0..7}                = 4
 *    12 mod 7 = 5,  12 div 7 = 1    -> card 5 of {0,1,2,3,5,6,7}       = 6
 *     1 mod 6 = 1                   -> card 1 of {0,1,2,3,5,7}         = 1
 *
 * so the hand is [4, 6, 1]. It needs log2(deck) * hand bits of hash; the reference allows 60
 * (the validation of PriorityLevelConfiguration uses the same bound).
 */

/** A 64-bit hash value as two unsigned 32-bit halves (JS numbers are exact only to 2^53). */
export interface FlowHash {
  hi: number;
  lo: number;
}

export const MAX_HASH_BITS = 60;
/** Deck sizes stay below 2^24 so that 16-bit-limb long division stays exact in doubles. */
const MAX_DECK = 1 << 24;

export class DealerConfigError extends Error {}

/** Whether a deck/hand pair can be dealt from a 60-bit hash (the reference's entropy check). */
export function validDeal(deckSize: number, handSize: number): boolean {
  return (
    Number.isInteger(deckSize) &&
    Number.isInteger(handSize) &&
    handSize >= 1 &&
    deckSize >= handSize &&
    deckSize < MAX_DECK &&
    Math.log2(deckSize) * handSize <= MAX_HASH_BITS
  );
}

export class Dealer {
  /** Scratch space of deal() (no allocation per request). */
  private readonly limbs = [0, 0, 0, 0];
  private readonly sorted: number[] = [];

  constructor(
    readonly deckSize: number,
    readonly handSize: number,
  ) {
    if (!validDeal(deckSize, handSize)) {
      throw new DealerConfigError(`cannot deal a hand of ${handSize} from a deck of ${deckSize} with ${MAX_HASH_BITS} bits of entropy`);
    }
  }

  /** The hand for `hash`, written into `out` (cleared first); same hash, same hand. */
  deal(hash: FlowHash, out: number[] = []): number[] {
    out.length = 0;
    const sorted = this.sorted;
    sorted.length = 0;
    // The hash as four 16-bit limbs, most significant first; divided in place.
    const limbs = this.limbs;
    limbs[0] = hash.hi >>> 16;
    limbs[1] = hash.hi & 0xffff;
    limbs[2] = hash.lo >>> 16;
    limbs[3] = hash.lo & 0xffff;
    for (let i = 0; i < this.handSize; i++) {
      const base = this.deckSize - i;
      let r = 0;
      for (let j = 0; j < 4; j++) {
        const cur = r * 0x10000 + (limbs[j] as number);
        const q = Math.floor(cur / base);
        limbs[j] = q;
        r = cur - q * base;
      }
      // The r-th card not dealt yet: step over dealt cards at or below it, in ascending order.
      let card = r;
      let at = 0;
      while (at < sorted.length && (sorted[at] as number) <= card) {
        card++;
        at++;
      }
      sorted.splice(at, 0, card);
      out.push(card);
    }
    return out;
  }
}

/**
 * The hash of a flow (FlowSchema name and distinguisher): two independent 32-bit FNV-1a style
 * hashes over the UTF-16 code units, with a zero unit between the two strings.
 */
export function hashFlow(flowSchema: string, distinguisher: string): FlowHash {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  const mix = (c: number) => {
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  };
  for (let i = 0; i < flowSchema.length; i++) mix(flowSchema.charCodeAt(i));
  mix(0);
  for (let i = 0; i < distinguisher.length; i++) mix(distinguisher.charCodeAt(i));
  // Final avalanche so that flows differing in the last character spread over all bits.
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  b ^= b >>> 16;
  b = Math.imul(b, 0xc2b2ae35);
  b ^= b >>> 16;
  return { hi: a >>> 0, lo: b >>> 0 };
}
