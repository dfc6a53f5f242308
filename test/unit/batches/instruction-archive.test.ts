import { appendFile, mkdir, mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ArchiveFormatError,
  appendCorrection,
  archiveEntries,
  archiveStagedRows,
  RowStaging,
  readInstructionArchive,
  type SubmittedInstruction,
  writeInstructionArchive,
} from "../../../src/batches/index.js";
import { instruction } from "../../integration/pipeline/helpers.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "payouts-archive-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const batch = {
  id: "b1",
  fileSha256: "ab",
  sourceName: "s.csv",
  entityId: "me",
  createdAt: "2026-01-01T00:00:00Z",
};

async function* streamOf<T>(items: T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

describe("instruction archive", () => {
  it("is written from streams, tallies rows and money, and reads back in order", async () => {
    const rows = Array.from({ length: 2500 }, () => instruction({ currency: "EUR", amount: 7 }));
    const file = path.join(dir, "a.ndjson");
    const tally = await writeInstructionArchive(file, {
      batch,
      instructions: streamOf(rows),
      invalidRows: streamOf([{ rowNumber: 9, problems: [{ message: "bad" }] }]),
    });
    expect(tally).toEqual({ rows: 2500, invalid: 1, totals: { EUR: 17_500 } });
    const read = await readInstructionArchive(file);
    expect(read.batch.id).toBe("b1");
    expect(read.instructions.map((r) => r.rowKey)).toEqual(rows.map((r) => r.rowKey));
    expect(read.invalidRows).toEqual([{ rowNumber: 9, problems: [{ message: "bad" }] }]);
  });

  it("hands out the last correction of a row in its place, and ignores a correction cut by a crash", async () => {
    const rows = [instruction(), instruction(), instruction()];
    const file = path.join(dir, "c.ndjson");
    await writeInstructionArchive(file, { batch, instructions: rows, invalidRows: [] });
    const fix = (amount: number): SubmittedInstruction => ({ ...rows[1]!, amount });
    await appendCorrection(file, { instruction: fix(1), attempt: 2 });
    await appendCorrection(file, { instruction: fix(2), attempt: 3 });
    await appendFile(file, `{"kind":"correction","rowKey":"${rows[0]!.rowKey}","amo`);
    const seen: SubmittedInstruction[] = [];
    for await (const entry of archiveEntries(file)) if (entry.kind === "row") seen.push(entry.instruction);
    expect(seen.map((r) => r.amount)).toEqual([rows[0]!.amount, 2, rows[2]!.amount]);
    expect(seen[1]).toMatchObject({ attempt: 3 });
  });

  it("names the line of a damaged archive and refuses a correction of an unknown row", async () => {
    const damaged = path.join(dir, "d.ndjson");
    await writeFile(damaged, `${JSON.stringify({ kind: "batch", ...batch })}\nnot json\n{"kind":"row"}\n`);
    await expect(readInstructionArchive(damaged)).rejects.toThrow(/d\.ndjson:2: not JSON/);
    const unknown = path.join(dir, "u.ndjson");
    await writeInstructionArchive(unknown, { batch, instructions: [instruction()], invalidRows: [] });
    await appendCorrection(unknown, { instruction: instruction(), attempt: 2 });
    await expect(readInstructionArchive(unknown)).rejects.toThrow(ArchiveFormatError);
  });

  it("stages rows on disk and archives them as they are, with their tally", async () => {
    const staging = await RowStaging.create(path.join(dir, "staging", "s.ndjson"));
    const rows = Array.from({ length: 1500 }, () => instruction());
    for (const row of rows.slice(0, 3)) await staging.addRow(row);
    await staging.addInvalid({ rowNumber: 4, problems: [{ message: "x" }] });
    for (const row of rows.slice(3)) await staging.addRow(row);
    await staging.close();
    const target = path.join(dir, "staged.ndjson");
    const tally = await archiveStagedRows(target, batch, staging);
    expect(tally).toEqual({
      rows: 1500,
      invalid: 1,
      totals: { [rows[0]!.currency]: rows.reduce((sum, r) => sum + r.amount, 0) },
    });
    const archived = await readInstructionArchive(target);
    expect(archived.batch).toEqual(batch);
    expect(archived.instructions).toEqual(rows);
    expect(archived.invalidRows).toEqual([{ rowNumber: 4, problems: [{ message: "x" }] }]);
    await staging.remove();
    await expect(readInstructionArchive(staging.path)).rejects.toThrow(/ENOENT/);
  });

  it("removes the scratch file a killed submit left behind, and keeps one a running submit writes", async () => {
    const folder = path.join(dir, "abandoned");
    await mkdir(folder, { recursive: true });
    const abandoned = path.join(folder, ".staging-b-old.ndjson");
    const running = path.join(folder, ".staging-b-running.ndjson");
    const archived = path.join(folder, "b-old.ndjson");
    for (const file of [abandoned, running, archived]) await writeFile(file, "{}\n");
    const longAgo = new Date(Date.now() - RowStaging.ABANDONED_AFTER_MS - 60_000);
    await utimes(abandoned, longAgo, longAgo);
    await utimes(archived, longAgo, longAgo);
    const staging = await RowStaging.create(path.join(folder, ".staging-b-new.ndjson"));
    await staging.close();
    expect((await readdir(folder)).sort()).toEqual(
      [".staging-b-new.ndjson", ".staging-b-running.ndjson", "b-old.ndjson"].sort(),
    );
    await staging.remove();
  });
});
