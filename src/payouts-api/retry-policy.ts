/**
 * THE retry policy of payouts, in one module: when a failure is tried again, how often, how long apart,
 * for both layers that retry.
 *
 * 1. **An HTTP call** ({@link RetryOptions}): the client sends the same request again, with the same
 *    Idempotency-Key and the same body bytes, so a retry is safe whenever the service may not have
 *    completed it: transport failures, time-outs, 429, 5xx and 409 `IDEMPOTENCY_KEY_IN_PROGRESS`
 *    (the first try is still running there). Any other 4xx is the request's own fault and final.
 *    The batch-finished notification (src/notify) retries its POST with the same backoff.
 * 2. **A job** ({@link JobRetrySettings}): a BullMQ job whose call still failed after the client's
 *    own tries runs again later, up to its attempts, with exponential backoff: the payment job
 *    (src/pipeline) and the reconcile job (src/reconcile).
 *
 * Which failure is which is decided once, by {@link classifyFailure}; `isFinalError`, `isFinalForRow`
 * and the payment job's give-up rule (`endsRowOnLastTry`) are read off that classification. A job
 * that stalled too often is recognised by BullMQ's own signal (`job.deferredFailure`, see
 * `isJobGivenUp` in src/pipeline/payment-worker.ts), never by matching error text.
 *
 * Every setting is documented once, here, with its default.
 */
import { PayoutsApiConnectionError, PayoutsApiError } from "./errors.js";

