/**
 * The result file as accounting opens it: built from a batch in a real Redis, written as CSV and
 * XLSX, and read back by our own sheet reader and by independent readers (papaparse on the CSV text,
 * the raw sheet XML of the XLSX, ExcelJS for its presentation).
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import ExcelJS from "exceljs";
import Papa from "papaparse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BatchStore, rowIdempotencyKey } from "../../../src/batches/index.js";
import { plainErrorMessage } from "../../../src/error-codes/index.js";
import { excelSafeText, undoExcelSafeText } from "../../../src/files/index.js";
import {
  defaultResultPath,
  RESULT_COLUMNS,
  UnknownBatchError,
  writeResultFile,
} from "../../../src/results/index.js";
import { openSheet, type SheetCell } from "../../../src/sheets/index.js";
import {
  type BuiltBatch,
  buildBatch,
  deleteKeys,
  FORMULA_TEXTS,
  LAYOUT,
  openStore,
  uniquePrefix,
  xlsxCells,
} from "./helpers.js";

const prefix = uniquePrefix("file");
const { redis, store } = openStore(prefix);
let dataDir: string;
let csvBatch: BuiltBatch;
let xlsxBatch: BuiltBatch;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "payouts-results-"));
  csvBatch = await buildBatch(store, "csv", dataDir);
  xlsxBatch = await buildBatch(store, "xlsx", dataDir);
});

afterAll(async () => {
  await deleteKeys(redis, prefix);
  redis.disconnect();
  await rm(dataDir, { recursive: true, force: true });
});

const HEADER = [...LAYOUT.columns, ...RESULT_COLUMNS];
const col = (name: (typeof RESULT_COLUMNS)[number]) => LAYOUT.columns.length + RESULT_COLUMNS.indexOf(name);

/** What every reader must see, row by row (text cells as written: formula-looking text escaped). */
async function expectedRows(s: BatchStore, b: BuiltBatch): Promise<(string | number)[][]> {
  const batch = (await s.getBatch(b.batchId))!;
  const key = async (rowKey: string) => rowIdempotencyKey(batch, (await s.getRow(b.batchId, rowKey))!);
  const safe = excelSafeText;
  const updated = async (rowKey: string) => (await s.getRow(b.batchId, rowKey))!.updatedAt;
  const ref = (rowKey: string) => rowKey;
  return [
    [
      ref(b.paid),
      "acct_vendor_ach",
      1250,
      "USD",
      "",
      safe(FORMULA_TEXTS[0]),
      "completed",
      "pay_paid1",
      "completed",
      "",
      "",
      "",
      "",
      1,
      await key(b.paid),
      await updated(b.paid),
    ],
    [
      ref(b.fx),
      "acct_vendor_eur",
      500,
      "EUR",
      safe(FORMULA_TEXTS[1]),
      "",
      "in-progress",
      "pay_fx1",
      "in-progress",
      543.21,
      0.9205,
      "",
      "",
      1,
      await key(b.fx),
      await updated(b.fx),
    ],
    [
      ref(b.rejected),
      "acct_vendor_ach",
      100.01,
      "USD",
      "",
      safe(FORMULA_TEXTS[2]),
      "rejected",
      "",
      "",
      "",
      "",
      "ACCOUNT_NOT_VERIFIED",
      // What happened and what to do, from the error-code table, with the service's own words.
      plainErrorMessage("ACCOUNT_NOT_VERIFIED", "the paying account is not verified"),
      1,
      await key(b.rejected),
      await updated(b.rejected),
    ],
    [
      "INV-BAD",
      "acct_nobody",
      "1,234",
      "USD",
      "",
      "",
      "invalid",
      "",
      "",
      "",
      "",
      "AMOUNT_AMBIGUOUS",
      "AMOUNT_AMBIGUOUS: 1,234 could be 1234 or 1.234; ACCOUNT_NOT_FOUND: no account acct_nobody",
      "",
      "",
      batch.createdAt,
    ],
    [
      ref(b.pending),
      "acct_vendor_ach",
      7,
      "USD",
      "",
      safe(FORMULA_TEXTS[3]),
      "submitted",
      "pay_pending1",
      "scheduled",
      "",
      "",
      "",
      "",
      1,
      await key(b.pending),
      await updated(b.pending),
    ],
    [
      "",
      "",
      3,
      "",
      "",
      safe("=1+1"),
      "invalid",
      "",
      "",
      "",
      "",
      "REFERENCE_MISSING",
      "REFERENCE_MISSING: the reference is blank",
      "",
      "",
      batch.createdAt,
    ],
  ];
}

