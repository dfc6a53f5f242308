/**
 * The one error tree of the Payouts client. Every failure a caller sees is a {@link PayoutsApiError}:
 * an HTTP error answer (built by {@link errorFromResponse}), a transport failure
 * ({@link PayoutsApiConnectionError}, status 0) or an answer that does not match the wire types
 * (`internal_error` / `INVALID_RESPONSE`). Callers branch on `type` for a whole class, on `code` for
 * one condition. Nothing here ever holds the API key or the request headers.
 */
import { inspect } from "node:util";
import { PayoutsError } from "../errors/index.js";
import { redactSecrets, redactSecretsDeep } from "../logging/index.js";
import { ErrorEnvelope, type ErrorType } from "./wire-types.js";

/** `type` of a failure that never reached an HTTP answer. Not a service value; chosen by the client. */
export const CONNECTION_ERROR_TYPE = "connection_error";
export type PayoutsErrorType = ErrorType | typeof CONNECTION_ERROR_TYPE;

export interface PayoutsApiErrorInit {
  status: number;
  type: string;
  code: string;
  message: string;
  details?: Record<string, unknown> | undefined;
  requestId?: string | undefined;
  retryAfterMs?: number | undefined;
  cause?: unknown;
}

/** An answer of the Partner Payouts Service that is not a success, or no answer at all. */
export class PayoutsApiError extends PayoutsError {
  /** HTTP status of the answer; 0 when no answer arrived (transport failure). */
  readonly status: number;
  /** Error family (`invalid_request_error`, `rate_limit_error`, ..., or `connection_error`). */
  readonly type: string;
  readonly details: Record<string, unknown> | undefined;
  /** The service's request id header, when it sent one: quote it to the partner's support. */
  readonly requestId: string | undefined;
  /** How long the service asked us to wait (from `Retry-After`), in milliseconds. */
  readonly retryAfterMs: number | undefined;

  constructor(init: PayoutsApiErrorInit) {
    // `code`: the service's machine-readable code (`VALIDATION_ERROR`, `IDEMPOTENCY_KEY_IN_PROGRESS`,
    // ...) or the transport's (`ECONNRESET`). What the service refuses is a dependency's answer to us.
    super(init.code, init.message, { kind: "unavailable", cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.type = init.type;
    this.details = init.details;
    this.requestId = init.requestId;
    this.retryAfterMs = init.retryAfterMs;
  }

  /** Plain data for logs and result files: exactly these fields, nothing from the request. */
  toJSON(): Record<string, unknown> {
    const json: Record<string, unknown> = {
      name: this.name,
      status: this.status,
      type: this.type,
      code: this.code,
      message: this.message,
    };
    if (this.details !== undefined) json.details = this.details;
    if (this.requestId !== undefined) json.requestId = this.requestId;
    if (this.retryAfterMs !== undefined) json.retryAfterMs = this.retryAfterMs;
    return json;
  }

  /** `util.inspect`/console output shows the same fields as `toJSON`, never a cause's internals. */
  [inspect.custom](): string {
    return `${this.name} ${inspect(this.toJSON())}`;
  }
}

export class PayoutsApiInvalidRequestError extends PayoutsApiError {}
export class PayoutsApiAuthenticationError extends PayoutsApiError {}
export class PayoutsApiAuthorizationError extends PayoutsApiError {}
export class PayoutsApiNotFoundError extends PayoutsApiError {}
export class PayoutsApiConflictError extends PayoutsApiError {}
export class PayoutsApiRateLimitError extends PayoutsApiError {}
export class PayoutsApiServiceUnavailableError extends PayoutsApiError {}
export class PayoutsApiInternalError extends PayoutsApiError {}

/**
 * Node and undici codes of transport failures after which the same request may be sent again: the
 * connection broke, was refused, or an answer did not arrive in time. Anything else (TLS failures,
 * bad arguments, our own abort/close) is not transient and is not retried.
 */
export const RETRYABLE_TRANSPORT_CODES: ReadonlySet<string> = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "UND_ERR_RES_CONTENT_LENGTH_MISMATCH",
]);

