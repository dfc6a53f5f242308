/**
 * What a pause and a cancel hold, on a real Redis (the send fence is Lua): a paused batch holds every
 * attempt never sent, a retried one too, until it is resumed; a cancel marks the attempts never sent,
 * and an attempt an operator starts after the cancel (a retry through the gate) is not held by it,
 * since a canceled batch is never resumed.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cancelBatch, pauseBatch } from "../../../src/batch-control/index.js";
import {
  BatchStore,
  enqueueQueuedRows,
  type RowJobRequest,
  type SendFence,
  submitBatch,
} from "../../../src/batches/index.js";
import { createPayoutsClient } from "../../../src/payouts-api/index.js";
import { deleteKeys, instruction, REDIS_URL, sha, uniquePrefix } from "../../integration/pipeline/helpers.js";

let redis: Redis;
let store: BatchStore;
let dataDir: string;
const prefix = uniquePrefix("cancel-release");
// Never asked: the batch has no payment a cancel could cancel at the service.
const client = createPayoutsClient({ baseUrl: "http://127.0.0.1:9", apiKey: "unused", entityId: "me" });

beforeAll(async () => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  store = new BatchStore(redis, { prefix });
  dataDir = await mkdtemp(path.join(tmpdir(), "payouts-cancel-release-"));
});

afterAll(async () => {
  await client.close();
  await deleteKeys(redis, prefix);
  await redis.quit();
  await rm(dataDir, { recursive: true, force: true });
});

const fence = (attempt: number): SendFence => ({ attempt, requoteGeneration: 0, now: 1, inDoubtUntil: 2 });

describe("a canceled batch's rows retried by an operator", () => {
  it("are held while the batch is only paused, marked by a cancel that comes after, and sent when retried after it", async () => {
    const jobs: RowJobRequest[] = [];
    const enqueuer = { backlog: async () => 0, enqueue: async (b: RowJobRequest[]) => void jobs.push(...b) };
    const rows = [instruction(), instruction(), instruction()];
    const { batchId } = await submitBatch({
      store,
      enqueuer,
      instructions: rows,
      fileSha256: sha(),
      sourceName: "cancel.csv",
      entityId: "me",
      dataDir,
    });
    const [early, late, never] = rows.map((r) => r.rowKey) as [string, string, string];
    for (const key of [early, late]) {
      await store.changeRow(batchId, key, { to: "rejected", fields: { errorCode: "X", errorMessage: "x" } });
    }

    await pauseBatch(store, batchId, { by: "alice", reason: "look first" });
    expect((await store.startNewAttempt(batchId, early, 1)).outcome).toBe("ok");
    expect(await store.fenceSend(batchId, early, fence(2))).toBe("paused");

    const outcome = await cancelBatch(store, client, batchId, { by: "alice" });
    expect(outcome.unsent).toBe(2);
    expect((await store.getRow(batchId, early))?.state).toBe("canceled-unsent");
    expect(await store.fenceSend(batchId, never, fence(1))).toBe("done");

    // After the cancel: the operator's new attempts are sent, each once, fed by the retry's feed.
    expect((await store.startNewAttempt(batchId, early, 2)).outcome).toBe("ok");
    expect((await store.startNewAttempt(batchId, late, 1)).outcome).toBe("ok");
    jobs.length = 0;
    const batch = (await store.getBatch(batchId))!;
    expect(await enqueueQueuedRows(store, enqueuer, batch)).toBe(2);
    expect(jobs.map((j) => [j.rowKey, j.attempt]).sort()).toEqual(
      [
        [early, 3],
        [late, 2],
      ].sort(),
    );
    expect(await store.fenceSend(batchId, early, fence(3))).toBe("ok");
    expect(await store.fenceSend(batchId, late, fence(2))).toBe("ok");
    expect((await store.getRow(batchId, never))?.state).toBe("canceled-unsent");
  });
});
