import { randomFillSync } from "node:crypto";

/** Payment ids are not drawn here: they are derived from the payment's slot (payment-ids.ts). */
export type IdPrefix = "ent" | "acct" | "att" | "msg" | "fxq" | "lnk";

const ID_BYTES = 12;
/** Random bytes drawn 4 KiB at a time: one system call per ~340 ids instead of one per id. */
const pool = Buffer.alloc(ID_BYTES * 341);
let offset = pool.length;

const HEX = Buffer.from("0123456789abcdef", "latin1");
/** The id being assembled: written here and read back as one flat string. */
const out = Buffer.alloc(32);

/**
 * Opaque ids: prefix + 24 random hex characters (clients must never parse them). Assembled in a
 * buffer, so the id is one flat string: `${prefix}_${hex}` would keep a concatenation node and the
 * hex part apart, about 40 more bytes for every stored payment.
 */
export function newId(prefix: IdPrefix): string {
  if (offset + ID_BYTES > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const at = out.write(prefix, 0, "latin1");
  out[at] = 0x5f; // "_"
  let i = at + 1;
  for (let b = offset; b < offset + ID_BYTES; b++) {
    const byte = pool[b] as number;
    out[i++] = HEX[byte >> 4] as number;
    out[i++] = HEX[byte & 15] as number;
  }
  offset += ID_BYTES;
  return out.toString("latin1", 0, i);
}
