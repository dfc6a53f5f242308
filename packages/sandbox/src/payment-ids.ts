/**
 * Payment ids computed from the payment's slot in the store, so neither the id string nor a
 * Map from id to payment is kept per payment (~90 bytes each at a million payments).
 *
 * The id looks exactly as before: `pay_` + 24 lowercase hex characters that look random. The 96
 * bits are (slot, 0, 0) put through a keyed permutation (an unbalanced Feistel network over three
 * 32-bit words, its round keys drawn per store). It is a bijection, so ids are unique; decoding an
 * id runs it backwards and accepts it only when the two zero words come back, so an id from another
 * run, a made-up one or a typo is unknown (a random 24-hex string passes with probability 2^-64).
 * Clients must not parse ids (spec) and nothing here relies on their doing so. Pure apart from the
 * random round keys.
 */
import { randomFillSync } from "node:crypto";

const ROUNDS = 9;
const ID = /^pay_[0-9a-f]{24}$/;

/** The round function: mixes two words and a key into one (a murmur-style finaliser). */
function mix(b: number, c: number, key: number): number {
  let h = Math.imul(b ^ key, 0x9e3779b1) ^ Math.imul((c + key) | 0, 0x85ebca6b);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  h = Math.imul(h, 0x297a2d39);
  h ^= h >>> 15;
  return h;
}

const hex8 = (word: number) => (word >>> 0).toString(16).padStart(8, "0");

export class PaymentIds {
  private readonly keys = randomFillSync(new Int32Array(ROUNDS));

  /** The id of slot `slot` (0 <= slot < 2^31). */
  encode(slot: number): string {
    let a = slot | 0;
    let b = 0;
    let c = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const t = a ^ mix(b, c, this.keys[r] as number);
      a = b;
      b = c;
      c = t;
    }
    return `pay_${hex8(a)}${hex8(b)}${hex8(c)}`;
  }

  /** The slot `id` names, or -1 when it is not an id this store issued (the caller checks the range). */
  decode(id: string): number {
    if (id.length !== 28 || !ID.test(id)) return -1;
    let a = Number.parseInt(id.slice(4, 12), 16) | 0;
    let b = Number.parseInt(id.slice(12, 20), 16) | 0;
    let c = Number.parseInt(id.slice(20, 28), 16) | 0;
    for (let r = ROUNDS - 1; r >= 0; r--) {
      const t = c;
      c = b;
      b = a;
      a = t ^ mix(b, c, this.keys[r] as number);
    }
    return b === 0 && c === 0 && a >= 0 ? a : -1;
  }
}
