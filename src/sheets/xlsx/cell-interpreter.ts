/**
 * What a raw worksheet cell means: its `t` type, `<v>` text, formula flag and style turned into the
 * `SheetCell` the validator reads. Pure, no I/O.
 *
 * The rules are exceljs's (which this reader used before it scanned sheets itself), so every sheet reads
 * as it did, except where exceljs misread a cell:
 * - a formula whose cached result is an error (`t="e"`) keeps the error Excel shows (`#DIV/0!`), not a
 *   generic `#ERROR`; a formula's boolean result (`t="b"`) is a boolean, not the number 1 or 0;
 * - a date cell written as ISO text (`t="d"`, strict OOXML) is a date, not the number of its year;
 * - dates are told by `isDateFormat` for plain and formula cells alike;
 * - a whole number in a zero-padded format (`000000`) reads as the sheet shows it (`000123`).
 * Numbers are read with `parseFloat`, like exceljs, so any digits written reach the validator.
 */
import {
  dateText,
  excelSerialToDate,
  isDateFormat,
  numberCell,
  type PaddedIntegerFormat,
  paddedIntegerFormat,
  paddedIntegerText,
} from "../cell-value.js";
import type { SheetCell } from "../types.js";
import type { SharedStringLookup } from "./shared-strings.js";
import type { RawCell } from "./worksheet-scanner.js";

/** What interpreting a cell needs from the rest of the workbook. */
export interface CellContext {
  sharedStrings: SharedStringLookup;
  /** True when cell format (style) `index` shows a date or time. */
  isDateStyle(index: number): boolean;
  /** The workbook counts dates from 1904 (old Mac Excel). */
  date1904: boolean;
  /** The zero-padded integer format of cell format `index` (`000000`), if it has one. */
  paddedFormat?(index: number): PaddedIntegerFormat | undefined;
}

const FORMULA_NOT_CALCULATED: SheetCell = Object.freeze({
  text: "",
  kind: "error",
  error: "FORMULA_NOT_CALCULATED",
  formula: true,
}) as SheetCell;

/** Cell formats by index, with whether each shows a date; computed once per index. */
export function dateStyleTable(numFmtOf: (index: number) => string | undefined): (index: number) => boolean {
  const known = new Map<number, boolean>();
  return (index) => {
    let isDate = known.get(index);
    if (isDate === undefined) {
      isDate = index > 0 && isDateFormat(numFmtOf(index));
      known.set(index, isDate);
    }
    return isDate;
  };
}

/** What a cell's style says about its number: whether it is a date, and any zero padding it shows. */
export function cellFormatTable(
  numFmtOf: (index: number) => string | undefined,
): Pick<CellContext, "isDateStyle" | "paddedFormat"> {
  const padded = new Map<number, PaddedIntegerFormat | undefined>();
  return {
    isDateStyle: dateStyleTable(numFmtOf),
    paddedFormat: (index) => {
      if (!padded.has(index)) padded.set(index, paddedIntegerFormat(numFmtOf(index)));
      return padded.get(index);
    },
  };
}

/** The cell a raw cell holds; undefined for a cell without a value (Excel writes those for formatting). */
export function interpretCell(raw: RawCell, context: CellContext): SheetCell | undefined {
  const value = raw.value;
  if (raw.formula) return formulaCell(raw, context);
  if (value === undefined) return undefined;
  switch (raw.type) {
    case "s":
      return stringCell(context.sharedStrings.get(Number.parseInt(value, 10)));
    case "str":
    case "inlineStr":
      return stringCell(value);
    case "e":
      return { text: value, kind: "error", error: value };
    case "b":
      return booleanCell(value);
    case "d":
      return isoDateCell(value);
    default:
      return numericCell(Number.parseFloat(value), raw.style, context);
  }
}

function formulaCell(raw: RawCell, context: CellContext): SheetCell {
  const value = raw.value;
  // A formula nobody calculated (written by a library, never opened in Excel) has no cached result.
  if (value === undefined) return FORMULA_NOT_CALCULATED;
  let cell: SheetCell | undefined;
  switch (raw.type) {
    case "str":
    case "inlineStr":
      cell = stringCell(value);
      break;
    case "s":
      cell = stringCell(context.sharedStrings.get(Number.parseInt(value, 10)));
      break;
    case "e":
      cell = { text: value, kind: "error", error: value };
      break;
    case "b":
      cell = booleanCell(value);
      break;
    case "d":
      cell = isoDateCell(value);
      break;
    default: {
      const number = Number.parseFloat(value);
      cell = Number.isNaN(number)
        ? { text: "#ERROR", kind: "error", error: "#ERROR" }
        : numericCell(number, raw.style, context);
    }
  }
  return cell ? { ...cell, formula: true } : { text: "", kind: "empty", formula: true };
}

function stringCell(text: string | undefined): SheetCell | undefined {
  return text ? { text, kind: "string" } : undefined;
}

function booleanCell(value: string): SheetCell {
  // As exceljs: parseInt, so anything but a zero (even unreadable text) is TRUE.
  return Number.parseInt(value, 10) !== 0
    ? { text: "TRUE", kind: "boolean" }
    : { text: "FALSE", kind: "boolean" };
}

function numericCell(number: number, style: number, context: CellContext): SheetCell {
  if (style > 0 && context.isDateStyle(style)) {
    const date = excelSerialToDate(number, context.date1904);
    if (Number.isNaN(date.getTime())) return { text: "", kind: "error", error: "#VALUE!" };
    return { text: dateText(date), kind: "date" };
  }
  const cell = numberCell(number);
  // A zero-padded format (`000123` shown for 123): the text is what the sheet shows, so an id or a
  // reference keeps its zeros. The number itself (what amounts use) is unchanged.
  const padded = style > 0 ? context.paddedFormat?.(style) : undefined;
  if (padded && cell.kind === "number") {
    const text = paddedIntegerText(number, padded);
    if (text !== undefined) {
      cell.text = text;
      cell.padded = true;
    }
  }
  return cell;
}

const ISO_DATE =
  /^\s*(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?(?:Z|[+-]\d{2}:?\d{2})?\s*$/;

/** `t="d"`: an ISO 8601 date or date-time, read as the wall-clock time written (Excel has no zones). */
function isoDateCell(value: string): SheetCell {
  const match = ISO_DATE.exec(value);
  if (!match) return { text: "", kind: "error", error: "#VALUE!" };
  const [, year, month, day, hour = "0", minute = "0", second = "0", fraction = "0"] = match;
  const milliseconds = Math.round(Number(`0.${fraction}`) * 1000);
  const date = new Date(
    Date.UTC(
      Number(year),
      Number(month) - 1,
      Number(day),
      Number(hour),
      Number(minute),
      Number(second),
      milliseconds,
    ),
  );
  if (Number.isNaN(date.getTime()) || date.getUTCDate() !== Number(day)) {
    return { text: "", kind: "error", error: "#VALUE!" };
  }
  return { text: dateText(date), kind: "date" };
}
