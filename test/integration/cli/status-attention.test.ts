/**
 * `payouts status <batch>` says what went wrong and what to do, per error code, from the one
 * error-code table: the rows that ended failed, rejected, canceled or in error, grouped.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { achInstruction } from "../../../bench/lib/sample-rows.js";
import { BatchStore } from "../../../src/batches/index.js";
import { attentionLines } from "../../../src/cli/commands/status.js";
import { errorHelp } from "../../../src/error-codes/index.js";
import { connectRedis } from "../../../src/pipeline/index.js";
import type { RedisClient } from "../../../src/redis/index.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../pipeline/helpers.js";

let redis: RedisClient;
let store: BatchStore;
let prefix: string;

beforeAll(async () => {
  prefix = uniquePrefix("status-attention");
  redis = connectRedis(REDIS_URL);
  store = new BatchStore(redis, { prefix });
  await store.createBatch({
    id: "attention",
    fileSha256: "0",
    sourceName: "a.csv",
    entityId: "me",
    createdAt: new Date().toISOString(),
    rowCount: 6,
    invalidCount: 0,
    rowsRecorded: false,
    enqueueComplete: true,
    archivePath: undefined,
    sheet: { columns: [], keys: [], format: "csv" },
  });
  await store.recordRows(
    "attention",
    Array.from({ length: 6 }, (_, i) => achInstruction(i + 2, `ATT-${i}`, `ATT-${i}`, 100 + i)),
  );
  for (const [i, code] of [
    [1, "PAYMENT_FAILED"],
    [3, "PAYMENT_FAILED"],
    [4, "ATTACHMENT_REQUIRED"],
  ] as const) {
    await store.changeRow("attention", `ATT-${i}`, {
      to: "rejected",
      fields: { errorCode: code, errorMessage: "x" },
    });
  }
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

describe("payouts status", () => {
  it("groups the rows that need attention by error code, with what happened and what to do", async () => {
    expect(await attentionLines(store, "attention")).toEqual([
      "needs attention:",
      `  PAYMENT_FAILED × 2 (row 3, 5): ${errorHelp("PAYMENT_FAILED").sentence} Next: ${errorHelp("PAYMENT_FAILED").nextStep}`,
      `  ATTACHMENT_REQUIRED × 1 (row 6): ${errorHelp("ATTACHMENT_REQUIRED").sentence} Next: ${errorHelp("ATTACHMENT_REQUIRED").nextStep}`,
    ]);
  });
});
