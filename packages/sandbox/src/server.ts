/**
 * The sandbox HTTP layer: one request goes through the base-path check, request counting, fault
 * injection, the body-size limit, authentication (auth.ts) and the route table (routes.ts), then
 * the latency fault, the idempotency completion and the response. Business rules live in the
 * modules the routes call.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { authenticate } from "./auth.js";
import { ApiError, notFound, validationError } from "./errors.js";
import { latencyFor, requestFault } from "./faults.js";
import { errorReply, MAX_BODY_BYTES, type Reply, readBody, sleep } from "./http.js";
import type { TokenBucket } from "./rate-limit.js";
import { createRouter, type RouteDeps } from "./routes.js";
import { type RequestStats, requestKind } from "./stats.js";

export { MAX_BODY_BYTES } from "./http.js";
export { DEFAULT_SONAR_TTL_MS } from "./routes.js";

export interface ServerDeps extends Omit<RouteDeps, "resetStats"> {
  /** Request counters behind `GET /_sandbox/stats`. */
  stats: RequestStats;
  /** The `rateLimitPerSecond` token bucket. */
  bucket: TokenBucket;
  /** Webhook deliveries waiting for the endpoint now. */
  webhookBacklog: () => number;
  /** Above this many waiting deliveries, `POST /payments` is answered 429 (0 = never). */
  webhookBacklogLimit: number;
  logger?: { warn(obj: object, msg?: string): void };
}

/** The parts of the URL a request is routed by. */
interface Target {
  pathname: string;
  /** Path segments, `/v2` first, decoded. */
  segments: string[];
  query: URLSearchParams;
  /** `/v2/_sandbox/*`: control requests, never counted, faulted or delayed. */
  control: boolean;
}

function targetOf(req: IncomingMessage): Target {
  const url = new URL(req.url ?? "/", "http://sandbox.local");
  const path = url.pathname.replace(/\/+$/, "");
  const segments = path.split("/").filter(Boolean).map(decodeURIComponent);
  return { pathname: url.pathname, segments, query: url.searchParams, control: segments[1] === "_sandbox" };
}

const INTERNAL_ERROR = () => new ApiError(500, "internal_error", "INTERNAL_ERROR", "internal sandbox error");

function send(res: ServerResponse, reply: Reply): void {
  const payload = reply.body === undefined ? "" : JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    ...(payload ? { "content-type": "application/json; charset=utf-8" } : {}),
    "content-length": Buffer.byteLength(payload),
    ...reply.headers,
  });
  res.end(payload);
}

export function createRequestHandler(deps: ServerDeps) {
  const route = createRouter({ ...deps, resetStats: () => deps.stats.reset() });

  /** Counts an API request and applies the request-level faults (503, 429) before anything is done. */
  function countAndFault(method: string, target: Target): void {
    const kind = requestKind(method, target.segments.slice(1));
    deps.stats.count(kind);
    const fault = requestFault(deps.faults(), Math.random, deps.bucket);
    if (fault?.status === 503) {
      throw new ApiError(
        503,
        "service_unavailable_error",
        "SERVICE_UNAVAILABLE",
        "sandbox fault: service unavailable",
      );
    }
    if (fault?.status === 429) throw rateLimited("sandbox fault: too many requests", fault.retryAfterSeconds);
    // Load shedding (webhook-delivery.ts DEFAULT_WEBHOOK_BACKLOG_LIMIT): only new payments, the work
    // that makes deliveries; reads and everything else are still answered.
    if (
      deps.webhookBacklogLimit > 0 &&
      kind === "create" &&
      deps.webhookBacklog() > deps.webhookBacklogLimit
    ) {
      throw rateLimited("too many requests: webhook deliveries are behind; retry after the delay", 1);
    }
  }

  function rateLimited(message: string, retryAfterSeconds: number): ApiError {
    return new ApiError(429, "rate_limit_error", "RATE_LIMITED", message, undefined, {
      "retry-after": String(retryAfterSeconds),
    });
  }

  /** Everything up to the handler's reply; every failure becomes the error envelope. */
  function answer(req: IncomingMessage, target: Target, raw: Buffer | "too-large"): Reply {
    const method = req.method ?? "GET";
    try {
      if (target.segments[0] !== "v2") {
        throw notFound(`no route ${req.method} ${target.pathname}; the base path is /v2`);
      }
      if (!target.control) countAndFault(method, target);
      if (raw === "too-large") {
        throw validationError(`request body exceeds ${MAX_BODY_BYTES} bytes`, [
          { path: "body", message: "too large" },
        ]);
      }
      const segments = target.segments.slice(1);
      const apiKey = authenticate(deps.state, req.headers, segments);
      return route({ method, segments, query: target.query, headers: req.headers, raw, apiKey });
    } catch (err) {
      if (err instanceof ApiError) return errorReply(err);
      deps.logger?.warn(
        { err: (err as Error).message, method, path: target.pathname },
        "sandbox internal error",
      );
      return errorReply(INTERNAL_ERROR());
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const target = targetOf(req);
    const reply = answer(req, target, raw);
    if (!target.control) {
      if (reply.status === 429) deps.stats.countRateLimited();
      await sleep(latencyFor(deps.faults()));
    }
    reply.beforeSend?.(reply);
    if (reply.drop) {
      // The payment is stored and its key completed: the client sees a dropped connection.
      req.socket.destroy();
      return;
    }
    send(res, reply);
  }

  return (req: IncomingMessage, res: ServerResponse): void => {
    handle(req, res).catch((err: unknown) => {
      deps.logger?.warn({ err: (err as Error).message }, "sandbox request failed");
      if (!res.headersSent) send(res, errorReply(INTERNAL_ERROR()));
      else res.destroy();
    });
  };
}
