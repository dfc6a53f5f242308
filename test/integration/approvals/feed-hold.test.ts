/**
 * A batch awaiting approval is never fed to the queue (src/batches/batch-feeder.ts): it has no feed,
 * and neither a resume nor an operator retry gives it one; approving it starts its feed, which hands
 * the queue one window of its rows at a time.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { approveBatch } from "../../../src/approvals/index.js";
import { resumeIncompleteBatches } from "../../../src/batches/index.js";
import { retryRows } from "../../../src/retries/index.js";
import { type ApprovalHarness, approvalHarness, instruction, policyOf } from "./helpers.js";

const WINDOW = 5;
let h: ApprovalHarness;

beforeAll(async () => {
  // USD 1,000.00 or more in one batch needs one approver other than the submitter.
  h = await approvalHarness("approvals-feed", policyOf("USD:1000", 1), { feedWindow: WINDOW });
});
afterAll(async () => {
  await h.close();
});

describe("feeding and the approval gate", () => {
  it("feeds a held batch nothing until it is approved, then a window at a time", async () => {
    const rows = Array.from({ length: 12 }, () => instruction({ amount: 60_000 }));
    const { batchId, awaitingApproval } = await h.submit(rows, "alice");
    expect(awaitingApproval).toBe(true);
    const { store } = h.pipeline;
    const noFeed = async () => {
      expect(await h.rowsInJobs(batchId)).toEqual([]);
      expect(await h.pipeline.redis.exists(store.keys.feed(batchId))).toBe(0);
      expect(await h.pipeline.redis.sismember(store.keys.feeding, batchId)).toBe(0);
    };
    await noFeed();

    // A worker starting up, and an operator retry, leave it alone.
    await resumeIncompleteBatches(store, h.pipeline.enqueuer, h.pipeline.gate);
    const retry = await retryRows({ store, enqueuer: h.pipeline.enqueuer, batchId });
    expect(retry).toMatchObject({ kind: "done", retried: [], enqueued: 0 });
    await noFeed();
    expect((await store.progress(batchId))?.counts.queued).toBe(12);

    const approved = await approveBatch(h.ctx, batchId, { name: "bob", mayApprove: true });
    expect(approved.outcome).toBe("approved");
    expect(approved.settled).toMatchObject({ outcome: "queued", rows: 12 });
    // One window in the queue; the rest waits in its feed (and still reads `queued`).
    expect(await h.rowsInJobs(batchId)).toHaveLength(WINDOW);
    expect(await h.pipeline.redis.sismember(store.keys.feeding, batchId)).toBe(1);
    expect((await store.progress(batchId))?.counts.queued).toBe(12);
    expect((await store.getBatch(batchId))?.enqueueComplete).toBe(true);
  });
});
