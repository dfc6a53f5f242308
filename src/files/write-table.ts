/**
 * Tabular file writers for reports and result files: CSV, XLSX and JSON, each written atomically.
 * Rows may come from an array, any iterable or an async iterable, so a large result file is
 * streamed out without holding a second copy of it in memory.
 */
import { once } from "node:events";
import type { Writable } from "node:stream";
import { writeFileAtomic } from "./atomic-write.js";
import { type CellValue, csvRecord, formatNumber, UTF8_BOM } from "./csv-encode.js";
import { excelSafeText } from "./excel-safe.js";
import { loadExcel } from "./load-excel.js";
import {
  checkRowWidth,
  columnWidths,
  formatFromPath,
  safeSheetName,
  type TableFormat,
} from "./table-format.js";

export type TableRow = readonly (CellValue | undefined)[];
export type TableRows = Iterable<TableRow> | AsyncIterable<TableRow>;

export interface TableSpec {
  /** Header cells, in order. */
  columns: readonly string[];
  /** One array per row, cells in column order; `null`/missing cells are blank. */
  rows: TableRows;
  /** Default: from the file extension (`formatFromPath`). */
  format?: TableFormat;
  /** XLSX only: the worksheet name (default `Sheet1`; cleaned to what Excel accepts). */
  sheetName?: string;
  /**
   * XLSX only: the column whose cells are coloured by row status: its header (e.g. `status`, the first
   * column so named) or its 0-based index (when a sheet's own columns may reuse the header).
   */
  statusColumn?: string | number;
  /**
   * XLSX only: rows that size the columns when `rows` is not an array (a stream cannot be looked
   * ahead into); typically the first few hundred rows of the stream.
   */
  widthSample?: readonly TableRow[];
  /**
   * XLSX only: write text cells as inline strings (`t="inlineStr"`). Default false: exceljs's
   * streaming writer then emits `t="str"`, which the file format defines as a formula's cached text.
   * ExcelJS reads inline strings back as `{ richText }` values rather than plain strings.
   */
  inlineStrings?: boolean;
  /**
   * XLSX only: the number format of a numeric cell (`0.00`, `0`), by its row and 0-based column; none
   * (Excel's General) when it answers undefined. Keeps a result's `150.00` from showing as `150`.
   */
  numberFormat?: (row: TableRow, column: number) => string | undefined;
}

export interface TableWriteSummary {
  format: TableFormat;
  rows: number;
}

/**
 * Writes a table to `path`, atomically. Strings go through `excelSafeText` in CSV and XLSX; numbers
 * stay numbers (numeric XLSX cells, unquoted CSV). JSON is for programs, not spreadsheets: it is an
 * array of objects keyed by column, with the text exactly as given (no formula escaping).
 */
export async function writeTable(path: string, spec: TableSpec): Promise<TableWriteSummary> {
  const format = spec.format ?? formatFromPath(path);
  let rows = 0;
  const counted = countRows(spec.rows, spec.columns.length, (n) => {
    rows = n;
  });
  await writeFileAtomic(path, async (out) => {
    switch (format) {
      case "csv":
        await writeCsv(out, spec.columns, counted);
        break;
      case "xlsx":
        await writeXlsx(out, spec, counted);
        break;
      case "json":
        await writeJson(out, spec.columns, counted);
        break;
    }
  });
  return { format, rows };
}

async function* countRows(
  rows: TableRows,
  columnCount: number,
  report: (count: number) => void,
): AsyncGenerator<TableRow> {
  let index = 0;
  for await (const row of rows) {
    checkRowWidth(row, columnCount, index);
    index += 1;
    report(index);
    yield row;
  }
}

/**
 * Writes with back-pressure: waits for the file stream to drain instead of buffering unboundedly. A
 * stream that already failed never drains: its error is thrown instead.
 */
async function write(out: Writable, chunk: string): Promise<void> {
  if (out.errored) throw out.errored;
  if (!out.write(chunk)) await once(out, "drain");
}

async function writeCsv(
  out: Writable,
  columns: readonly string[],
  rows: AsyncIterable<TableRow>,
): Promise<void> {
  await write(out, UTF8_BOM + csvRecord(columns));
  // Batch small records into larger writes; one write per row is slow for big files.
  let buffer = "";
  for await (const row of rows) {
    buffer += csvRecord(padRow(row, columns.length));
    if (buffer.length >= 64 * 1024) {
      await write(out, buffer);
      buffer = "";
    }
  }
  if (buffer !== "") await write(out, buffer);
}

