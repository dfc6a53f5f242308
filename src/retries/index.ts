/** Public face of operator retries: choosing the rows, and starting their new attempt. */

export { type RetriedRow, type RetryRowsOptions, type RetryRowsResult, retryRows } from "./retry-rows.js";
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
