/** Public face of the Partner Payouts Service client. Import from here, not from the files behind it. */
export {
  createPayoutsClient,
  DEFAULT_TIMEOUT_MS,
  type PayoutsClient,
  type PayoutsClientOptions,
} from "./client.js";
export {
  CONNECTION_ERROR_TYPE,
  errorFromResponse,
  isTransportRetryable,
  PayoutsApiAuthenticationError,
  PayoutsApiAuthorizationError,
  PayoutsApiConflictError,
  PayoutsApiConnectionError,
  PayoutsApiError,
  type PayoutsApiErrorInit,
  PayoutsApiInternalError,
  PayoutsApiInvalidRequestError,
  PayoutsApiNotFoundError,
  PayoutsApiRateLimitError,
  PayoutsApiServiceUnavailableError,
  type PayoutsErrorType,
  parseRetryAfter,
  RETRYABLE_TRANSPORT_CODES,
} from "./errors.js";
export { pages, paginate } from "./pagination.js";
export { type ListQuery, toQueryString } from "./query.js";
export type { AttemptInfo, HttpMethod, RequestHooks } from "./request.js";
export type { PaymentCreateOptions } from "./resources/payments.js";
export type { ReadOptions, WriteOptions } from "./resources/resource-context.js";
export {
  backoffDelayMs,
  classifyFailure,
  DEFAULT_JOB_RETRY_SETTINGS,
  DEFAULT_NOTIFY_RETRY_OPTIONS,
  DEFAULT_RETRY_OPTIONS,
  decideRetry,
  endsRowOnLastTry,
  type FailureKind,
  isFinalError,
  isFinalForRow,
  isRateLimited,
  type JobRetrySettings,
  jobRetryOptions,
  REQUEST_WINDOW_MARGIN_MS,
  type RetryDecision,
  type RetryOptions,
  type RetryReason,
  requestWindowMs,
  retryReasonOf,
  WORKER_CLIENT_RETRY,
} from "./retry-policy.js";
export {
  createSharedRateLimiter,
  type RequestLimiter,
  type SharedRateLimiter,
  type SharedRateLimiterOptions,
} from "./shared-rate-limit.js";
export * from "./wire-types.js";
