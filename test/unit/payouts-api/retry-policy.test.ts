import { type Job, UnrecoverableError } from "bullmq";
import { describe, expect, it } from "vitest";
import {
  backoffDelayMs,
  DEFAULT_JOB_RETRY_SETTINGS,
  decideRetry,
  errorFromResponse,
  jobRetryOptions,
  PayoutsApiConnectionError,
  REQUEST_WINDOW_MARGIN_MS,
  type RetryOptions,
  requestWindowMs,
  WORKER_CLIENT_RETRY,
} from "../../../src/payouts-api/index.js";
import { isJobGivenUp } from "../../../src/pipeline/index.js";

const OPTIONS: RetryOptions = {
  maxAttempts: 5,
  baseDelayMs: 100,
  maxDelayMs: 1_000,
  maxRetryAfterMs: 60_000,
};
const HALF = () => 0.5;

const envelope = (type: string, code: string) => JSON.stringify({ error: { type, code, message: code } });
const http = (status: number, type: string, code: string, headers: Record<string, string> = {}) =>
  errorFromResponse(status, envelope(type, code), headers);
const transport = (code: string) => new PayoutsApiConnectionError({ code, message: code });

describe("decideRetry: what is retried", () => {
  const retryable: [string, unknown, string][] = [
    ["ECONNRESET", transport("ECONNRESET"), "transport"],
    ["ECONNREFUSED", transport("ECONNREFUSED"), "transport"],
    ["socket closed (UND_ERR_SOCKET)", transport("UND_ERR_SOCKET"), "transport"],
    ["EPIPE", transport("EPIPE"), "transport"],
    ["headers timeout", transport("UND_ERR_HEADERS_TIMEOUT"), "timeout"],
    ["body timeout", transport("UND_ERR_BODY_TIMEOUT"), "timeout"],
    ["connect timeout", transport("UND_ERR_CONNECT_TIMEOUT"), "timeout"],
    ["429", http(429, "rate_limit_error", "RATE_LIMITED"), "rate-limited"],
    ["500", http(500, "internal_error", "INTERNAL_ERROR"), "server-error"],
    ["502 non-JSON", errorFromResponse(502, "<html>Bad Gateway</html>", {}), "server-error"],
    ["503", http(503, "service_unavailable_error", "IDEMPOTENCY_STORE_UNAVAILABLE"), "server-error"],
    [
      "409 in progress",
      http(409, "conflict_error", "IDEMPOTENCY_KEY_IN_PROGRESS"),
      "idempotency-key-in-progress",
    ],
  ];
  it.each(retryable)("retries %s", (_name, error, reason) => {
    expect(decideRetry(error, 1, OPTIONS, HALF)).toEqual({ retry: true, delayMs: 50, reason });
  });

  const final: [string, unknown][] = [
    ["400 VALIDATION_ERROR", http(400, "invalid_request_error", "VALIDATION_ERROR")],
    ["401 UNAUTHORIZED", http(401, "authentication_error", "UNAUTHORIZED")],
    ["403", http(403, "authorization_error", "FORBIDDEN")],
    ["404", http(404, "not_found_error", "NOT_FOUND")],
    ["409 DUPLICATE_EXTERNAL_ID", http(409, "conflict_error", "DUPLICATE_EXTERNAL_ID")],
    ["409 IDEMPOTENCY_KEY_REUSED", http(409, "conflict_error", "IDEMPOTENCY_KEY_REUSED")],
    ["422", http(422, "invalid_request_error", "VALIDATION_ERROR")],
    ["client closed", transport("CLIENT_CLOSED")],
    ["aborted", transport("UND_ERR_ABORTED")],
    ["TLS failure", transport("CERT_HAS_EXPIRED")],
    ["a plain Error", new Error("boom")],
  ];
  it.each(final)("never retries %s", (_name, error) => {
    expect(decideRetry(error, 1, OPTIONS, HALF)).toEqual({ retry: false, reason: "not-retryable" });
  });

  it("stops after maxAttempts tries", () => {
    const error = transport("ECONNRESET");
    expect(decideRetry(error, 4, OPTIONS, HALF).retry).toBe(true);
    expect(decideRetry(error, 5, OPTIONS, HALF)).toEqual({ retry: false, reason: "attempts-exhausted" });
    expect(decideRetry(error, 1, { ...OPTIONS, maxAttempts: 1 }, HALF).retry).toBe(false);
  });
});