/** A cell as our reader gives it: numbers as numbers, everything else as its text. */
function cellValue(cell: SheetCell | undefined): string | number {
  if (!cell || cell.kind === "empty") return "";
  return cell.kind === "number" && cell.number !== undefined ? cell.number : cell.text;
}

async function readWithOurReader(file: string): Promise<{ header: string[]; rows: (string | number)[][] }> {
  const sheet = await openSheet(file);
  const rows: (string | number)[][] = [];
  for await (const row of sheet.rows) {
    rows.push(sheet.header.columns.map((c) => cellValue(row.cells[c.key])));
  }
  return { header: sheet.header.columns.map((c) => c.original), rows };
}

describe("the result file of a CSV batch", () => {
  let file: string;
  beforeAll(async () => {
    const written = await writeResultFile(store, csvBatch.batchId, { dataDir });
    file = written.path;
    expect(written).toMatchObject({ format: "csv", rows: 6 });
  });

  it("is written in the sheet's own format to DATA_DIR/outbox, named after the sheet and batch", async () => {
    expect(file).toBe(path.join(dataDir, "outbox", `payroll run.${csvBatch.batchId}.result.csv`));
    // Atomic: no temp file is left beside it.
    expect((await readdir(path.dirname(file))).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("reads back with papaparse: every sheet column in order, the result columns, rows in sheet order", async () => {
    const text = (await readFile(file, "utf8")).replace(/^\uFEFF/, "");
    const parsed = Papa.parse<string[]>(text, { skipEmptyLines: true });
    expect(parsed.errors).toEqual([]);
    const [header, ...rows] = parsed.data;
    expect(header).toEqual(HEADER);
    const expected = (await expectedRows(store, csvBatch)).map((r) => r.map(String));
    expect(rows).toEqual(expected);
  });

  it("keeps formula-looking text as text: escaped with a quote, never a formula, and reversible", async () => {
    const text = (await readFile(file, "utf8")).replace(/^\uFEFF/, "");
    const rows = Papa.parse<string[]>(text, { skipEmptyLines: true }).data.slice(1);
    const cells = rows.flat();
    for (const formula of [...FORMULA_TEXTS, "=1+1"]) {
      expect(cells).toContain(`'${formula}`);
      expect(cells).not.toContain(formula);
      expect(undoExcelSafeText(`'${formula}`)).toBe(formula);
    }
    // Only real numbers start with "-": none of the text cells does.
    expect(cells.filter((c) => /^[=+\-@\t\r]/.test(c))).toEqual([]);
  });

  it("reads back with our own sheet reader, amounts and the FX debit as numbers", async () => {
    const { header, rows } = await readWithOurReader(file);
    expect(header).toEqual(HEADER);
    const expected = await expectedRows(store, csvBatch);
    // CSV cells carry no type: our reader gives text, which must read as the same numbers.
    expect(rows.map((r) => r.map(String))).toEqual(expected.map((r) => r.map(String)));
    expect(Number(rows[1]?.[col("debit_usd")])).toBe(543.21);
    expect(Number(rows[1]?.[col("fx_rate")])).toBe(0.9205);
  });
});

describe("the result file of an XLSX batch", () => {
  let file: string;
  beforeAll(async () => {
    file = (await writeResultFile(store, xlsxBatch.batchId, { dataDir })).path;
  });

  it("is an XLSX next to the other results", () => {
    expect(file).toBe(
      defaultResultPath(dataDir, { id: xlsxBatch.batchId, sourceName: "payroll run.xlsx" }, "xlsx"),
    );
  });

  it("has typed cells in the sheet XML: text as strings, numbers as plain values, no formula at all", async () => {
    const cells = await xlsxCells(file);
    const expected = await expectedRows(store, xlsxBatch);
    const letter = (c: number) => String.fromCharCode(65 + c);
    HEADER.forEach((name, c) => {
      expect(cells.get(`${letter(c)}1`)).toMatchObject({ value: name, hasFormula: false });
    });
    expected.forEach((row, r) => {
      row.forEach((value, c) => {
        const cell = cells.get(`${letter(c)}${r + 2}`);
        if (value === "") {
          expect(cell?.value ?? "").toBe("");
          return;
        }
        expect(cell, `${letter(c)}${r + 2}`).toBeDefined();
        expect(cell?.hasFormula).toBe(false);
        if (typeof value === "number") {
          expect(cell?.t).toBeUndefined();
          expect(Number(cell?.value)).toBe(value);
        } else {
          // Shared or inline strings; never "str", which is a formula's cached text.
          expect(["s", "inlineStr"]).toContain(cell?.t);
          expect(cell?.value).toBe(value);
        }
      });
    });
    expect([...cells.values()].some((c) => c.hasFormula)).toBe(false);
  });

  it("reads back with our own sheet reader, cell for cell", async () => {
    const { header, rows } = await readWithOurReader(file);
    expect(header).toEqual(HEADER);
    expect(rows).toEqual(await expectedRows(store, xlsxBatch));
  });

  it("opens in Excel with a frozen header, an autofilter and our status column coloured", async () => {
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(file);
    const ws = wb.worksheets[0]!;
    expect(ws.views[0]).toMatchObject({ state: "frozen", ySplit: 1 });
    expect(ws.autoFilter).toBeTruthy();
    const statusCol = col("status") + 1;
    const fill = (r: number, c: number) => {
      const f = ws.getRow(r).getCell(c).fill;
      return f?.type === "pattern" ? f.fgColor?.argb : undefined;
    };
    expect(fill(2, statusCol)).toBe("FFC6EFCE"); // completed: green
    expect(fill(4, statusCol)).toBe("FFFFC7CE"); // rejected: red
    expect(fill(5, statusCol)).toBe("FFFFC7CE"); // invalid: red
    // The user's own "status" column is theirs: never coloured.
    expect(fill(3, LAYOUT.columns.indexOf("status") + 1)).toBeUndefined();
  });

  it("follows the rows: a later change shows in the next file", async () => {
    const fx = await store.changeRow(xlsxBatch.batchId, xlsxBatch.fx, {
      to: "completed",
      fields: { paymentStatus: "completed" },
    });
    expect(fx.outcome).toBe("ok");
    const again = await writeResultFile(store, xlsxBatch.batchId, { dataDir, format: "csv" });
    const { rows } = await readWithOurReader(again.path);
    expect(rows[1]?.[col("status")]).toBe("completed");
    expect(rows[1]?.[col("debit_usd")]).toBe("543.21");
  });
});

describe("writeResultFile", () => {
  it("refuses an unknown batch", async () => {
    await expect(writeResultFile(store, "b-no-such-batch", { dataDir })).rejects.toBeInstanceOf(
      UnknownBatchError,
    );
  });

  it("writes where asked, in the format asked", async () => {
    const out = path.join(dataDir, "custom", "r.xlsx");
    const written = await writeResultFile(store, csvBatch.batchId, { outPath: out, format: "xlsx" });
    expect(written.path).toBe(out);
    const { rows } = await readWithOurReader(out);
    expect(rows).toHaveLength(6);
    expect(rows[0]?.[2]).toBe(1250);
  });
});
