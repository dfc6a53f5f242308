import { randomBytes } from "node:crypto";

export type IdPrefix = "ent" | "acct" | "pay" | "att" | "msg" | "fxq" | "lnk";

/** Opaque ids: prefix + 24 random hex characters (clients must never parse them). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(12).toString("hex")}`;
}
