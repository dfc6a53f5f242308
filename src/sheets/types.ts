/**
 * The glossary of sheet reading: what a reader hands to the validator. One file so the shapes are read
 * in one place.
 */

import { PayoutsError } from "../errors/index.js";
import type { AmountConvention } from "../money/index.js";
import type { SheetLimits } from "./limits.js";

/** What a cell held, after normalising the many shapes CSV text and XLSX values come in. */
export type SheetCellKind = "string" | "number" | "date" | "boolean" | "error" | "empty";

export interface SheetCell {
  /**
   * The cell as the user sees it: strings verbatim (not trimmed), numbers at Excel's 15 significant
   * digits without exponent, dates as ISO `YYYY-MM-DD` (or `YYYY-MM-DDTHH:MM:SS` with a time of day),
   * booleans `TRUE`/`FALSE`, errors as Excel shows them (`#REF!`), empty as "".
   */
  text: string;
  kind: SheetCellKind;
  /** The raw number of a number cell (XLSX only; CSV cells are always strings). */
  number?: number;
  /**
   * A number cell holding an integer of more than 15 digits (a 16–19 digit id typed into a General cell):
   * Excel already replaced its last digits with zeros, so the value must be refused, never used.
   */
  lossy?: true;
  /**
   * A number cell whose `text` is the number as its zero-padded format shows it (`000123` for 123,
   * `INV-0042`): where the sheet's own value is kept (the result file's copy of the row), it is that
   * text, not the bare number, so a reference keeps its zeros there too.
   */
  padded?: true;
  /** Why an error cell failed: the Excel error (`#REF!`) or `FORMULA_NOT_CALCULATED`. */
  error?: string;
  /** The cell holds a formula; `kind` and `text` describe its cached result. */
  formula?: true;
  /**
   * The cell lies inside a merged range (`B5:B7`) but is not its top-left cell. It is left empty, never
   * filled from the top-left cell: filling an amount or reference into several rows would pay it twice.
   */
  mergedInto?: string;
}

export interface SheetColumn {
  /** 0-based position in the sheet. */
  index: number;
  /** Column letter as the spreadsheet shows it: A, B, ..., AA. */
  letter: string;
  /** Header text as written in the sheet. */
  original: string;
  /** Our column name ("amount", "metadata.cost_center") or null for a column we do not use. */
  canonical: string | null;
  /** Key of this column in `SheetRow.cells`: the canonical name, else the original header (made unique). */
  key: string;
}

export interface SheetHeader {
  columns: SheetColumn[];
  /** Row number of the header row as the user sees it (title rows above it count). */
  headerRowNumber: number;
  sheetName?: string;
  format: "csv" | "xlsx";
  /** CSV only: the delimiter found on the header line. */
  delimiter?: string;
  /** "utf-8", "utf-8-bom", "utf-16le", "utf-16be" or "windows-1252" for CSV; "xlsx" for workbooks. */
  encoding: string;
  /**
   * How text amounts in this sheet write their decimal mark, decided over the whole amount column before
   * the first row is handed out (pass it to `parseAmount`). Numeric cells do not depend on it.
   */
  amountConvention: AmountConvention;
}

export interface SheetRow {
  /**
   * The row number the user sees: 1-based, counting title rows and blank lines; in a CSV, the physical
   * line the record starts on (a quoted field with line breaks makes a record span several lines).
   */
  rowNumber: number;
  /** One cell per header column, keyed by `SheetColumn.key`; missing cells are `{ kind: "empty" }`. */
  cells: Record<string, SheetCell>;
  /** Non-empty cells to the right of the last header column, keyed by column letter. */
  unheaded?: Record<string, SheetCell>;
}

export interface OpenedSheet {
  header: SheetHeader;
  /** Data rows below the header, streamed: blank rows are skipped (their numbers still count). */
  rows: AsyncIterable<SheetRow>;
}

export interface OpenSheetOptions {
  /** XLSX: read this worksheet (by name, case-insensitive) instead of the first one with our header. */
  sheet?: string;
  /** Bounds on what is read, over the process's (see `configureSheetLimits`). */
  limits?: Partial<SheetLimits>;
  /**
   * XLSX: header texts of the sheet read as our column names (a column mapping), so a header row
   * that names none of our columns is found where it is, title rows above it kept.
   */
  headerNames?: Readonly<Record<string, string>>;
}

export type SheetReadErrorCode =
  | "UNSUPPORTED_FORMAT"
  | "ENCODING_UNSUPPORTED"
  | "HEADER_NOT_FOUND"
  | "DUPLICATE_COLUMN"
  | "SHEET_NOT_FOUND"
  | "EMPTY_FILE"
  | "FILE_CORRUPT"
  | "FILE_NOT_FOUND"
  /** The file is past one of the reading limits (size, inflate ratio, cell or row length, time). */
  | "LIMIT_EXCEEDED"
  /** The file holds what no spreadsheet writes and a parser must never expand (a DTD). */
  | "FILE_UNSAFE";

/** The file cannot be read at all; nothing in it may be processed. The message says what to do. */
export class SheetReadError extends PayoutsError {
  override readonly name = "SheetReadError";

  constructor(
    override readonly code: SheetReadErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, { kind: "invalid-input", cause: options?.cause });
  }

  /** The same error with the file's name in front of its message. */
  inFile(fileName: string): SheetReadError {
    return new SheetReadError(this.code, `${fileName}: ${this.message}`, { cause: this.cause });
  }
}

export const EMPTY_CELL: SheetCell = Object.freeze({ text: "", kind: "empty" }) as SheetCell;

/** Spreadsheet column letter of a 0-based index: 0 → A, 25 → Z, 26 → AA. */
export function columnLetter(index: number): string {
  let n = index + 1;
  let letters = "";
  while (n > 0) {
    const rem = (n - 1) % 26;
    letters = String.fromCharCode(65 + rem) + letters;
    n = Math.floor((n - 1) / 26);
  }
  return letters;
}
