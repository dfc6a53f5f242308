/**
 * Public face of results: the batch's result file (docs/operating.md "The result file") as a pure table,
 * written atomically to `DATA_DIR/outbox/`, kept current by the outbox, served by the HTTP route and
 * `payouts result`.
 */
export {
  createResultFiles,
  DEFAULT_RESULT_MAX_AGE_MS,
  type ResultFiles,
  type ResultFilesOptions,
} from "./result-files.js";
export {
  createResultOutbox,
  DEFAULT_OUTBOX_DEBOUNCE_MS,
  REFRESH_FACTOR,
  type ResultOutbox,
  type ResultOutboxOptions,
  WRITE_SPACING,
} from "./result-outbox.js";
export {
  APPROVALS_COLUMN,
  buildResultTable,
  FALLBACK_SOURCE_COLUMNS,
  RESULT_COLUMNS,
  type ResultBatch,
  type ResultColumn,
  resultColumns,
  resultNumberFormats,
  resultRowOfInvalid,
  resultRowOfRow,
  resultTableRows,
  statusColumnIndex,
  usdFromMinor,
} from "./result-table.js";
export {
  defaultResultPath,
  RESULT_FORMATS,
  type ResultFormat,
  rowsInSheetOrder,
  UnknownBatchError,
  type WriteResultOptions,
  type WrittenResult,
  writeResultFile,
} from "./write-result.js";
