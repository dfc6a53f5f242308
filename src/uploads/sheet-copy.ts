/**
 * A copy of an uploaded sheet with the console's changes in it: cells corrected in the page, headers
 * renamed by a column mapping. What is submitted is this copy (archived, validated again and paid as
 * written), never the original with the changes kept aside, so the archive holds exactly what was
 * validated.
 *
 * The copy keeps every row on its row number (a blank line or row where the original had a title, a
 * blank row or a multi-line record), so row numbers in reports, the batch and the result file are the
 * ones the person saw. Cells keep their kind: numbers stay numbers in an XLSX (padded ones keep their
 * text); a corrected cell is text. Written atomically; same format as the original (CSV: UTF-8 with
 * a byte-order mark, the original's delimiter).
 */
import { loadExcel, writeFileAtomic } from "../files/index.js";
import { openSheet } from "../sheets/index.js";
import type { SheetCell } from "../sheets/types.js";

export interface SheetChanges {
  /** New cell texts by row number, then by column key. */
  edits?: ReadonlyMap<number, Readonly<Record<string, string>>>;
  /** New header texts by column key. */
  headers?: Readonly<Record<string, string>>;
}

/** Writes `target`, a copy of the sheet at `source` with `changes`. Returns the rows written. */
export async function writeSheetCopy(
  source: string,
  target: string,
  changes: SheetChanges,
  options: { sheet?: string | undefined; headerNames?: Readonly<Record<string, string>> } = {},
): Promise<number> {
  const opened = await openSheet(source, {
    ...(options.sheet ? { sheet: options.sheet } : {}),
    ...(options.headerNames ? { headerNames: options.headerNames } : {}),
  });
  const { header } = opened;
  const headers = header.columns.map((c) => changes.headers?.[c.key] ?? c.original);
  const cellsOf = (rowNumber: number, cells: Record<string, SheetCell>): SheetCell[] => {
    const edited = changes.edits?.get(rowNumber);
    return header.columns.map((c) =>
      edited && Object.hasOwn(edited, c.key)
        ? { text: edited[c.key]!, kind: "string" }
        : (cells[c.key] ?? { text: "", kind: "empty" }),
    );
  };
  let written = 0;
  if (header.format === "csv") {
    const delimiter = header.delimiter ?? ",";
    await writeFileAtomic(target, async (out) => {
      let line = 1;
      let buffer = "\uFEFF";
      const put = (text: string) => {
        buffer += text;
        line += (text.match(/\r\n|\r|\n/g) ?? []).length;
      };
      while (line < header.headerRowNumber) put("\n");
      put(`${headers.map((h) => csvField(h, delimiter)).join(delimiter)}\n`);
      for await (const row of opened.rows) {
        while (line < row.rowNumber) put("\n");
        put(
          `${cellsOf(row.rowNumber, row.cells)
            .map((c) => csvField(c.text, delimiter))
            .join(delimiter)}\n`,
        );
        written++;
        if (buffer.length > 64 * 1024) {
          if (!out.write(buffer)) await new Promise((r) => out.once("drain", r));
          buffer = "";
        }
      }
      out.write(buffer);
    });
    return written;
  }
  const ExcelJS = await loadExcel();
  await writeFileAtomic(target, async (out) => {
    const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
      stream: out,
      useStyles: false,
      useSharedStrings: false,
    });
    const sheet = workbook.addWorksheet(header.sheetName ?? "Sheet1");
    const headerRow = sheet.getRow(header.headerRowNumber);
    headers.forEach((h, i) => {
      headerRow.getCell(header.columns[i]!.index + 1).value = h;
    });
    headerRow.commit();
    for await (const row of opened.rows) {
      const r = sheet.getRow(row.rowNumber);
      cellsOf(row.rowNumber, row.cells).forEach((cell, i) => {
        const value = xlsxValue(cell);
        if (value !== null) r.getCell(header.columns[i]!.index + 1).value = value;
      });
      r.commit();
      written++;
    }
    sheet.commit();
    await workbook.commit();
  });
  return written;
}

/** A cell's value for the XLSX copy: numbers stay numbers (a padded one keeps its text), the rest text. */
function xlsxValue(cell: SheetCell): string | number | null {
  if (cell.kind === "empty") return null;
  if (cell.kind === "number" && typeof cell.number === "number" && !cell.padded) return cell.number;
  return cell.text;
}

/** One CSV field: quoted when it holds the delimiter, a quote, a line break, or edge spaces. */
function csvField(text: string, delimiter: string): string {
  if (text.includes(delimiter) || /["\r\n]/.test(text) || text !== text.trim()) {
    return `"${text.replaceAll('"', '""')}"`;
  }
  return text;
}
