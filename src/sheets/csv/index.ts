/**
 * The CSV reader behind `../open-sheet.ts`: encoding sniffing, the delimiter and Excel's `sep=` line,
 * and the streaming reader with its two passes. Internal to `src/sheets` (and its tests).
 */
export {
  type CsvRecord,
  type CsvScan,
  csvRecords,
  openCsv,
  scanCsvRecords,
  scanPlainCsv,
  toRow,
} from "./csv-reader.js";
export type { CsvDelimiter } from "./delimiter.js";
export { detectDelimiter, parseSepLine } from "./delimiter.js";
export type { CsvEncoding, EncodingSniff } from "./encoding.js";
export { firstUnfitWindows1252Byte, sniffEncoding } from "./encoding.js";
