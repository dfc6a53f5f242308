/**
 * THE request function of the Payouts client: every resource method goes through {@link
 * createRequester}'s `send`. It owns the headers, the retry loop, response validation and the
 * scrubbing of secrets from errors, so resource modules stay declarations of paths and schemas.
 */
import { setMaxListeners } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import type { Dispatcher } from "undici";
import type { z } from "zod";
import type { LogSink } from "../logging/index.js";
import {
  connectionErrorFrom,
  errorFromResponse,
  invalidResponseError,
  PayoutsApiConnectionError,
  type PayoutsApiError,
  redactErrorSecrets,
} from "./errors.js";
import { type ListQuery, toQueryString } from "./query.js";
import { decideRetry, type RetryOptions } from "./retry-policy.js";
import type { RequestLimiter } from "./shared-rate-limit.js";
import { HEADERS, IDEMPOTENCY_KEY_MAX } from "./wire-types.js";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** What one try looked like: for metrics and debug logs. Never carries headers, bodies or the key. */
export interface AttemptInfo {
  method: HttpMethod;
  /** Path without the query string, e.g. `/payments/pay_123`. */
  path: string;
  /** 1 for the first try. */
  attempt: number;
  /** HTTP status, 0 when no answer arrived. */
  status: number;
  durationMs: number;
  /** Error code when the try failed (`VALIDATION_ERROR`, `ECONNRESET`, ...). */
  errorCode?: string;
  /** Set when the client will try again after this many milliseconds. */
  retryInMs?: number;
}

export interface RequestHooks {
  /** Called before each try is sent. */
  onRequest?(info: Pick<AttemptInfo, "method" | "path" | "attempt">): void;
  /** Called after each try, successful or not. */
  onResponse?(info: AttemptInfo): void;
}

export interface RequesterConfig {
  baseUrl: string;
  apiKey: string;
  entityId: string;
  timeoutMs: number;
  retry: RetryOptions;
  userAgent: string;
  /** The requester's own connections: `close()` destroys them. */
  dispatcher: Dispatcher;
  logger?: LogSink | undefined;
  hooks?: RequestHooks | undefined;
  /** Random source of the backoff jitter, [0, 1). Tests pass a fixed one. */
  random?: (() => number) | undefined;
  /** Paces every try (shared rate limit) and learns of each 429. */
  limiter?: RequestLimiter | undefined;
}

export interface ApiRequest<T> {
  method: HttpMethod;
  /** Path below the base URL, starting with `/`; ids already URL-encoded. */
  path: string;
  query?: ListQuery | undefined;
  /** JSON body; serialized ONCE so every retry sends the same bytes. */
  body?: unknown;
  /** Schema of a 2xx body; without one the body is ignored (e.g. DELETE). */
  schema?: z.ZodType<T> | undefined;
  /** Send `Service-Entity-Id` (accounts, payments, limitations, tools, attachments, links). */
  entityScoped: boolean;
  idempotencyKey?: string | undefined;
  sonarToken?: string | undefined;
  /** Aborts the request and any backoff wait. */
  signal?: AbortSignal | undefined;
  /**
   * Awaited before each try, after the rate limiter's wait, right before the request leaves: the
   * payment worker's send fence, so a try that waited long for its slot is checked when it really
   * goes. A throw ends the call with that error; that try is not sent.
   */
  beforeTry?: (() => Promise<void>) | undefined;
}

export interface Requester {
  send<T>(req: ApiRequest<T>): Promise<T>;
  /**
   * Aborts in-flight requests and backoff waits and closes the connections; later calls fail with
   * `CLIENT_CLOSED`. Idempotent.
   */
  close(): Promise<void>;
}

const MAX_REPORTED_PROBLEMS = 10;