/** Layer 1: the retries of one HTTP call. */
export interface RetryOptions {
  /** Total tries including the first. Default 4. 1 disables retries. */
  maxAttempts: number;
  /** Backoff ceiling of the first retry; doubles on each further retry. Default 250 ms. */
  baseDelayMs: number;
  /** Cap of the exponential backoff. Default 10 000 ms. */
  maxDelayMs: number;
  /**
   * Longest `Retry-After` the client waits out itself. A longer one ends the retries and the error
   * (which carries `retryAfterMs`) goes to the caller, e.g. a queue worker that can pause. Default 60 000 ms.
   */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_OPTIONS: Readonly<RetryOptions> = {
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 60_000,
};

/**
 * Layer 1 for the payment worker's client: two quick tries, then the job's retries (same key, same
 * body) take over, so a row's job never sits long inside one HTTP call. A `Retry-After` is never
 * waited out inside the call: the queue pauses instead (src/pipeline/payment-worker.ts).
 */
export const WORKER_CLIENT_RETRY: Readonly<RetryOptions> = {
  maxAttempts: 2,
  baseDelayMs: 100,
  maxDelayMs: 1_000,
  maxRetryAfterMs: 0,
};

/**
 * Layer 1 for the batch-finished and awaiting-approval notifications (NOTIFY_URL): a receiver that is
 * down for a minute still gets them. Any non-2xx answer or connection failure is retried: the
 * receiver dedupes on the notification id, so a second delivery is harmless.
 */
export const DEFAULT_NOTIFY_RETRY_OPTIONS: Readonly<RetryOptions> = {
  maxAttempts: 5,
  baseDelayMs: 1_000,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 60_000,
};

/** Layer 2: the retries of a queue job whose call still failed after the client's own tries. */
export interface JobRetrySettings {
  /**
   * Tries per job, the first included. Default 8. After the last, a payment row whose outcome is
   * unknown becomes `error` ({@link endsRowOnLastTry}); a reconcile job is left to the next sweep.
   */
  attempts: number;
  /** Wait before the job's first retry, ms; doubles on each further retry (BullMQ's exponential). Default 1000. */
  backoffMs: number;
}

/** Payment jobs (src/pipeline) and reconcile jobs (src/reconcile) share these. */
export const DEFAULT_JOB_RETRY_SETTINGS: Readonly<JobRetrySettings> = { attempts: 8, backoffMs: 1_000 };

/** The BullMQ job options of {@link JobRetrySettings} (structurally BullMQ's `attempts` and `backoff`). */
export function jobRetryOptions(settings: JobRetrySettings): {
  attempts: number;
  backoff: { type: "exponential"; delay: number };
} {
  return { attempts: settings.attempts, backoff: { type: "exponential", delay: settings.backoffMs } };
}

export type RetryReason =
  | "transport"
  | "timeout"
  | "rate-limited"
  | "server-error"
  | "idempotency-key-in-progress";

export type RetryDecision =
  | { retry: true; delayMs: number; reason: RetryReason }
  | {
      retry: false;
      reason: "not-retryable" | "attempts-exhausted" | "retry-after-too-long";
    };

/**
 * What a failed call to the service means: THE classification every retry rule is derived from
 * (the client's own retries here, `isFinalError`, the payment job's `isFinalForRow` and its give-up
 * rule `endsRowOnLastTry`, both used by pipeline/payment-processor.ts).
 *
 * - `transient`: the same request may succeed if sent again (connection reset or refused, time-out,
 *   5xx, 409 `IDEMPOTENCY_KEY_IN_PROGRESS`). Retried with the same key and body.
 * - `rate-limited`: 429. Retried after the wait the service asked for; a queue pauses instead, and the
 *   wait never uses up one of a job's tries.
 * - `shutdown`: our own `close()` or abort cut the call (`CLIENT_CLOSED`, `ABORTED`). Nothing is known
 *   about the request; the job is handed back to run again under the same key, never marked.
 * - `outcome-unknown`: final by status, yet not the row's fault and the payment may exist: an unknown
 *   API key (401), an answer we could not read (`INVALID_RESPONSE`), a duplicate `externalId` whose
 *   payment the look-up did not show yet, a connection failure that is not transient. A job retries
 *   these; on its last try the row becomes `error` ("we do not know"), never `rejected`.
 * - `row`: any other 4xx: the request itself is wrong. Final for this attempt: the row is `rejected`.
 */
export type FailureKind = "transient" | "rate-limited" | "shutdown" | "outcome-unknown" | "row";

/** Our own close or abort of the client: the request's fate is unknown, and nobody's fault. */
const SHUTDOWN_CODES: ReadonlySet<string> = new Set(["CLIENT_CLOSED", "ABORTED"]);

/** The {@link FailureKind} of an error from the client; anything that is not an API error is `transient`. */
export function classifyFailure(error: unknown): FailureKind {
  if (error instanceof PayoutsApiConnectionError) {
    if (SHUTDOWN_CODES.has(error.code)) return "shutdown";
    return error.transient ? "transient" : "outcome-unknown";
  }
  if (!(error instanceof PayoutsApiError)) return "transient";
  if (error.code === "INVALID_RESPONSE") return "outcome-unknown";
  if (error.status === 429) return "rate-limited";
  if (error.status >= 500) return "transient";
  if (error.status === 409 && error.code === "IDEMPOTENCY_KEY_IN_PROGRESS") return "transient";
  if (error.status === 401) return "outcome-unknown";
  // The service says a payment with our externalId exists but the look-up did not show it yet: it may
  // be our own, still committing. Rejecting would hide a payment that exists.
  if (error.code === "DUPLICATE_EXTERNAL_ID") return "outcome-unknown";
  if (error.status >= 400 && error.status < 500) return "row";
  return "outcome-unknown";
}

/** True for a 429 answer. */
export function isRateLimited(err: unknown): err is PayoutsApiError {
  return err instanceof PayoutsApiError && classifyFailure(err) === "rate-limited";
}

/**
 * True when sending the same request again cannot help: a 4xx the request caused, a response that
 * does not match the wire types, or a connection failure that is not transient (our own close
 * included). Transport failures, 429, 5xx and `IDEMPOTENCY_KEY_IN_PROGRESS` are not final.
 */
export function isFinalError(err: unknown): boolean {
  if (!(err instanceof PayoutsApiError)) return false;
  const kind = classifyFailure(err);
  return kind !== "transient" && kind !== "rate-limited";
}

/** True when the failure is the row's own fault: final for this attempt, the row is `rejected`. */
export function isFinalForRow(err: unknown): boolean {
  return err instanceof PayoutsApiError && classifyFailure(err) === "row";
}

/**
 * The payment job's give-up rule: on its last try, a failure of these kinds marks the row `error`
 * (outcome unknown). A 429 never ends a row (it uses no try); a shutdown hands the job back.
 */
export function endsRowOnLastTry(err: unknown): boolean {
  const kind = classifyFailure(err);
  return kind === "transient" || kind === "outcome-unknown";
}

/** Why an error may be retried, or undefined when it must not be. */
export function retryReasonOf(error: unknown): RetryReason | undefined {
  if (!(error instanceof PayoutsApiError)) return undefined;
  const kind = classifyFailure(error);
  if (kind === "rate-limited") return "rate-limited";
  if (kind !== "transient") return undefined;
  if (error instanceof PayoutsApiConnectionError) return error.timedOut ? "timeout" : "transport";
  if (error.status >= 500) return "server-error";
  return "idempotency-key-in-progress";
}

/** Added to a request's worst-case lifetime before its outcome counts as settled (clock skew, queues). */
export const REQUEST_WINDOW_MARGIN_MS = 5_000;

/**
 * How long after a call starts its request may still reach the service: every try's time-out, the
 * backoff between tries, and a margin. An `error` row gets no new attempt before this has passed
 * since its last send: until then, a request of the earlier attempt may still pay.
 */
export function requestWindowMs(
  timeoutMs: number,
  retry: Pick<RetryOptions, "maxAttempts" | "maxDelayMs" | "maxRetryAfterMs">,
): number {
  // Between two tries the client waits its backoff, or a `Retry-After` up to maxRetryAfterMs.
  const gapMs = Math.max(retry.maxDelayMs, retry.maxRetryAfterMs);
  return timeoutMs * retry.maxAttempts + gapMs * (retry.maxAttempts - 1) + REQUEST_WINDOW_MARGIN_MS;
}

/** Full-jitter backoff: uniform in [0, min(maxDelayMs, baseDelayMs * 2^(retryNumber-1))). */
export function backoffDelayMs(retryNumber: number, options: RetryOptions, random: () => number): number {
  const ceiling = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.max(0, retryNumber - 1));
  return Math.floor(random() * ceiling);
}

/**
 * Decides whether to send the request again after `attemptsMade` tries (1 after the first) ended in
 * `error`. When the service sent `Retry-After`, exactly that wait is used (no jitter: the service asked
 * for it); otherwise capped exponential backoff with full jitter. `random` returns [0, 1).
 */
export function decideRetry(
  error: unknown,
  attemptsMade: number,
  options: RetryOptions = DEFAULT_RETRY_OPTIONS,
  random: () => number = Math.random,
): RetryDecision {
  const reason = retryReasonOf(error);
  if (reason === undefined) return { retry: false, reason: "not-retryable" };
  if (attemptsMade >= options.maxAttempts) return { retry: false, reason: "attempts-exhausted" };
  const retryAfterMs = error instanceof PayoutsApiError ? error.retryAfterMs : undefined;
  if (retryAfterMs !== undefined) {
    if (retryAfterMs > options.maxRetryAfterMs) return { retry: false, reason: "retry-after-too-long" };
    return { retry: true, delayMs: retryAfterMs, reason };
  }
  return { retry: true, delayMs: backoffDelayMs(attemptsMade, options, random), reason };
}
