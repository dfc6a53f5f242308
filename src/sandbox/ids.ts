import { randomFillSync } from "node:crypto";

export type IdPrefix = "ent" | "acct" | "pay" | "att" | "msg" | "fxq" | "lnk";

const ID_BYTES = 12;
/** Random bytes drawn 4 KiB at a time: one system call per ~340 ids instead of one per id. */
const pool = Buffer.alloc(ID_BYTES * 341);
let offset = pool.length;

/** Opaque ids: prefix + 24 random hex characters (clients must never parse them). */
export function newId(prefix: IdPrefix): string {
  if (offset + ID_BYTES > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString("hex", offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return `${prefix}_${hex}`;
}
