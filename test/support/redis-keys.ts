/**
 * Tests share one Redis: each works under a prefix of its own and deletes only its keys afterwards
 * (never FLUSHALL, another test file may be running beside it).
 */
import { randomBytes } from "node:crypto";

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** A key prefix no other test uses: `test-<label>-<8 hex digits>`. */
export function uniquePrefix(label: string): string {
  return `test-${label}-${randomBytes(4).toString("hex")}`;
}
