/**
 * Pure helpers shared by the table writers: which format a path asks for, and the shape checks
 * that keep a writer from silently dropping or inventing cells.
 */
import { extname } from "node:path";
import type { CellValue } from "./csv-encode.js";

export const TABLE_FORMATS = ["csv", "xlsx", "json"] as const;
export type TableFormat = (typeof TABLE_FORMATS)[number];

/** The format a file name asks for: `.csv`, `.xlsx` or `.json` (any case). Throws on anything else. */
export function formatFromPath(path: string): TableFormat {
  const ext = extname(path).slice(1).toLowerCase();
  if ((TABLE_FORMATS as readonly string[]).includes(ext)) return ext as TableFormat;
  throw new Error(`cannot tell the table format of "${path}": use a .csv, .xlsx or .json file name`);
}

/** A row may be shorter than the header (missing cells are blank) but never longer: that would lose data. */
export function checkRowWidth(
  row: readonly (CellValue | undefined)[],
  columnCount: number,
  index: number,
): void {
  if (row.length > columnCount) {
    throw new Error(`row ${index + 1} has ${row.length} cells but the table has ${columnCount} columns`);
  }
}

/** Excel sheet names: at most 31 characters, none of `[]:*?/\`, not blank, no leading/trailing `'`. */
export function safeSheetName(name: string | undefined, fallback = "Sheet1"): string {
  const cleaned = (name ?? "")
    .replace(/[[\]:*?/\\]/g, "_")
    .replace(/^'+|'+$/g, "")
    .trim()
    .slice(0, 31)
    .trim();
  return cleaned === "" ? fallback : cleaned;
}

/**
 * Column widths in characters for a spreadsheet, from the header and the first rows (the streaming
 * writer must fix widths before the first row is written, so later rows cannot widen a column).
 */
export function columnWidths(
  columns: readonly string[],
  sample: readonly (readonly (CellValue | undefined)[])[],
  limits: { min: number; max: number } = { min: 8, max: 60 },
): number[] {
  return columns.map((header, c) => {
    let longest = header.length;
    for (const row of sample) {
      const value = row[c];
      if (value === null || value === undefined) continue;
      const text = typeof value === "number" ? String(value) : value;
      // Only the first line of a multi-line cell shows in a normal-height row.
      const firstLine = text.split(/\r?\n/, 1)[0] ?? "";
      longest = Math.max(longest, firstLine.length + (typeof value === "number" ? 0 : 1));
    }
    return Math.min(limits.max, Math.max(limits.min, longest + 2));
  });
}
