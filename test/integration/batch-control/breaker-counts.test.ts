/**
 * The circuit breaker's counts on a real Redis: paid rows held in the process and counted together
 * still break a run of refusals and dilute the window, exactly as rows counted one by one would.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BatchPausedEvent, createBreaker } from "../../../src/batch-control/index.js";
import { BatchStore } from "../../../src/batches/index.js";
import { connectRedis } from "../../../src/pipeline/index.js";
import type { RedisClient } from "../../../src/redis/index.js";
import { deleteKeys, REDIS_URL, uniquePrefix } from "../pipeline/helpers.js";

let redis: RedisClient;
let store: BatchStore;
let prefix: string;

beforeAll(() => {
  prefix = uniquePrefix("breaker-counts");
  redis = connectRedis(REDIS_URL);
  store = new BatchStore(redis, { prefix });
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
});

/** A batch the breaker may pause (it pauses only a batch it finds, unfinished). */
async function batch(id: string): Promise<string> {
  await store.createBatch({
    id,
    fileSha256: "0",
    sourceName: `${id}.csv`,
    entityId: "me",
    createdAt: new Date().toISOString(),
    rowCount: 100,
    invalidCount: 0,
    rowsRecorded: true,
    enqueueComplete: true,
    archivePath: undefined,
    sheet: { columns: [], keys: [], format: "csv" },
  });
  return id;
}

function breakerFor(settings: { sameCode: number; window: number; failures: number }) {
  const trips: BatchPausedEvent[] = [];
  const breaker = createBreaker({
    store,
    settings,
    onTrip: async (event) => {
      trips.push(event);
    },
  });
  return { breaker, trips };
}

async function recent(batchId: string): Promise<string | null> {
  return redis.hget(store.keys.breaker(batchId), "recent");
}

describe("circuit breaker counts", () => {
  it("a paid row held in the process breaks a run of refusals with one code", async () => {
    const { breaker, trips } = breakerFor({ sameCode: 3, window: 10, failures: 0 });
    const batchId = await batch("run_broken");
    await breaker.observe(batchId, { refused: "TO_ACCOUNT_CLOSED" });
    await breaker.observe(batchId, { refused: "TO_ACCOUNT_CLOSED" });
    await breaker.observe(batchId, { paid: true });
    // The paid row is not in Redis yet; the next refusal brings it along, before itself.
    expect(await recent(batchId)).toBe("11");
    await breaker.observe(batchId, { refused: "TO_ACCOUNT_CLOSED" });
    await breaker.observe(batchId, { refused: "TO_ACCOUNT_CLOSED" });
    expect(await recent(batchId)).toBe("11011");
    expect(trips).toEqual([]);
    await breaker.observe(batchId, { refused: "TO_ACCOUNT_CLOSED" });
    expect(trips).toHaveLength(1);
    expect(trips[0]?.reason).toBe("3 rows in a row were refused with TO_ACCOUNT_CLOSED");
  });

  it("paid rows are counted once a window's worth is held, and by flush, keeping only the last window", async () => {
    const { breaker } = breakerFor({ sameCode: 3, window: 4, failures: 3 });
    const batchId = await batch("window");
    await breaker.observe(batchId, { refused: "X" });
    for (let i = 0; i < 3; i++) await breaker.observe(batchId, { paid: true });
    expect(await recent(batchId)).toBe("1");
    await breaker.observe(batchId, { paid: true });
    expect(await recent(batchId)).toBe("0000");
    await breaker.observe(batchId, { paid: true });
    await breaker.flush();
    expect(await recent(batchId)).toBe("0000");
    expect(await redis.hget(store.keys.breaker(batchId), "run")).toBe("0");
  });

  it("the share rule sees the paid rows held before a refusal: no trip while they dilute the window", async () => {
    const { breaker, trips } = breakerFor({ sameCode: 0, window: 5, failures: 4 });
    const batchId = await batch("share");
    for (const outcome of ["A", "paid", "B", "C", "paid", "D"]) {
      await breaker.observe(batchId, outcome === "paid" ? { paid: true } : { refused: outcome });
    }
    expect(await recent(batchId)).toBe("01101");
    expect(trips).toEqual([]);
    await breaker.observe(batchId, { refused: "E" });
    expect(await recent(batchId)).toBe("11011");
    expect(trips).toHaveLength(1);
    expect(trips[0]?.reason).toBe("4 of the last 5 rows were refused");
  });
});
