/**
 * Possible duplicates between sheets taken at the same time (docs/design.md §3.13), through the
 * watched folder with the duplicate window on, a real Redis (unique prefix) and the sandbox: the
 * folder takes several sheets at once, so a sheet's rows must be seen by the others from the moment
 * they are looked up, not only once its batch is recorded; and a sheet that does not become a batch
 * must leave nothing behind that would flag a later one.
 */
import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { submitSheet } from "../../../src/submission/index.js";
import { type RetryStack, startRetryStack } from "../retries/helpers.js";
import { dropFile } from "../watch/helpers.js";

let stack: RetryStack;
const HEADER = "reference,from_account,to_account,amount,currency";

beforeAll(async () => {
  stack = await startRetryStack("dup-together", { duplicateWindowDays: 30 });
});

afterAll(async () => {
  await stack?.close();
});

describe("sheets paying the same money", () => {
  it("taken at once: one is accepted, the other refused as a possible duplicate of it", async () => {
    const { intake } = stack;
    const tag = randomBytes(4).toString("hex");
    const names = ["a", "b", "c"].map((x) => `${x}-${tag}.csv`);
    // Three exports of one invoice run: other references, the same payee, amount and paying account.
    for (const [i, name] of names.entries()) {
      await dropFile(
        intake.folders.inbox,
        name,
        `${HEADER}\r\nT${i}${tag},ops-checking,vendor-ach,61.27,USD\r\n`,
      );
    }
    const outcomes = await Promise.all(names.map((name) => intake.take(intake.folders.inbox, name)));
    const accepted = outcomes.filter((o) => o.kind === "accepted");
    const refused = outcomes.filter((o) => o.kind === "rejected");
    expect(accepted).toHaveLength(1);
    expect(refused).toHaveLength(2);
    const batchId = accepted[0]!.kind === "accepted" ? accepted[0]!.batchId : "";
    for (const r of refused) {
      const note = r.kind === "rejected" && r.notePath ? await readFile(r.notePath, "utf8") : "";
      expect(note).toContain("POSSIBLE_DUPLICATE");
      expect(note).toContain(`of batch ${batchId}`);
    }
  });

  it("a sheet refused for another row leaves nothing that flags a later sheet", async () => {
    const { dropAndTake } = stack;
    const tag = randomBytes(4).toString("hex");
    const refused = await dropAndTake(
      `bad-${tag}.csv`,
      `${HEADER}\r\nR1${tag},ops-checking,vendor-ach,62.27,USD\r\nR2${tag},ops-checking,no-such-account,1.00,USD\r\n`,
    );
    expect(refused.kind).toBe("rejected");
    const later = await dropAndTake(
      `good-${tag}.csv`,
      `${HEADER}\r\nG1${tag},ops-checking,vendor-ach,62.27,USD\r\n`,
    );
    expect(later, JSON.stringify(later)).toMatchObject({ kind: "accepted", rows: 1 });
  });

  it("checked in a dry run records nothing that flags the sheet when it is submitted", async () => {
    const { api, pipeline, settings, dataDir, dropAndTake } = stack;
    const tag = randomBytes(4).toString("hex");
    const text = `${HEADER}\r\nD1${tag},ops-checking,vendor-ach,63.27,USD\r\n`;
    const sheetPath = path.join(dataDir, `dry-${tag}.csv`);
    await writeFile(sheetPath, text);
    const dry = await submitSheet({
      sheetPath,
      api,
      pipeline: { ...settings, open: pipeline },
      entityId: "me",
      dryRun: true,
    });
    expect(dry.kind).toBe("dry-run");
    const real = await dropAndTake(`real-${tag}.csv`, text);
    expect(real, JSON.stringify(real)).toMatchObject({ kind: "accepted", rows: 1 });
  });

  it("whose submission failed after its batch was recorded stays in the index: the batch may still be paid", async () => {
    const { api, pipeline, settings, dataDir, dropAndTake } = stack;
    const tag = randomBytes(4).toString("hex");
    const sheetPath = path.join(dataDir, `cut-${tag}.csv`);
    await writeFile(sheetPath, `${HEADER}\r\nC1${tag},ops-checking,vendor-ach,64.27,USD\r\n`);
    // The queue fails once the batch and its rows are recorded: the submission throws, and the batch is
    // left for a worker's resume, which pays it.
    const failingQueue = {
      ...pipeline.enqueuer,
      backlog: async () => 0,
      enqueue: async () => {
        throw new Error("the queue went away");
      },
    };
    await expect(
      submitSheet({
        sheetPath,
        api,
        pipeline: { ...settings, open: { ...pipeline, enqueuer: failingQueue } },
        entityId: "me",
      }),
    ).rejects.toThrow("the queue went away");
    const later = await dropAndTake(
      `later-${tag}.csv`,
      `${HEADER}\r\nL1${tag},ops-checking,vendor-ach,64.27,USD\r\n`,
    );
    expect(later.kind).toBe("rejected");
    const note = later.kind === "rejected" && later.notePath ? await readFile(later.notePath, "utf8") : "";
    expect(note).toContain("POSSIBLE_DUPLICATE");
  });
});