async function writeJson(
  out: Writable,
  columns: readonly string[],
  rows: AsyncIterable<TableRow>,
): Promise<void> {
  const seen = new Set<string>();
  for (const column of columns) {
    if (seen.has(column)) throw new Error(`cannot write JSON: the column "${column}" appears twice`);
    seen.add(column);
  }
  await write(out, "[");
  let first = true;
  for await (const row of rows) {
    const object: Record<string, string | number | null> = {};
    columns.forEach((column, c) => {
      const value = row[c] ?? null;
      // JSON.stringify would turn NaN into null without a word.
      if (typeof value === "number") formatNumber(value);
      object[column] = value;
    });
    await write(out, `${first ? "" : ","}\n  ${JSON.stringify(object)}`);
    first = false;
  }
  await write(out, first ? "]\n" : "\n]\n");
}

/** Status colours (ARGB fills) for the XLSX status column: green final-good, red needs attention. */
const STATUS_FILLS: Readonly<Record<string, string>> = {
  completed: "FFC6EFCE",
  failed: "FFFFC7CE",
  rejected: "FFFFC7CE",
  invalid: "FFFFC7CE",
  error: "FFFFC7CE",
  canceled: "FFD9D9D9",
  queued: "FFFFEB9C",
  submitted: "FFFFEB9C",
  "in-progress": "FFFFEB9C",
  valid: "FFC6EFCE",
};

/** How many leading rows decide the column widths when the rows are an array. */
const WIDTH_SAMPLE_ROWS = 500;

async function writeXlsx(out: Writable, spec: TableSpec, rows: AsyncIterable<TableRow>): Promise<void> {
  const { columns } = spec;
  // useSharedStrings off: inline strings keep memory flat for big files (no string table to hold).
  const ExcelJS = await loadExcel();
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    stream: out,
    useStyles: true,
    useSharedStrings: false,
  });
  const sheet = workbook.addWorksheet(safeSheetName(spec.sheetName), {
    views: [{ state: "frozen", xSplit: 0, ySplit: 1 }],
  });
  const sample = Array.isArray(spec.rows)
    ? (spec.rows as TableRow[]).slice(0, WIDTH_SAMPLE_ROWS)
    : (spec.widthSample ?? []).slice(0, WIDTH_SAMPLE_ROWS);
  sheet.columns = columnWidths(columns, sample).map((width) => ({ width }));
  if (columns.length > 0) {
    sheet.autoFilter = { from: { row: 1, column: 1 }, to: { row: 1, column: columns.length } };
  }
  const text = spec.inlineStrings === true ? inlineText : (value: CellValue) => value;
  const header = sheet.addRow(columns.map((c) => text(excelSafeText(c))));
  header.font = { bold: true };
  header.commit();

  const statusIndex =
    typeof spec.statusColumn === "number"
      ? spec.statusColumn
      : spec.statusColumn === undefined
        ? -1
        : columns.indexOf(spec.statusColumn);
  for await (const row of rows) {
    const values = padRow(row, columns.length).map(xlsxCellValue);
    const written = sheet.addRow(values.map(text));
    if (spec.numberFormat) {
      values.forEach((value, c) => {
        const format = typeof value === "number" ? spec.numberFormat!(row, c) : undefined;
        if (format !== undefined) written.getCell(c + 1).numFmt = format;
      });
    }
    const status = statusIndex >= 0 ? values[statusIndex] : undefined;
    const fill = typeof status === "string" ? STATUS_FILLS[status] : undefined;
    if (fill !== undefined) {
      written.getCell(statusIndex + 1).fill = { type: "pattern", pattern: "solid", fgColor: { argb: fill } };
    }
    written.commit();
  }
  sheet.commit();
  await workbook.commit();
}

function xlsxCellValue(value: CellValue): CellValue {
  if (typeof value === "number") {
    formatNumber(value); // refuses NaN/Infinity, which would corrupt the sheet XML
    return value;
  }
  // XML parsers turn a bare CR into LF, so Excel would never see it anyway; making that explicit
  // keeps the written text equal to what every reader gets back.
  return value === null ? null : excelSafeText(value).replace(/\r\n?/g, "\n");
}

/**
 * Text as an inline rich-text value, so the streaming writer (no shared strings) emits a
 * `t="inlineStr"` cell. Given a plain string it emits `t="str"`, which the file format defines as a
 * formula's cached text: Excel shows it, but strict readers and converters may take it for a
 * formula result, and a result file must not look like it holds formulas (docs/design.md §3.7).
 */
function inlineText(value: CellValue): CellValue | { richText: { text: string }[] } {
  return typeof value === "string" ? { richText: [{ text: value }] } : value;
}

function padRow(row: TableRow, width: number): CellValue[] {
  const cells: CellValue[] = [];
  for (let c = 0; c < width; c++) cells.push(row[c] ?? null);
  return cells;
}
