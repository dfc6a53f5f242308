/**
 * A paused batch's result file says, on every row it has not sent, that the batch is paused, by whom,
 * when and why, and what to do; a resume takes the mark away (the rows are simply queued again).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Papa from "papaparse";
import { afterAll, describe, expect, it } from "vitest";
import { pauseBatch, resumeBatch } from "../../../src/batch-control/index.js";
import { submitBatch } from "../../../src/batches/index.js";
import { writeResultFile } from "../../../src/results/index.js";
import { instruction, sha } from "../pipeline/helpers.js";
import { deleteKeys, openStore, uniquePrefix } from "./helpers.js";

const prefix = uniquePrefix("paused");
const { redis, store } = openStore(prefix);
const dirs: string[] = [];
afterAll(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function resultRows(batchId: string, dataDir: string): Promise<Record<string, string>[]> {
  const written = await writeResultFile(store, batchId, { dataDir, format: "csv" });
  const text = (await readFile(written.path, "utf8")).replace(/^\uFEFF/, "");
  return Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true }).data;
}

describe("the result file of a paused batch", () => {
  it("marks the rows not sent yet BATCH_PAUSED with who paused it and why, until it is resumed", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "payouts-paused-"));
    dirs.push(dataDir);
    const rows = [instruction({ rowNumber: 2 }), instruction({ rowNumber: 3 })];
    const { batchId } = await submitBatch({
      store,
      enqueuer: { enqueue: async () => undefined, backlog: async () => 0 },
      instructions: rows,
      fileSha256: sha(),
      sourceName: "paused.csv",
      entityId: "me",
      dataDir,
    });
    await store.changeRow(batchId, rows[1]!.rowKey, { to: "submitted" });
    await pauseBatch(store, batchId, {
      by: "alice",
      reason: "wrong sheet?",
      at: new Date("2026-11-26T10:00:00Z"),
    });

    const paused = await resultRows(batchId, dataDir);
    expect(paused.map((r) => [r.status, r.error_code])).toEqual([
      ["queued", "BATCH_PAUSED"],
      ["submitted", ""],
    ]);
    expect(paused[0]!.error_message).toMatch(/paused by alice at 2026-11-26T10:00:00.000Z: wrong sheet\?/);
    expect(paused[0]!.error_message).toMatch(/Resume the batch/);

    const enqueuer = { enqueue: async () => undefined, backlog: async () => 0 };
    await resumeBatch(store, enqueuer, { mayEnqueue: async () => true }, batchId);
    const resumed = await resultRows(batchId, dataDir);
    expect(resumed.map((r) => [r.status, r.error_code])).toEqual([
      ["queued", ""],
      ["submitted", ""],
    ]);
  });
});
