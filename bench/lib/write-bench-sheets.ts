/**
 * Writes the benchmark's payout sheets to disk, streaming, so generating 100,000 rows needs no more
 * memory than generating ten. CSV is written the way Excel's "CSV UTF-8" saves: BOM, CRLF, amounts as
 * text, quotes only where a field needs them. XLSX goes through exceljs's streaming WorkbookWriter with
 * amounts as number cells.
 */
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import ExcelJS from "exceljs";
import {
  amountNumber,
  amountText,
  BENCH_SHEET_COLUMNS,
  type BenchRowOptions,
  benchPayoutRows,
  rowCells,
} from "./payout-sheet-rows.js";

export async function writeBenchCsv(file: string, rows: number, options: BenchRowOptions): Promise<void> {
  const out = createWriteStream(file);
  const finished = once(out, "finish");
  const write = async (text: string) => {
    // Honour backpressure: without it the whole file would queue in memory.
    if (!out.write(text)) await once(out, "drain");
  };
  await write(`\uFEFF${BENCH_SHEET_COLUMNS.join(",")}\r\n`);
  let batch = "";
  let batched = 0;
  for (const row of benchPayoutRows(rows, options)) {
    batch += `${rowCells(row, amountText(row)).map(csvField).join(",")}\r\n`;
    // A few hundred rows per write keeps the stream's overhead out of the generation time.
    if (++batched === 500) {
      await write(batch);
      batch = "";
      batched = 0;
    }
  }
  if (batch) await write(batch);
  out.end();
  await finished;
}

/**
 * The end-to-end benchmark's sheet: every row valid against the default seed and settling; with
 * `usdOnly`, no row needs an FX quote.
 */
export function writeE2eSheet(file: string, rows: number, usdOnly = false): Promise<void> {
  return writeBenchCsv(file, rows, { fasterEvery: 0, onlySettling: true, usdOnly });
}

export interface XlsxWriteOptions extends BenchRowOptions {
  /**
   * Shared strings (what Excel, LibreOffice and Google Sheets always write) or inline strings. With
   * shared strings the reader must hold the table of every distinct string, so unique references make
   * it grow with the row count.
   */
  sharedStrings: boolean;
}

export async function writeBenchXlsx(file: string, rows: number, options: XlsxWriteOptions): Promise<void> {
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    filename: file,
    useSharedStrings: options.sharedStrings,
    useStyles: false,
  });
  const sheet = workbook.addWorksheet("Payouts");
  sheet.addRow([...BENCH_SHEET_COLUMNS]).commit();
  for (const row of benchPayoutRows(rows, options)) {
    sheet.addRow(rowCells(row, amountNumber(row))).commit();
  }
  sheet.commit();
  await workbook.commit();
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}
