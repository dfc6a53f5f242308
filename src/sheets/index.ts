/**
 * Reading payout sheets (CSV and XLSX) as streams of rows. `openSheet` is the entry point; the pure
 * helpers are exported for the validator, the template writer and tests.
 */
export { dateText, excelSerialToDate, isDateFormat } from "./cell-value.js";
export type { CsvDelimiter, CsvEncoding, EncodingSniff } from "./csv/index.js";
export { detectDelimiter, parseSepLine, sniffEncoding } from "./csv/index.js";
export type { HeaderNames, SheetColumnName } from "./header.js";
export { canonicalColumn, findHeader, HEADER_SEARCH_ROWS, SHEET_COLUMNS } from "./header.js";
export { type IsolatedReadOptions, readSheetIsolated, SheetReadAborted } from "./isolated-read.js";
export {
  configureSheetLimits,
  DEFAULT_SHEET_LIMITS,
  LIMIT_SETTING,
  type SheetLimits,
  sheetLimits,
} from "./limits.js";
export type { SheetFormat } from "./open-sheet.js";
export { openSheet, sheetFormatOf } from "./open-sheet.js";
export type {
  OpenedSheet,
  OpenSheetOptions,
  SheetCell,
  SheetCellKind,
  SheetColumn,
  SheetHeader,
  SheetReadErrorCode,
  SheetRow,
} from "./types.js";
export { columnLetter, SheetReadError } from "./types.js";
export { xlsxFirstRows } from "./xlsx-reader.js";
