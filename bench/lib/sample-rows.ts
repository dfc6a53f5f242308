/**
 * Rows and Redis clean-up shared by the benches and the tests that need the same: a valid USD ACH
 * instruction between the sandbox seed's accounts, and deleting one prefix's keys.
 */
import type { SubmittedInstruction } from "../../src/batches/index.js";
import type { RedisClient } from "../../src/redis/index.js";

/** A valid USD ACH instruction from `ops-checking` to `vendor-ach` (the sandbox seed's accounts). */
export function achInstruction(
  rowNumber: number,
  rowKey: string,
  reference: string | undefined,
  amount: number,
): SubmittedInstruction {
  return {
    rowNumber,
    rowKey,
    reference,
    originatingAccountId: "acct_ops_checking",
    receivingAccountId: "acct_vendor_ach",
    amount,
    currency: "USD",
    deliveryPreference: "standard-ach",
    deliveryResolvedFromBlank: false,
    payerMemo: undefined,
    recipientNote: undefined,
    purpose: undefined,
    attachment: undefined,
    metadata: {},
  };
}

/** Deletes every key under the prefix, SCAN and UNLINK (never FLUSHALL: others share the Redis). */
export async function deleteKeysUnder(redis: RedisClient, prefix: string, count = 1000): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", count);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== "0");
}