describe("decideRetry: how long to wait", () => {
  it("waits exactly Retry-After seconds when given", () => {
    const error = http(429, "rate_limit_error", "RATE_LIMITED", { "retry-after": "7" });
    expect(decideRetry(error, 1, OPTIONS, HALF)).toEqual({
      retry: true,
      delayMs: 7_000,
      reason: "rate-limited",
    });
  });

  it("waits until a Retry-After HTTP-date", () => {
    const at = new Date(Date.now() + 30_000).toUTCString();
    const error = http(503, "service_unavailable_error", "SERVICE_UNAVAILABLE", { "retry-after": at });
    const decision = decideRetry(error, 1, OPTIONS, HALF);
    expect(decision.retry).toBe(true);
    // The date has one-second resolution and time passes between building and deciding.
    if (decision.retry) expect(decision.delayMs).toBeGreaterThan(28_000);
    if (decision.retry) expect(decision.delayMs).toBeLessThanOrEqual(30_000);
  });

  it("treats a Retry-After date in the past as 'now'", () => {
    const error = http(429, "rate_limit_error", "RATE_LIMITED", {
      "retry-after": "Wed, 21 Oct 2015 07:28:00 GMT",
    });
    expect(decideRetry(error, 1, OPTIONS, HALF)).toMatchObject({ retry: true, delayMs: 0 });
  });

  it("hands back a Retry-After longer than maxRetryAfterMs", () => {
    const error = http(429, "rate_limit_error", "RATE_LIMITED", { "retry-after": "61" });
    expect(decideRetry(error, 1, OPTIONS, HALF)).toEqual({ retry: false, reason: "retry-after-too-long" });
  });

  it("ignores an unreadable Retry-After and backs off", () => {
    const error = http(429, "rate_limit_error", "RATE_LIMITED", { "retry-after": "soon" });
    expect(decideRetry(error, 2, OPTIONS, HALF)).toMatchObject({ retry: true, delayMs: 100 });
  });

  it("doubles the backoff ceiling per retry up to maxDelayMs", () => {
    const almostOne = () => 0.999_999;
    const ceilings = [1, 2, 3, 4, 5, 6, 10].map((n) => backoffDelayMs(n, OPTIONS, almostOne) + 1);
    expect(ceilings).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000]);
  });

  it("keeps full jitter inside [0, ceiling)", () => {
    expect(backoffDelayMs(3, OPTIONS, () => 0)).toBe(0);
    expect(backoffDelayMs(3, OPTIONS, () => 0.25)).toBe(100);
    for (let i = 0; i < 200; i++) {
      const delay = backoffDelayMs(4, OPTIONS, Math.random);
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(800);
    }
  });
});

describe("the job layer", () => {
  it("gives BullMQ the shared attempts and exponential backoff", () => {
    expect(jobRetryOptions(DEFAULT_JOB_RETRY_SETTINGS)).toEqual({
      attempts: 8,
      backoff: { type: "exponential", delay: 1_000 },
    });
    expect(jobRetryOptions({ attempts: 3, backoffMs: 50 })).toEqual({
      attempts: 3,
      backoff: { type: "exponential", delay: 50 },
    });
  });

  it("gives a job up when its tries are used up, it was failed for good, or BullMQ says it stalled too often", () => {
    const job = (attemptsMade: number, deferredFailure?: string) =>
      ({ attemptsMade, opts: { attempts: 8 }, ...(deferredFailure ? { deferredFailure } : {}) }) as Pick<
        Job,
        "attemptsMade" | "opts" | "deferredFailure"
      >;
    expect(isJobGivenUp(job(1), new Error("ECONNRESET"))).toBe(false);
    expect(isJobGivenUp(job(8), new Error("ECONNRESET"))).toBe(true);
    expect(isJobGivenUp(job(1), new UnrecoverableError("rejected: X"))).toBe(true);
    // BullMQ's signal, whatever the error's text says.
    expect(isJobGivenUp(job(0, "job stalled more than allowable limit"), new UnrecoverableError("x"))).toBe(
      true,
    );
    expect(isJobGivenUp(job(0, "anything"), new Error("not about stalling"))).toBe(true);
    // Text alone is not the signal.
    expect(isJobGivenUp(job(0), new Error("job stalled more than allowable limit"))).toBe(false);
  });
});

describe("requestWindowMs (how long a send may still reach the service)", () => {
  it("covers every try's time-out, the longest wait between tries, and the margin", () => {
    // The worker's client: two tries, backoff capped at 1 s, never waits out a Retry-After.
    expect(requestWindowMs(15_000, WORKER_CLIENT_RETRY)).toBe(15_000 * 2 + 1_000 + REQUEST_WINDOW_MARGIN_MS);
    // A client that waits out Retry-After itself may send its next try that much later.
    expect(requestWindowMs(10_000, OPTIONS)).toBe(10_000 * 5 + 60_000 * 4 + REQUEST_WINDOW_MARGIN_MS);
  });
});
