/**
 * Public face of operator retries: choosing the rows, starting their new attempt, and the corrected
 * result file dropped back into the inbox.
 */

export {
  CORRECTABLE_FIELDS,
  type CorrectableField,
  type CorrectRowOptions,
  type CorrectRowOutcome,
  correctRow,
} from "./correct-row.js";
export {
  batchIdCandidates,
  changedColumnsOf,
  type DroppedRow,
  isResultFileHeader,
  layoutMismatch,
  type PlanInput,
  type PlannedBatchRow,
  planResultFileRetry,
  type RowDecision,
  resultColumnCount,
} from "./result-file-plan.js";
export {
  type ChangedField,
  type Correction,
  type CorrectionAdmission,
  type CorrectionVerdict,
  isResultFile,
  type ResultFileRetryOptions,
  type ResultFileRetryOutcome,
  type ResultFileRowOutcome,
  reportText,
  retryFromResultFile,
} from "./result-file-retry.js";
export {
  type AdoptedRow,
  adoptedReason,
  type RetriedRow,
  type RetryRowsOptions,
  type RetryRowsResult,
  retryRows,
} from "./retry-rows.js";
export {
  type LeftAlone,
  MAX_ROWS_IN_SPEC,
  parseRowSpec,
  planRetry,
  type RetryCandidate,
  type RetryPlan,
  RowSpecError,
  whyNotRetryable,
} from "./row-selection.js";
export { type AttemptStart, type LedgerApi, type StartAttemptInput, startAttempt } from "./start-attempt.js";
