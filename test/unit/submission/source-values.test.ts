/**
 * What a batch keeps of each sheet row for its result file: numbers stay numbers, but a reference the
 * sheet shows zero-padded (`000123`) is kept as shown, or the result file would name a reference that
 * was never paid (and a result file dropped back for retry would match no row).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import ExcelJS from "exceljs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSheet, type SheetRow } from "../../../src/sheets/index.js";
import { sourceValuesOf } from "../../../src/submission/submit-sheet.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "payouts-source-values-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("sourceValuesOf", () => {
  it("keeps a zero-padded number as the sheet shows it and every other number as a number", async () => {
    const file = path.join(dir, "padded.xlsx");
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet("Payouts");
    sheet.addRow(["reference", "from_account", "to_account", "amount", "metadata.invoice"]);
    sheet.addRow([123, "acct_from", "acct_to", 1250, 7]);
    sheet.getColumn(1).numFmt = "000000";
    sheet.getColumn(5).numFmt = "#,##0.00";
    await workbook.xlsx.writeFile(file);
    const opened = await openSheet(file);
    const rows: SheetRow[] = [];
    for await (const row of opened.rows) rows.push(row);
    expect(sourceValuesOf(rows[0] as SheetRow, opened.header)).toEqual({
      reference: "000123",
      from_account: "acct_from",
      to_account: "acct_to",
      amount: 1250,
      "metadata.invoice": 7,
    });
  });
});
