/**
 * Keeping the result file current: the outbox rewrites a batch's file after its rows change
 * (throttled, always once more after the last change), and downloads reuse a fresh file.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Papa from "papaparse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createResultFiles,
  createResultOutbox,
  RESULT_COLUMNS,
  type WrittenResult,
} from "../../../src/results/index.js";
import { until } from "../../support/wait.js";
import { type BuiltBatch, buildBatch, deleteKeys, LAYOUT, openStore, uniquePrefix } from "./helpers.js";

const prefix = uniquePrefix("outbox");
const { redis, store } = openStore(prefix);
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "payouts-outbox-"));
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
  await rm(dataDir, { recursive: true, force: true });
});

const STATUS = LAYOUT.columns.length + RESULT_COLUMNS.indexOf("status");

/** The status column of a CSV result file, row by row. */
async function statuses(file: string): Promise<string[]> {
  const text = (await readFile(file, "utf8")).replace(/^\uFEFF/, "");
  return Papa.parse<string[]>(text, { skipEmptyLines: true })
    .data.slice(1)
    .map((r) => r[STATUS] ?? "");
}

describe("the result outbox", () => {
  let batch: BuiltBatch;
  beforeAll(async () => {
    batch = await buildBatch(store, "csv", dataDir);
  });

  it("writes once for a burst of changes, and again after the last change", async () => {
    const writes: WrittenResult[] = [];
    const outbox = createResultOutbox({
      store,
      dataDir,
      debounceMs: 30,
      onWritten: (_, result) => writes.push(result),
    });
    try {
      for (let i = 0; i < 50; i++) outbox.markDirty(batch.batchId);
      const first = await until("the first write", () => writes[0], 10_000, 10);
      expect(await statuses(first.path)).toContain("submitted");
      expect(writes.length).toBeLessThanOrEqual(2);

      // Rows keep changing, each change reported; the file ends up showing the last state.
      const before = writes.length;
      for (const [rowKey, to] of [
        [batch.pending, "in-progress"],
        [batch.fx, "completed"],
        [batch.pending, "completed"],
      ] as const) {
        expect((await store.changeRow(batch.batchId, rowKey, { to })).outcome).toBe("ok");
        outbox.markDirty(batch.batchId);
      }
      await until(
        "the file to show the last change",
        async () => {
          // A read may meet the file while it is replaced: that is a look that found nothing yet.
          const s = await statuses(first.path).catch(() => undefined);
          return s?.[1] === "completed" && s[4] === "completed" ? s : undefined;
        },
        10_000,
        10,
      );
      await outbox.flush();
      expect(writes.length - before).toBeGreaterThanOrEqual(1);
      expect(writes.length - before).toBeLessThanOrEqual(3);
    } finally {
      await outbox.close();
    }
  });

  it("writes at once when asked (a batch finished) and on flush; ignores unknown batches", async () => {
    const errors: unknown[] = [];
    const outbox = createResultOutbox({
      store,
      dataDir,
      debounceMs: 60_000,
      onError: (_, e) => errors.push(e),
    });
    try {
      const other = await buildBatch(store, "csv", dataDir);
      outbox.markDirty(other.batchId);
      outbox.markDirty("b-no-such-batch");
      // A 60 s debounce: only flush can have written it.
      await outbox.flush();
      const file = path.join(dataDir, "outbox", `payroll run.${other.batchId}.result.csv`);
      expect(await statuses(file)).toEqual([
        "completed",
        "in-progress",
        "rejected",
        "invalid",
        "submitted",
        "invalid",
      ]);

      expect((await store.changeRow(other.batchId, other.pending, { to: "failed" })).outcome).toBe("ok");
      await outbox.writeNow(other.batchId);
      expect((await statuses(file))[4]).toBe("failed");
      expect(errors).toEqual([]);
    } finally {
      await outbox.close();
    }
  });

  it("reports a write that fails and keeps running", async () => {
    const batch = await buildBatch(store, "csv", dataDir);
    // DATA_DIR is a file: the outbox folder cannot be made.
    const notADir = path.join(dataDir, "outbox", `payroll run.${batch.batchId}.result.csv`);
    const errors: unknown[] = [];
    const outbox = createResultOutbox({
      store,
      dataDir: notADir,
      debounceMs: 5,
      onError: (id, e) => errors.push([id, e]),
    });
    await createResultOutbox({ store, dataDir }).writeNow(batch.batchId);
    outbox.markDirty(batch.batchId);
    await until("the failure to be reported", () => errors[0], 10_000, 10);
    expect(errors[0]).toEqual([batch.batchId, expect.objectContaining({ code: "ENOTDIR" })]);
    await outbox.close();
    // The good file written before is untouched.
    expect(await statuses(notADir)).toHaveLength(6);
  });
});

describe("result files for downloads", () => {
  it("is undefined for an unknown batch", async () => {
    const files = createResultFiles({ store, dataDir });
    expect(await files.resultFile("b-no-such-batch", "csv")).toBeUndefined();
  });

  it("reuses a file while it is young, rewrites it once older, in the format asked", async () => {
    const batch = await buildBatch(store, "xlsx", dataDir);
    let clock = 1_000_000;
    const files = createResultFiles({ store, dataDir, maxAgeMs: 5000, now: () => clock });
    const [a, b] = await Promise.all([
      files.resultFile(batch.batchId, "csv"),
      files.resultFile(batch.batchId, "csv"),
    ]);
    expect(a).toBeDefined();
    expect(b).toBe(a);
    expect(a!.endsWith(`.${batch.batchId}.result.csv`)).toBe(true);
    expect((await statuses(a!))[4]).toBe("submitted");

    expect((await store.changeRow(batch.batchId, batch.pending, { to: "completed" })).outcome).toBe("ok");
    clock += 1000; // still young: the same file, not yet showing the change
    expect((await statuses((await files.resultFile(batch.batchId, "csv"))!))[4]).toBe("submitted");
    clock += 5000; // older than maxAgeMs: rewritten
    expect((await statuses((await files.resultFile(batch.batchId, "csv"))!))[4]).toBe("completed");
  });

  it("keeps serving a final batch's file until a row moves again", async () => {
    const batch = await buildBatch(store, "csv", dataDir);
    for (const rowKey of [batch.fx, batch.pending]) {
      expect((await store.changeRow(batch.batchId, rowKey, { to: "completed" })).outcome).toBe("ok");
    }
    let clock = 0;
    const files = createResultFiles({ store, dataDir, maxAgeMs: 10, now: () => clock });
    const file = (await files.resultFile(batch.batchId))!;
    await rm(file);
    // Gone from disk: written again.
    expect(await files.resultFile(batch.batchId)).toBe(file);
    const first = await readFile(file, "utf8");
    clock += 60_000;
    expect(await files.resultFile(batch.batchId)).toBe(file);
    expect(await readFile(file, "utf8")).toBe(first);

    // An operator retry moves a row: the counts change and the file is rewritten.
    const rejected = (await store.getRow(batch.batchId, batch.rejected))!;
    expect((await store.startNewAttempt(batch.batchId, batch.rejected, rejected.attempt)).outcome).toBe("ok");
    clock += 60_000;
    expect((await statuses((await files.resultFile(batch.batchId))!))[2]).toBe("queued");
  });
});
