/**
 * Safe file output: atomic writes, formula-safe cell text, and CSV/XLSX/JSON table writers.
 * Used by validation reports, result files and templates.
 */
export {
  type AtomicWriteOptions,
  removeStaleTempFiles,
  type StreamProducer,
  writeFileAtomic,
  writeFileAtomicPatiently,
} from "./atomic-write.js";
export { type CellValue, CRLF, csvField, csvRecord, UTF8_BOM } from "./csv-encode.js";
export { excelSafeText, FORMULA_TRIGGERS, undoExcelSafeText } from "./excel-safe.js";
export { loadExcel } from "./load-excel.js";
export { formatFromPath, safeSheetName, TABLE_FORMATS, type TableFormat } from "./table-format.js";
export {
  type TableRow,
  type TableRows,
  type TableSpec,
  type TableWriteSummary,
  writeTable,
} from "./write-table.js";