const TIMEOUT_CODES: ReadonlySet<string> = new Set([
  "ETIMEDOUT",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

/** A request that got no (complete) HTTP answer: connection refused/reset/closed, or a timeout. */
export class PayoutsApiConnectionError extends PayoutsApiError {
  /** True when the failure was a timeout (connect, headers or body). */
  readonly timedOut: boolean;
  /** True when sending the same request again may succeed. */
  readonly transient: boolean;

  constructor(init: Omit<PayoutsApiErrorInit, "status" | "type">) {
    super({ ...init, status: 0, type: CONNECTION_ERROR_TYPE });
    this.timedOut = TIMEOUT_CODES.has(init.code);
    this.transient = RETRYABLE_TRANSPORT_CODES.has(init.code);
  }
}

/** Code `ECONNREFUSED` etc. from an error or its cause (undici wraps some socket errors). */
function transportCodeOf(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && code !== "UND_ERR") return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Wraps a thrown transport error. The message names the operation, not the URL's query or any
 * header; the original error stays reachable as `cause` for debugging.
 */
export function connectionErrorFrom(err: unknown, operation: string): PayoutsApiConnectionError {
  if (err instanceof PayoutsApiConnectionError) return err;
  const code = transportCodeOf(err) ?? "CONNECTION_FAILED";
  const reason = err instanceof Error ? err.message : String(err);
  const what = TIMEOUT_CODES.has(code) ? "timed out" : "failed";
  return new PayoutsApiConnectionError({
    code,
    message: `${operation} ${what} (${code}): ${reason}`,
    cause: err,
  });
}

export type HeaderBag = Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  const value = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * `Retry-After` in milliseconds: delay-seconds or an HTTP-date (RFC 9110 §10.2.3). Undefined when
 * absent or unreadable. A date in the past means "now" (0).
 */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  if (/^\d+\.\d+$/.test(trimmed)) return Math.ceil(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** The family an HTTP status belongs to when the body does not say (no JSON envelope). */
function typeForStatus(status: number): ErrorType {
  if (status === 401) return "authentication_error";
  if (status === 403) return "authorization_error";
  if (status === 404) return "not_found_error";
  if (status === 409) return "conflict_error";
  if (status === 429) return "rate_limit_error";
  if (status === 500) return "internal_error";
  if (status >= 500) return "service_unavailable_error";
  return "invalid_request_error";
}

/** Codes for statuses whose body carried no envelope; the same ones the sandbox sends (wire-types). */
function codeForStatus(status: number): string {
  if (status === 401) return "UNAUTHORIZED";
  if (status === 403) return "FORBIDDEN";
  if (status === 404) return "NOT_FOUND";
  if (status === 429) return "RATE_LIMITED";
  if (status === 500) return "INTERNAL_ERROR";
  if (status >= 500) return "SERVICE_UNAVAILABLE";
  if (status === 409) return "CONFLICT";
  return "VALIDATION_ERROR";
}

const CLASS_BY_TYPE: Record<string, new (init: PayoutsApiErrorInit) => PayoutsApiError> = {
  invalid_request_error: PayoutsApiInvalidRequestError,
  authentication_error: PayoutsApiAuthenticationError,
  authorization_error: PayoutsApiAuthorizationError,
  not_found_error: PayoutsApiNotFoundError,
  conflict_error: PayoutsApiConflictError,
  rate_limit_error: PayoutsApiRateLimitError,
  service_unavailable_error: PayoutsApiServiceUnavailableError,
  internal_error: PayoutsApiInternalError,
};

/** Longest piece of a non-JSON body quoted in a message: enough to recognise a proxy page. */
const BODY_SNIPPET_MAX = 120;

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > BODY_SNIPPET_MAX ? `${flat.slice(0, BODY_SNIPPET_MAX)}…` : flat;
}

/**
 * THE constructor of errors from HTTP answers. `body` is the raw text (or an already parsed value);
 * a body that is not the `{ error: { type, code, message, details? } }` envelope (a proxy's HTML 502,
 * an empty 503) still yields a typed error, with type and code derived from the status.
 */
export function errorFromResponse(status: number, body: unknown, headers: HeaderBag = {}): PayoutsApiError {
  let parsed: unknown = body;
  if (typeof body === "string" || body instanceof Uint8Array) {
    const text = typeof body === "string" ? body : Buffer.from(body).toString("utf8");
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  const requestId = header(headers, "x-request-id") ?? header(headers, "request-id");
  const retryAfterMs = parseRetryAfter(header(headers, "retry-after"));

  const envelope = ErrorEnvelope.safeParse(parsed);
  if (envelope.success) {
    const { type, code, message, details } = envelope.data.error;
    const ErrorClass = CLASS_BY_TYPE[type] ?? PayoutsApiError;
    return new ErrorClass({ status, type, code, message, details, requestId, retryAfterMs });
  }

  const type = typeForStatus(status);
  const ErrorClass = CLASS_BY_TYPE[type] ?? PayoutsApiError;
  const raw = typeof parsed === "string" ? parsed : parsed === undefined ? "" : JSON.stringify(parsed);
  const quoted =
    raw.trim() === "" ? "an empty body" : `a body that is not an error envelope: ${snippet(raw)}`;
  return new ErrorClass({
    status,
    type,
    code: codeForStatus(status),
    message: `HTTP ${status} with ${quoted}`,
    requestId,
    retryAfterMs,
  });
}

/** A 2xx answer whose body does not match the wire types (or is not JSON). Never retried. */
export function invalidResponseError(
  status: number,
  operation: string,
  problems: string[],
  requestId?: string,
): PayoutsApiError {
  return new PayoutsApiInternalError({
    status,
    type: "internal_error",
    code: "INVALID_RESPONSE",
    message: `${operation} answered ${status} with a body that does not match the expected shape`,
    details: { problems },
    requestId,
  });
}

/** True when the error is a transport failure that may succeed if the same request is sent again. */
export function isTransportRetryable(err: unknown): boolean {
  return err instanceof PayoutsApiConnectionError && err.transient;
}

/**
 * Removes known secret values from an error's message, details and stack, in place. The client runs
 * every error through this before throwing, because a server may echo a key back in its message.
 */
export function redactErrorSecrets<E extends PayoutsApiError>(err: E, secrets: readonly string[]): E {
  err.message = redactSecrets(err.message, secrets);
  if (err.stack) err.stack = redactSecrets(err.stack, secrets);
  if (err.details !== undefined) {
    Object.defineProperty(err, "details", { value: redactSecretsDeep(err.details, secrets) });
  }
  return err;
}
