/**
 * THE retry rule of the Payouts client, as one pure function. Every try of a request carries the same
 * Idempotency-Key and the same body bytes, so sending it again is safe whenever the service may not
 * have completed it: transport failures, timeouts, 429, 5xx and 409 `IDEMPOTENCY_KEY_IN_PROGRESS`
 * (the first try is still running there). Any other 4xx is the request's own fault and final.
 */
import { PayoutsApiConnectionError, PayoutsApiError } from "./errors.js";

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

/** Why an error may be retried, or undefined when it must not be. */
export function retryReasonOf(error: unknown): RetryReason | undefined {
  if (error instanceof PayoutsApiConnectionError) {
    if (!error.transient) return undefined;
    return error.timedOut ? "timeout" : "transport";
  }
  if (!(error instanceof PayoutsApiError)) return undefined;
  if (error.code === "INVALID_RESPONSE") return undefined;
  if (error.status === 429) return "rate-limited";
  if (error.status >= 500) return "server-error";
  if (error.status === 409 && error.code === "IDEMPOTENCY_KEY_IN_PROGRESS") {
    return "idempotency-key-in-progress";
  }
  return undefined;
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
