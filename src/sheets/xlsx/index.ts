/**
 * The XLSX part scanners behind `../xlsx-reader.ts`: streaming, allocation-light readers of the big
 * parts (worksheets, shared strings), the cell rules, and zip entry reading. Internal to `src/sheets`.
 */
export { type CellContext, dateStyleTable, interpretCell } from "./cell-interpreter.js";
export { type SharedStringLookup, SharedStrings, SharedStringsParser } from "./shared-strings.js";
export { type RawCell, type RawRow, WorksheetScanner } from "./worksheet-scanner.js";
export { openZipEntry, type ZipEntryLocation } from "./zip-entry.js";
