/**
 * The XLSX part scanners behind `../xlsx-reader.ts`: streaming, allocation-light readers of the big
 * parts (worksheets, shared strings), readers of the small parts (workbook, relationships, styles), the
 * cell rules, and the zip container. Internal to `src/sheets`.
 */
export { type CellContext, cellFormatTable, interpretCell } from "./cell-interpreter.js";
export { type SharedStringLookup, SharedStrings, SharedStringsParser } from "./shared-strings.js";
export { parseCellFormats, parseRelationships, parseWorkbook } from "./workbook-parts.js";
export { type RawCell, type RawRow, WorksheetScanner } from "./worksheet-scanner.js";
export { type PartKind, ZipArchive, type ZipPart } from "./zip-archive.js";