function headerValue(headers: Record<string, string | string[] | undefined>, name: string) {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function closedError(operation: string): PayoutsApiConnectionError {
  return new PayoutsApiConnectionError({
    code: "CLIENT_CLOSED",
    message: `${operation}: the client is closed`,
  });
}

/**
 * The requester: a closure over one client's settings and its lifetime abort signal, made of named
 * steps (`attemptOnce`, `send`, `report`). Long only because they live inside it and share that state.
 */
export function createRequester(config: RequesterConfig): Requester {
  const base = new URL(config.baseUrl);
  const origin = base.origin;
  const basePath = base.pathname.replace(/\/+$/, "");
  const secrets = [config.apiKey];
  const random = config.random ?? Math.random;
  const lifetime = new AbortController();
  // Every rate-limiter and backoff wait listens on this one signal; a busy worker has many at once.
  setMaxListeners(0, lifetime.signal);

  /** The caller's signal or `close()` ended the call: never retried. */
  function abortedError(operation: string): PayoutsApiConnectionError {
    if (lifetime.signal.aborted) return closedError(operation);
    return new PayoutsApiConnectionError({ code: "ABORTED", message: `${operation}: aborted by the caller` });
  }

  async function attemptOnce<T>(
    req: ApiRequest<T>,
    path: string,
    headers: Record<string, string>,
    body: Buffer | undefined,
    operation: string,
    signal: AbortSignal,
  ): Promise<{ value: T; status: number } | { error: PayoutsApiError }> {
    let status: number;
    let responseHeaders: Record<string, string | string[] | undefined>;
    let text: string;
    try {
      // The dispatcher directly, with the origin parsed once: undici's `request(url)` parses the URL
      // on every call. Only a caller's own signal goes with the request; `close()` ends every
      // request in flight by destroying the connections, which costs nothing per request.
      const response = await config.dispatcher.request({
        origin,
        path,
        method: req.method,
        headers,
        body,
        headersTimeout: config.timeoutMs,
        bodyTimeout: config.timeoutMs,
        signal: req.signal,
      });
      status = response.statusCode;
      responseHeaders = response.headers;
      text = await response.body.text();
    } catch (err) {
      if (signal.aborted) return { error: abortedError(operation) };
      return { error: connectionErrorFrom(err, operation) };
    }

    if (status < 200 || status >= 300) return { error: errorFromResponse(status, text, responseHeaders) };

    const requestId =
      headerValue(responseHeaders, "x-request-id") ?? headerValue(responseHeaders, "request-id");
    if (!req.schema) return { value: undefined as T, status };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { error: invalidResponseError(status, operation, ["body is not JSON"], requestId) };
    }
    const parsed = req.schema.safeParse(json);
    if (!parsed.success) {
      // Paths and messages only: zod issues here carry no input values, so nothing from the body
      // (which could hold bank details) is echoed.
      const problems = parsed.error.issues
        .slice(0, MAX_REPORTED_PROBLEMS)
        .map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`);
      return { error: invalidResponseError(status, operation, problems, requestId) };
    }
    return { value: parsed.data, status };
  }

  async function send<T>(req: ApiRequest<T>): Promise<T> {
    const operation = `${req.method} ${req.path}`;
    if (lifetime.signal.aborted) throw closedError(operation);
    if (req.idempotencyKey !== undefined) {
      if (req.idempotencyKey.length === 0 || req.idempotencyKey.length > IDEMPOTENCY_KEY_MAX) {
        throw new TypeError(`Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX} characters`);
      }
    }

    const path = `${basePath}${req.path}${toQueryString(req.query)}`;
    const body = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body), "utf8");
    const headers: Record<string, string> = {
      [HEADERS.apiKey]: config.apiKey,
      accept: "application/json",
      "user-agent": config.userAgent,
    };
    if (body) headers["content-type"] = "application/json";
    if (req.entityScoped) headers[HEADERS.entity] = config.entityId;
    if (req.idempotencyKey !== undefined) headers[HEADERS.idempotencyKey] = req.idempotencyKey;
    if (req.sonarToken !== undefined) headers[HEADERS.sonarToken] = req.sonarToken;

    const signal = req.signal ? AbortSignal.any([lifetime.signal, req.signal]) : lifetime.signal;

    for (let attempt = 1; ; attempt++) {
      if (config.limiter) {
        try {
          await config.limiter.acquire(signal);
        } catch {
          throw abortedError(operation);
        }
      }
      await req.beforeTry?.();
      config.hooks?.onRequest?.({ method: req.method, path: req.path, attempt });
      const started = performance.now();
      const outcome = await attemptOnce(req, path, headers, body, operation, signal);
      const durationMs = Math.round(performance.now() - started);

      if ("value" in outcome) {
        report({ method: req.method, path: req.path, attempt, status: outcome.status, durationMs });
        return outcome.value;
      }

      const error = redactErrorSecrets(outcome.error, secrets);
      if (error.status === 429) config.limiter?.rateLimited(error.retryAfterMs);
      const decision = signal.aborted
        ? ({ retry: false } as const)
        : decideRetry(error, attempt, config.retry, random);
      const info: AttemptInfo = {
        method: req.method,
        path: req.path,
        attempt,
        status: error.status,
        durationMs,
        errorCode: error.code,
      };
      if (decision.retry) info.retryInMs = decision.delayMs;
      report(info);
      if (!decision.retry) throw error;
      try {
        await sleep(decision.delayMs, undefined, { signal });
      } catch {
        throw abortedError(operation);
      }
    }
  }

  function report(info: AttemptInfo): void {
    config.hooks?.onResponse?.(info);
    config.logger?.debug?.(info, "payouts api request");
  }

  let closing: Promise<void> | undefined;
  return {
    send,
    close() {
      closing ??= (async () => {
        lifetime.abort();
        await config.dispatcher.destroy();
      })();
      return closing;
    },
  };
}
