/**
 * Normalising XLSX cell values (as exceljs hands them out) into `SheetCell`s. Pure functions, no I/O.
 *
 * exceljs gives a cell's value as a string, number, Date, boolean, `{ richText }`, `{ formula, result }`,
 * `{ sharedFormula, result }`, `{ text, hyperlink }`, `{ error }` or null. A formula's cached result is
 * what Excel shows, so it is used; a formula nobody calculated (no cached result) is an error cell.
 */
import { excelNumberText, isLossyInteger } from "../money/index.js";
import type { SheetCell } from "./types.js";

export interface CellFormat {
  /** The cell's number format code (`0.00`, `yyyy-mm-dd`, `General`), if any. */
  numFmt?: string | undefined;
  /** The workbook uses the 1904 date system (old Mac Excel). */
  date1904?: boolean | undefined;
}

/**
 * True when an Excel number format shows a date or time. Text in quotes, `[...]` sections (colours,
 * locales), escaped characters and padding are ignored before looking for d, m, y, h or s.
 */
export function isDateFormat(numFmt: string | undefined): boolean {
  if (!numFmt) return false;
  const bare = numFmt
    .replace(/"[^"]*"/g, "")
    .replace(/\[[^\]]*\]/g, "")
    .replace(/\\./g, "")
    .replace(/[_*]./g, "");
  if (/^general$/i.test(bare.trim())) return false;
  return /[dmyhs]/i.test(bare);
}

/** Converts an Excel date serial (days since 1899-12-30, or since 1904-01-01) to a UTC Date. */
export function excelSerialToDate(serial: number, date1904 = false): Date {
  const days = serial + (date1904 ? 1462 : 0) - 25569;
  return new Date(Math.round(days * 86_400_000));
}

/** `YYYY-MM-DD` for a whole day, else `YYYY-MM-DDTHH:MM:SS` (Excel dates have no time zone). */
export function dateText(date: Date): string {
  const iso = date.toISOString();
  return iso.endsWith("T00:00:00.000Z") ? iso.slice(0, 10) : iso.slice(0, 19);
}

export function numberCell(value: number): SheetCell {
  if (!Number.isFinite(value)) return { text: "", kind: "error", error: "#NUM!" };
  const cell: SheetCell = { text: excelNumberText(value), kind: "number", number: value };
  if (isLossyInteger(value)) cell.lossy = true;
  return cell;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** Normalises one exceljs cell value. */
export function normaliseCellValue(value: unknown, format: CellFormat = {}): SheetCell {
  if (value === null || value === undefined) return { text: "", kind: "empty" };
  if (typeof value === "string")
    return value === "" ? { text: "", kind: "empty" } : { text: value, kind: "string" };
  if (typeof value === "number") return numberCell(value);
  if (typeof value === "boolean") return { text: value ? "TRUE" : "FALSE", kind: "boolean" };
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return { text: "", kind: "error", error: "#VALUE!" };
    return { text: dateText(value), kind: "date" };
  }
  if (!isRecord(value)) return { text: String(value), kind: "error", error: "UNSUPPORTED_VALUE" };
  if (Array.isArray(value.richText)) {
    const text = value.richText.map((run: unknown) => (isRecord(run) ? String(run.text ?? "") : "")).join("");
    return text === "" ? { text: "", kind: "empty" } : { text, kind: "string" };
  }
  if ("formula" in value || "sharedFormula" in value) {
    return { ...formulaResultCell(value.result, format), formula: true };
  }
  if ("error" in value) {
    const error = String(value.error);
    return { text: error, kind: "error", error };
  }
  if ("hyperlink" in value || "text" in value) return normaliseCellValue(value.text, format);
  return { text: "", kind: "error", error: "UNSUPPORTED_VALUE" };
}

function formulaResultCell(result: unknown, format: CellFormat): SheetCell {
  if (result === undefined || result === null) {
    return { text: "", kind: "error", error: "FORMULA_NOT_CALCULATED" };
  }
  if (typeof result === "number") {
    // exceljs reads an error result (t="e", e.g. #N/A) through parseFloat, which gives NaN.
    if (Number.isNaN(result)) return { text: "#ERROR", kind: "error", error: "#ERROR" };
    // exceljs converts plain date cells but not formula results: do it here with the cell's format.
    if (isDateFormat(format.numFmt))
      return { text: dateText(excelSerialToDate(result, format.date1904)), kind: "date" };
  }
  return normaliseCellValue(result, format);
}
