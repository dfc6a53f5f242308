/**
 * What a person downloads: a result file served for the console or API never adds a file to
 * `outbox/` (where the final file is picked up), even in the other format or mid-run; and the XLSX
 * keeps the sheet's amounts in their currency's decimals (150.00 stays 150.00, not 150).
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import ExcelJS from "exceljs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createResultFiles, RESULT_COLUMNS, writeResultFile } from "../../../src/results/index.js";
import { type BuiltBatch, buildBatch, deleteKeys, LAYOUT, openStore, uniquePrefix } from "./helpers.js";

const prefix = uniquePrefix("downloads");
const { redis, store } = openStore(prefix);
let dataDir: string;
let batch: BuiltBatch;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "payouts-downloads-"));
  batch = await buildBatch(store, "csv", dataDir);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  await redis.quit();
  await rm(dataDir, { recursive: true, force: true });
});

const listing = async (dir: string) => (await readdir(dir).catch(() => [] as string[])).sort();

describe("downloads", () => {
  it("never leave a file in outbox/: served from the outbox's current file, else from downloads/", async () => {
    const files = createResultFiles({ store, dataDir, maxAgeMs: 0 });
    const xlsx = await files.resultFile(batch.batchId, "xlsx");
    const csv = await files.resultFile(batch.batchId, "csv");
    expect(path.dirname(xlsx!)).toBe(path.join(dataDir, "downloads"));
    expect(path.dirname(csv!)).toBe(path.join(dataDir, "downloads"));
    expect(await listing(path.join(dataDir, "outbox"))).toEqual([]);
    // Once the outbox has written its file, a download of that format is that very file.
    const served = createResultFiles({ store, dataDir, maxAgeMs: 60_000 });
    const outboxFile = await served.write(batch.batchId);
    expect(await served.resultFile(batch.batchId, "csv")).toBe(outboxFile.path);
    expect(path.dirname((await served.resultFile(batch.batchId, "xlsx"))!)).toBe(
      path.join(dataDir, "downloads"),
    );
    expect(await listing(path.join(dataDir, "outbox"))).toEqual([path.basename(outboxFile.path)]);
  });

  it("keeps amounts in their currency's decimals and the USD debit in cents in the XLSX", async () => {
    const written = await writeResultFile(store, batch.batchId, {
      format: "xlsx",
      outPath: path.join(dataDir, "r.xlsx"),
    });
    const book = new ExcelJS.Workbook();
    await book.xlsx.readFile(written.path);
    const sheet = book.worksheets[0]!;
    const amountColumn = LAYOUT.columns.indexOf("amount") + 1;
    const debitColumn = LAYOUT.columns.length + RESULT_COLUMNS.indexOf("debit_usd") + 1;
    const byReference = new Map<string, ExcelJS.Row>();
    sheet.eachRow((row, n) => {
      if (n > 1) byReference.set(String(row.getCell(1).text), row);
    });
    const paid = [...byReference.entries()].find(([ref]) => ref.endsWith("-2"))![1];
    expect(paid.getCell(amountColumn).value).toBe(1250);
    expect(paid.getCell(amountColumn).numFmt).toBe("0.00");
    const fx = [...byReference.entries()].find(([ref]) => ref.endsWith("-3"))![1];
    expect(fx.getCell(debitColumn).value).toBe(543.21);
    expect(fx.getCell(debitColumn).numFmt).toBe("0.00");
  });
});
