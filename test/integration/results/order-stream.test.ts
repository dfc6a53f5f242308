/**
 * Result files stream a batch in sheet order from its order list, a page at a time; a batch recorded without one (an older version) is still written in sheet order.
 */
import { afterAll, describe, expect, it } from "vitest";
import { submitBatch } from "../../../src/batches/index.js";
import { rowsInSheetOrder } from "../../../src/results/index.js";
import { instruction, sha } from "../pipeline/helpers.js";
import { deleteKeys, openStore, uniquePrefix } from "./helpers.js";

const prefix = uniquePrefix("order");
const { redis, store } = openStore(prefix);
afterAll(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

describe("rows in sheet order", () => {
  it("come from the order list over several pages, and without it from the row numbers", async () => {
    const rows = Array.from({ length: 2_345 }, (_, i) =>
      instruction({ rowNumber: i + 2, amount: 1_000 + i }),
    );
    const { batchId } = await submitBatch({
      store,
      enqueuer: { enqueue: async () => undefined, backlog: async () => 0 },
      instructions: rows,
      fileSha256: sha(),
      sourceName: "order.csv",
      entityId: "me",
      dataDir: "/tmp",
    });
    expect(await redis.llen(store.keys.order(batchId))).toBe(rows.length);
    const numbers = async () => {
      const seen: number[] = [];
      for await (const row of rowsInSheetOrder(store, batchId)) seen.push(row.rowNumber);
      return seen;
    };
    const expected = rows.map((r) => r.rowNumber);
    expect(await numbers()).toEqual(expected);
    await redis.del(store.keys.order(batchId));
    expect(await numbers()).toEqual(expected);
  });
});
