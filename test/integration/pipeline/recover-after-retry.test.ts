/**
 * Redis lost after an operator retry paid a row's second attempt: the archive knows only attempt 1,
 * so recovery must find the `-r2` payment in the ledger and adopt it, not queue the row to pay again.
 */

import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  archivePathFor,
  enqueueQueuedRows,
  readInstructionArchive,
  recoverBatch,
} from "../../../src/batches/index.js";
import {
  deleteKeys,
  instruction,
  type PipelineHarness,
  paymentsOfBatch,
  pipelineHarness,
  waitForRows,
} from "./helpers.js";

let sandbox: RunningSandbox;
let h: PipelineHarness;
beforeAll(async () => {
  sandbox = await startSandbox();
  h = await pipelineHarness(sandbox, "recover-retry");
});
afterAll(async () => {
  await h.close();
  await sandbox.close();
});

describe("recover after an operator retry", () => {
  it("adopts the later attempt's payment instead of paying the row again", async () => {
    const row = instruction();
    const batchId = await h.submit([row]);
    // Attempt 1 ends without a payment (as a rejected row would); the operator retries it.
    expect(
      (await h.store.changeRow(batchId, row.rowKey, { to: "rejected", fields: { errorCode: "X" } })).outcome,
    ).toBe("ok");
    expect((await h.store.startNewAttempt(batchId, row.rowKey, 1)).outcome).toBe("ok");
    const batch = (await h.store.getBatch(batchId))!;
    await enqueueQueuedRows(h.store, h.pipeline.enqueuer, batch);
    const worker = await h.startWorker();
    await waitForRows(h.store, batchId, (r) => r.paymentId !== undefined);
    const paid = await paymentsOfBatch(h.api, batchId);
    expect(paid.map((p) => p.externalId)).toEqual([`${row.reference}-r2`]);
    await worker.stop(2000);

    // Redis loses everything of this batch; recovery rebuilds it from the archive (attempt 1 only).
    await deleteKeys(h.pipeline.redis, h.prefix);
    const archivePath = archivePathFor(h.dataDir, batchId);
    const result = await recoverBatch({
      store: h.store,
      enqueuer: h.pipeline.enqueuer,
      client: h.api,
      archive: await readInstructionArchive(archivePath),
      archivePath,
    });
    expect(result).toMatchObject({ adopted: 1, enqueued: 0 });
    expect((await h.store.getRow(batchId, row.rowKey))?.paymentId).toBe(paid[0]!.id);

    // A worker running now finds nothing to pay: still exactly one payment.
    const again = await h.startWorker();
    await new Promise((r) => setTimeout(r, 500));
    await again.stop(2000);
    expect(await paymentsOfBatch(h.api, batchId)).toHaveLength(1);
  });
});
