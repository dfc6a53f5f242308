/**
 * What an XLSX cell's number means (`./xlsx/cell-interpreter.ts` applies it): dates and their text,
 * zero-padded integer formats, and number cells with their display text. Pure functions, no I/O.
 */
import { excelNumberText, isLossyInteger } from "../money/index.js";
import type { SheetCell } from "./types.js";

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

/** A number format that shows a whole number padded with zeros, with text around it: `000000`, `"INV-"0000`. */
export interface PaddedIntegerFormat {
  prefix: string;
  /** Digits always shown: the number is padded with leading zeros to this many. */
  digits: number;
  suffix: string;
}

/**
 * The padded-integer reading of a number format, when that is all it does: one run of `0` (and `#`)
 * placeholders, with quoted or escaped text before or after it, and nothing else (no decimal point,
 * grouping, percent, exponent, colour or condition). Undefined for every other format, and for `0` or
 * `#` alone, which show a whole number as it is. Such formats are how spreadsheets keep ids like
 * `000123` in number cells; the cell's text must be what the sheet shows, not `123`.
 */
export function paddedIntegerFormat(numFmt: string | undefined): PaddedIntegerFormat | undefined {
  if (!numFmt) return undefined;
  let prefix = "";
  let suffix = "";
  let digits = 0;
  let placeholders = 0;
  let state: "before" | "digits" | "after" = "before";
  for (let i = 0; i < numFmt.length; i++) {
    const ch = numFmt.charAt(i);
    let literal: string | undefined;
    if (ch === '"') {
      const close = numFmt.indexOf('"', i + 1);
      if (close < 0) return undefined;
      literal = numFmt.slice(i + 1, close);
      i = close;
    } else if (ch === "\\") {
      literal = numFmt.charAt(++i);
    } else if (ch === "0" || ch === "#") {
      if (state === "after") return undefined; // a second run of digits: `000-000`
      state = "digits";
      placeholders++;
      if (ch === "0") digits++;
      continue;
    } else {
      return undefined; // ; . , % E [ @ _ * and letters: a format this reading does not cover
    }
    if (state === "before") prefix += literal;
    else {
      state = "after";
      suffix += literal;
    }
  }
  if (placeholders === 0 || (digits <= 1 && prefix === "" && suffix === "")) return undefined;
  return { prefix, digits, suffix };
}

/**
 * The text a padded-integer format shows for `value`; undefined when the value is not a whole number
 * from 0 to 15 digits (a fraction or a negative number is shown as the plain number instead).
 */
export function paddedIntegerText(value: number, format: PaddedIntegerFormat): string | undefined {
  if (!Number.isInteger(value) || value < 0 || value >= 1e15) return undefined;
  return `${format.prefix}${String(value).padStart(format.digits, "0")}${format.suffix}`;
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

/**
 * `excelNumberText` (the number at Excel's 15 significant digits), with a cheap exact path: `String()`
 * gives the shortest text that reads back as the same double, and when that text has no exponent and at
 * most 15 significant digits, rounding the double to 15 digits gives those same digits (the double lies
 * within half a unit in its last place of them, far less than half a unit in the 15th digit).
 */
export function displayNumberText(value: number): string {
  const text = String(value);
  // Up to 15 characters cannot hold more than 15 digits; "e" means an exponent (1e21, 1e-7).
  if (text.length <= 15 && text.indexOf("e") < 0) return text;
  if (text.indexOf("e") < 0 && significantDigits(text) <= 15) return text;
  return excelNumberText(value);
}

/** Significant digits of a plain decimal text: sign, point and leading zeros do not count. */
function significantDigits(text: string): number {
  let digits = 0;
  let leading = true;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x30 || code > 0x39) continue; // "-" and "."
    if (leading && code === 0x30) continue;
    leading = false;
    digits++;
  }
  return digits;
}

export function numberCell(value: number): SheetCell {
  if (!Number.isFinite(value)) return { text: "", kind: "error", error: "#NUM!" };
  const cell: SheetCell = { text: displayNumberText(value), kind: "number", number: value };
  if (isLossyInteger(value)) cell.lossy = true;
  return cell;
}
