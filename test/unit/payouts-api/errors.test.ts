import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { redactErrorSecrets } from "../../../src/payouts-api/errors.js";
import {
  errorFromResponse,
  isFinalError,
  isTransportRetryable,
  PayoutsApiAuthenticationError,
  PayoutsApiConflictError,
  PayoutsApiConnectionError,
  PayoutsApiError,
  PayoutsApiInternalError,
  PayoutsApiInvalidRequestError,
  PayoutsApiNotFoundError,
  PayoutsApiRateLimitError,
  PayoutsApiServiceUnavailableError,
  parseRetryAfter,
} from "../../../src/payouts-api/index.js";

const body = (type: string, code: string, message = "msg", details?: Record<string, unknown>) =>
  JSON.stringify({ error: { type, code, message, ...(details ? { details } : {}) } });

describe("errorFromResponse", () => {
  it.each([
    [400, "invalid_request_error", "VALIDATION_ERROR", PayoutsApiInvalidRequestError],
    [401, "authentication_error", "NO_ACTIVE_API_KEY", PayoutsApiAuthenticationError],
    [404, "not_found_error", "NOT_FOUND", PayoutsApiNotFoundError],
    [409, "conflict_error", "DUPLICATE_EXTERNAL_ID", PayoutsApiConflictError],
    [429, "rate_limit_error", "RATE_LIMITED", PayoutsApiRateLimitError],
    [503, "service_unavailable_error", "IDEMPOTENCY_STORE_UNAVAILABLE", PayoutsApiServiceUnavailableError],
    [500, "internal_error", "INTERNAL_ERROR", PayoutsApiInternalError],
  ])("builds a %i %s envelope into its class", (status, type, code, ErrorClass) => {
    const err = errorFromResponse(status, body(type, code, "human text"), {});
    expect(err).toBeInstanceOf(ErrorClass);
    expect(err).toBeInstanceOf(PayoutsApiError);
    expect(err).toMatchObject({ status, type, code, message: "human text" });
  });

  it("keeps details, the request id and Retry-After", () => {
    const err = errorFromResponse(429, body("rate_limit_error", "RATE_LIMITED", "slow", { limit: 10 }), {
      "x-request-id": "req_42",
      "retry-after": "3",
    });
    expect(err).toMatchObject({ details: { limit: 10 }, requestId: "req_42", retryAfterMs: 3_000 });
  });

  it("accepts an unknown type as a plain PayoutsApiError, keeping type and code", () => {
    const err = errorFromResponse(418, body("teapot_error", "NEW_CODE"), {});
    expect(err.constructor).toBe(PayoutsApiError);
    expect(err).toMatchObject({ status: 418, type: "teapot_error", code: "NEW_CODE" });
  });

  it("types a non-JSON 502 from a proxy by its status", () => {
    const err = errorFromResponse(502, "<html><body>\n  <h1>502 Bad Gateway</h1>\n</body></html>", {
      "content-type": "text/html",
    });
    expect(err).toBeInstanceOf(PayoutsApiServiceUnavailableError);
    expect(err).toMatchObject({
      status: 502,
      type: "service_unavailable_error",
      code: "SERVICE_UNAVAILABLE",
    });
    expect(err.message).toContain("502 Bad Gateway");
    expect(isFinalError(err)).toBe(false);
  });

  it("types an empty body and a JSON body that is not an envelope", () => {
    expect(errorFromResponse(503, "", {})).toMatchObject({
      code: "SERVICE_UNAVAILABLE",
      message: "HTTP 503 with an empty body",
    });
    expect(errorFromResponse(404, '{"oops":true}', {})).toMatchObject({
      type: "not_found_error",
      code: "NOT_FOUND",
    });
    expect(errorFromResponse(400, Buffer.from("bad"), {})).toMatchObject({ type: "invalid_request_error" });
  });

  it("cuts a long non-JSON body in the message", () => {
    const err = errorFromResponse(500, "x".repeat(10_000), {});
    expect(err.message.length).toBeLessThan(300);
  });
});

describe("classification helpers", () => {
  it("isTransportRetryable is true only for transient transport failures", () => {
    expect(isTransportRetryable(new PayoutsApiConnectionError({ code: "ECONNRESET", message: "x" }))).toBe(
      true,
    );
    expect(isTransportRetryable(new PayoutsApiConnectionError({ code: "CLIENT_CLOSED", message: "x" }))).toBe(
      false,
    );
    expect(isTransportRetryable(errorFromResponse(503, "", {}))).toBe(false);
  });

  it("isFinalError marks sheet-caused 4xx final and transient failures not", () => {
    expect(isFinalError(errorFromResponse(400, body("invalid_request_error", "VALIDATION_ERROR"), {}))).toBe(
      true,
    );
    expect(isFinalError(errorFromResponse(409, body("conflict_error", "DUPLICATE_EXTERNAL_ID"), {}))).toBe(
      true,
    );
    expect(
      isFinalError(errorFromResponse(409, body("conflict_error", "IDEMPOTENCY_KEY_IN_PROGRESS"), {})),
    ).toBe(false);
    expect(isFinalError(errorFromResponse(429, "", {}))).toBe(false);
    expect(
      isFinalError(new PayoutsApiConnectionError({ code: "UND_ERR_HEADERS_TIMEOUT", message: "x" })),
    ).toBe(false);
  });

  it("parseRetryAfter reads seconds and HTTP-dates", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:10 GMT", now)).toBe(10_000);
    expect(parseRetryAfter("garbage", now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe("secrets never show", () => {
  const SECRET = "sk_live_abcdef123456";

  it("redactErrorSecrets removes a secret from message, details, stack, JSON and inspect", () => {
    const err = redactErrorSecrets(
      errorFromResponse(
        401,
        body("authentication_error", "UNAUTHORIZED", `bad key ${SECRET}`, { key: SECRET }),
        {},
      ),
      [SECRET],
    );
    for (const text of [err.message, err.stack ?? "", JSON.stringify(err), inspect(err, { depth: 10 })]) {
      expect(text).not.toContain(SECRET);
    }
    expect(err.message).toBe("bad key [REDACTED]");
    expect(err.details).toEqual({ key: "[REDACTED]" });
  });

  it("inspect and toJSON show exactly the error fields, never a cause with request internals", () => {
    const cause = Object.assign(new Error("socket hang up"), { headers: { "api-key": SECRET } });
    const err = new PayoutsApiConnectionError({ code: "ECONNRESET", message: "GET /x failed", cause });
    expect(inspect(err, { depth: 10 })).not.toContain(SECRET);
    expect(JSON.stringify(err)).not.toContain(SECRET);
    expect(Object.keys(err.toJSON()).sort()).toEqual(["code", "message", "name", "status", "type"]);
  });
});
