/**
 * How much of a file we are willing to read. A payout sheet comes from outside (a mail attachment
 * dropped into the inbox), so every reader stops at these bounds instead of growing without end: a
 * 3 MB zip can inflate to gigabytes of XML, one shared string can hold a gigabyte of text, a DTD can
 * define entities that expand exponentially. A file past a bound is refused (LIMIT_EXCEEDED, or
 * FILE_UNSAFE for a DTD) with the bound's setting named, never retried.
 *
 * The defaults are far above what a real payout sheet needs (Excel itself stops at 32,767 characters a
 * cell and 1,048,576 rows a sheet); the settings are the environment variables listed with each field,
 * read in `src/config/` and applied once per process with `configureSheetLimits`.
 */
import { SheetReadError } from "./types.js";

export interface SheetLimits {
  /** `SHEET_MAX_FILE_MB`: the file on disk (CSV or XLSX). @defaultValue 256 MiB */
  maxFileBytes: number;
  /**
   * `SHEET_MAX_PART_MB`: one XLSX part (a worksheet, the shared strings) after inflating.
   * @defaultValue 1024 MiB
   */
  maxPartBytes: number;
  /**
   * `SHEET_MAX_SMALL_PART_MB`: the workbook's small parts (workbook.xml, its relationships, styles)
   * after inflating; they are read whole. @defaultValue 16 MiB
   */
  maxSmallPartBytes: number;
  /**
   * `SHEET_MAX_INFLATE_RATIO`: inflated bytes per compressed byte of one part, checked once a part has
   * inflated past 8 MiB. Spreadsheet XML compresses 5 to 30 times; a zip bomb thousands of times.
   * @defaultValue 200
   */
  maxInflateRatio: number;
  /**
   * `SHEET_MAX_CELL_CHARS`: one cell or shared string, in characters (Excel's own limit is 32,767).
   * @defaultValue 32767
   */
  maxCellChars: number;
  /**
   * `SHEET_MAX_ROW_CHARS`: one CSV record (a line, or several with quoted line breaks), or the XML of
   * one XLSX row or shared string, in characters. @defaultValue 8 Mi characters
   */
  maxRowChars: number;
  /** `SHEET_READ_TIMEOUT_MS`: reading the whole file. @defaultValue 300000 (5 minutes) */
  readTimeoutMs: number;
  /**
   * `SHEET_READ_MAX_MEMORY_MB`: heap of the thread that checks a sheet taken from the watched folder
   * or a nightly run (see `readSheetIsolated` in isolated-read.ts). @defaultValue 1024
   */
  readMaxMemoryMb: number;
}

const MiB = 1024 * 1024;

export const DEFAULT_SHEET_LIMITS: Readonly<SheetLimits> = Object.freeze({
  maxFileBytes: 256 * MiB,
  maxPartBytes: 1024 * MiB,
  maxSmallPartBytes: 16 * MiB,
  maxInflateRatio: 200,
  maxCellChars: 32_767,
  maxRowChars: 8 * MiB,
  readTimeoutMs: 300_000,
  readMaxMemoryMb: 1024,
});

/** Inflated bytes after which the ratio to the compressed size is checked (small parts may be sparse). */
export const RATIO_CHECK_AFTER_BYTES = 8 * MiB;

/** The setting (environment variable) behind each limit, for messages. */
export const LIMIT_SETTING: Readonly<Record<keyof SheetLimits, string>> = Object.freeze({
  maxFileBytes: "SHEET_MAX_FILE_MB",
  maxPartBytes: "SHEET_MAX_PART_MB",
  maxSmallPartBytes: "SHEET_MAX_SMALL_PART_MB",
  maxInflateRatio: "SHEET_MAX_INFLATE_RATIO",
  maxCellChars: "SHEET_MAX_CELL_CHARS",
  maxRowChars: "SHEET_MAX_ROW_CHARS",
  readTimeoutMs: "SHEET_READ_TIMEOUT_MS",
  readMaxMemoryMb: "SHEET_READ_MAX_MEMORY_MB",
});

let processLimits: SheetLimits = { ...DEFAULT_SHEET_LIMITS };

/**
 * Sets the limits every reader of this process uses unless told otherwise (the CLI calls it once with
 * the validated settings). Unset fields keep their defaults.
 */
export function configureSheetLimits(limits: Partial<SheetLimits>): void {
  processLimits = { ...DEFAULT_SHEET_LIMITS, ...definedOnly(limits) };
}

/** The process's limits, with `overrides` on top. */
export function sheetLimits(overrides: Partial<SheetLimits> = {}): SheetLimits {
  return { ...processLimits, ...definedOnly(overrides) };
}

function definedOnly(limits: Partial<SheetLimits>): Partial<SheetLimits> {
  return Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined));
}

/** `1024 MiB`, `32767 characters`: a limit as a person reads it. */
function bytesText(bytes: number): string {
  return bytes >= MiB ? `${+(bytes / MiB).toFixed(1)} MiB` : `${bytes} bytes`;
}

/**
 * The error for a file past a limit: what, which limit (its setting), and what to do. `what` names the
 * part or row ("xl/worksheets/sheet1.xml inflates to", "row 12 is").
 */
export function limitExceeded<K extends keyof SheetLimits>(
  limit: K,
  what: string,
  limits: Pick<SheetLimits, K>,
): SheetReadError {
  const value = limits[limit] as number;
  const bound =
    limit === "maxInflateRatio"
      ? `${value} times its compressed size`
      : limit === "maxCellChars" || limit === "maxRowChars"
        ? `${value} characters`
        : limit === "readTimeoutMs"
          ? `${value / 1000} s`
          : limit === "readMaxMemoryMb"
            ? `${value} MiB of memory`
            : bytesText(value);
  return new SheetReadError(
    "LIMIT_EXCEEDED",
    `${what} more than ${bound} (limit ${LIMIT_SETTING[limit]}); the file was refused unread. ` +
      "Check that it is the payout sheet you meant (split a very large sheet into several files), " +
      `or raise ${LIMIT_SETTING[limit]} if you trust it`,
  );
}

/** A deadline for reading one file: `check()` throws LIMIT_EXCEEDED once it has passed. */
export class ReadDeadline {
  private readonly at: number;

  constructor(private readonly limits: SheetLimits) {
    this.at = Date.now() + limits.readTimeoutMs;
  }

  check(): void {
    if (Date.now() > this.at) throw limitExceeded("readTimeoutMs", "reading the file took", this.limits);
  }
}

/** A DTD in a part: refused, since a sheet never needs one and its entities can expand without end. */
export function dtdRefused(part: string): SheetReadError {
  return new SheetReadError(
    "FILE_UNSAFE",
    `${part} holds a document type declaration (<!DOCTYPE or <!ENTITY), which spreadsheet programs never ` +
      "write and which can hide an entity bomb; the file was refused unread. Open it in Excel or LibreOffice " +
      "and save it again as .xlsx",
  );
}

const DTD = /<!(?:DOCTYPE|ENTITY)/i;

/**
 * Watches decoded XML text, chunk after chunk, for a DTD. "!" is rare in sheet XML, so most chunks cost
 * one memchr; the last characters of each chunk are kept so a declaration split between chunks is seen.
 */
export class DtdGuard {
  private tail = "";

  constructor(private readonly part: string) {}

  check(chunk: string): void {
    if (chunk.indexOf("!") < 0 && this.tail.indexOf("!") < 0) {
      this.tail = chunk.slice(-8);
      return;
    }
    if (DTD.test(this.tail + chunk)) throw dtdRefused(this.part);
    this.tail = chunk.slice(-8);
  }
}
