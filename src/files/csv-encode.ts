/**
 * RFC 4180 CSV encoding, tuned for Excel: CRLF record ends, a UTF-8 byte-order mark so Excel opens
 * the file as UTF-8 (without it Excel assumes the legacy code page and garbles accents), fields
 * quoted only when they must be. Pure functions; the writers do the I/O.
 */
import { excelSafeText } from "./excel-safe.js";

export type CellValue = string | number | null;

export const UTF8_BOM = "\uFEFF";
export const CRLF = "\r\n";

const MUST_QUOTE = /[",\r\n]/;

/** One field: numbers stay unquoted numbers, text is made formula-safe and quoted when needed. */
export function csvField(value: CellValue | undefined): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") return formatNumber(value);
  const text = excelSafeText(value);
  return MUST_QUOTE.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record, terminated by CRLF. */
export function csvRecord(values: readonly (CellValue | undefined)[]): string {
  return values.map(csvField).join(",") + CRLF;
}

/**
 * A number as plain decimal text. `String()` is the shortest text that reads back as the same
 * double; NaN and Infinity have no cell representation, and writing them as text would hide a bug.
 */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) throw new TypeError(`cannot write the non-finite number ${value} to a cell`);
  return Object.is(value, -0) ? "0" : String(value);
}
