/**
 * Two submissions of the same content at the same moment (two copies of one sheet dropped at once,
 * or two operators) make one batch, never two: the loser waits for the winner's record and defers.
 */

import { type RunningSandbox, startSandbox } from "@payouts/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  archivePathFor,
  DuplicateFileError,
  submitBatch,
  writeInstructionArchive,
} from "../../../src/batches/index.js";
import { instruction, type PipelineHarness, pipelineHarness, sha } from "./helpers.js";

let sandbox: RunningSandbox;
let h: PipelineHarness;
beforeAll(async () => {
  sandbox = await startSandbox();
  h = await pipelineHarness(sandbox, "concurrent-submit");
});
afterAll(async () => {
  await h.close();
  await sandbox.close();
});

describe("submitBatch under a race", () => {
  it("makes one batch when the same content is submitted twice at once", async () => {
    const fileSha256 = sha();
    const rows = Array.from({ length: 2500 }, () => instruction());
    const submit = () =>
      submitBatch({
        store: h.store,
        enqueuer: h.pipeline.enqueuer,
        instructions: rows,
        fileSha256,
        sourceName: "same.csv",
        entityId: "me",
        dataDir: h.dataDir,
      });
    const outcomes = await Promise.allSettled([submit(), submit()]);
    const ids = new Set<string>();
    for (const o of outcomes) {
      if (o.status === "fulfilled") ids.add(o.value.batchId);
      else {
        expect(o.reason).toBeInstanceOf(DuplicateFileError);
        ids.add((o.reason as DuplicateFileError).existingBatchId);
      }
    }
    expect(ids.size).toBe(1);
    const [batchId] = [...ids];
    const latest = await h.store.latestBatches(50);
    expect(latest.filter((b) => b.fileSha256 === fileSha256).map((b) => b.id)).toEqual([batchId]);
    const batch = await h.store.getBatch(batchId!);
    expect(batch?.rowCount).toBe(2500);
    expect(batch?.enqueueComplete).toBe(true);
  });

  it("waits for a claim's batch record instead of starting a second batch beside it", async () => {
    const fileSha256 = sha();
    const rows = Array.from({ length: 10 }, () => instruction());
    // The winner has claimed the file but not yet recorded its batch (it is between the two steps).
    const winnerId = "b20260101T000000-aaaaaaaa";
    expect(await h.store.claimFile(fileSha256, winnerId, false)).toBe(winnerId);
    const loser = submitBatch({
      store: h.store,
      enqueuer: h.pipeline.enqueuer,
      instructions: rows,
      fileSha256,
      sourceName: "same.csv",
      entityId: "me",
      dataDir: h.dataDir,
    });
    await new Promise((r) => setTimeout(r, 300));
    // Like every submitter, the winner archived its intent before it claimed the file.
    const archivePath = archivePathFor(h.dataDir, winnerId);
    await writeInstructionArchive(archivePath, {
      batch: {
        id: winnerId,
        fileSha256,
        sourceName: "same.csv",
        entityId: "me",
        createdAt: new Date().toISOString(),
      },
      instructions: rows,
      invalidRows: [],
    });
    await h.store.createBatch({
      id: winnerId,
      fileSha256,
      sourceName: "same.csv",
      entityId: "me",
      createdAt: new Date().toISOString(),
      rowCount: rows.length,
      invalidCount: 0,
      rowsRecorded: false,
      enqueueComplete: false,
      archivePath,
      sheet: { columns: [], keys: [], format: "csv" },
    });
    const result = await loser;
    expect(result).toMatchObject({ batchId: winnerId, resumed: true });
    const batches = (await h.store.latestBatches(50)).filter((b) => b.fileSha256 === fileSha256);
    expect(batches.map((b) => b.id)).toEqual([winnerId]);
    expect((await h.store.getBatch(winnerId))?.enqueueComplete).toBe(true);
  });
});
