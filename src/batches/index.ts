/** Public face of batches: the Redis records of batches and rows, submission and recovery. */
export {
  ANSWER_MISMATCH,
  AnswerMismatchError,
  adoptPayment,
  answerMismatches,
  isLivePayment,
  livePaymentOfAttempts,
  REFERENCE_REUSED,
  referenceReusedMessage,
  rowIdempotencyKey,
  type SentPayment,
} from "./adopt-payment.js";
export {
  BatchFeeder,
  FEED_LOCK_WAIT_MS,
  FEED_WINDOW,
  jobsFor,
  type RowEnqueuer,
  type RowJobRequest,
  type TopUpOptions,
} from "./batch-feeder.js";
export {
  BatchStore,
  type BatchStoreOptions,
  type ExpectableField,
  type InvalidRowRecord,
  ROW_CHUNK,
  type RowChange,
  type RowChangeOutcome,
  type RowChangeResult,
  type RowFieldChanges,
  type SendFence,
  type SendFenceOutcome,
} from "./batch-store.js";
export {
  type ArchivedBatch,
  type ArchiveEntry,
  ArchiveFormatError,
  type ArchiveTally,
  appendCorrection,
  archivedBatchForFile,
  archiveEntries,
  archivePathFor,
  archiveStagedRows,
  RowStaging,
  readInstructionArchive,
  recordArchivedFile,
  type StagedRows,
  writeInstructionArchive,
} from "./instruction-archive.js";
export { type RecoverBatchOptions, type RecoverBatchResult, recoverBatch } from "./recover-batch.js";
export { DEFAULT_KEY_PREFIX, type RedisLayout, redisLayout } from "./redis-layout.js";
export { APPROVAL_EXPIRED, APPROVAL_REJECTED } from "./row-codes.js";
export { normalisedPaymentTime } from "./row-fields.js";
export {
  amountNeedle,
  decodeScanCursor,
  encodeScanCursor,
  REQUEST_BUDGET,
  type RowQuery,
  rowsOfPage,
  type ScanCursor,
  type ScanPage,
  scanRows,
} from "./row-scan.js";
export {
  canFollowPayment,
  canTransition,
  GIVE_UP_ROW_STATES,
  isRowState,
  isTerminalRowState,
  PAYMENT_ROW_STATES,
  RETRYABLE_ROW_STATES,
  type ResultState,
  ROW_STATES,
  type RowState,
  resultStatusOf,
  rowStateFollowing,
  rowStateForPayment,
  TERMINAL_ROW_STATES,
} from "./row-state.js";
export { decodeStaticRow, encodeStaticRow, type StaticRow, staticRowNumber } from "./static-row.js";
export {
  DuplicateFileError,
  enqueueQueuedRows,
  GENERATED_BATCH_ID_SOURCE,
  newBatchId,
  resumeBatch,
  resumeIncompleteBatches,
  type SubmissionGate,
  type SubmitBatchOptions,
  type SubmitBatchResult,
  submitBatch,
} from "./submit-batch.js";
export type {
  AuditedRow,
  BatchProgress,
  BatchRecord,
  InvalidRowInput,
  InvalidRowProblem,
  LedgerCheck,
  RowHead,
  RowHistoryEntry,
  RowOutcome,
  RowRecord,
  SheetLayout,
  SourceValues,
  StoredFxQuote,
  SubmittedInstruction,
} from "./types.js";
