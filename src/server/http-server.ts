/**
 * The HTTP server of `payouts serve` (Fastify): the webhook receiver, health, metrics, result
 * downloads, and — when given an API context — the operator console, the HTTP API under /api/v1
 * and the queue view. Everything it talks to is passed in, so tests and the demo build it around
 * their own Redis, queue and result-file source.
 *
 * Who may call what: `/healthz` is open (load balancers); the webhook route proves itself with the
 * HMAC signature; everything else needs a console session or a bearer token (src/auth).
 */
import type { AddressInfo } from "node:net";
import Fastify, { type FastifyError, type FastifyInstance } from "fastify";
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from "fastify-type-provider-zod";
import { ApiError, errorBody } from "../api/api-error.js";
import { type ApiContext, registerApi } from "../api/index.js";
import { allow, registerAuth } from "../auth/index.js";
import { httpStatusOf, PayoutsError } from "../errors/index.js";
import type { LogSink } from "../logging/index.js";
import { BATCH_ID_PATTERN } from "../row-identity/index.js";
import { registerConsolePages } from "./console-pages.js";
import { type HealthCheck, runHealthChecks } from "./health.js";
import { ServerMetrics } from "./metrics.js";
import { registerQueueView } from "./queue-view.js";
import { type ResultFileSource, type ResultFormat, sendResultFile } from "./result-download.js";
import { registerSecurityHeaders } from "./security-headers.js";
import type { WebhookReceiver } from "./webhook-receiver.js";
import { registerWebhookRoute } from "./webhook-route.js";

export const WEBHOOK_PATH = "/webhooks/payouts";
/** Deliveries are small notifications; 1 MiB leaves room and still bounds memory per request. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

export interface HttpServerOptions {
  receiver: WebhookReceiver;
  /** Named checks for `/healthz` (e.g. `redis`, `api`), each given an abort signal. */
  healthChecks: Record<string, HealthCheck>;
  healthTimeoutMs?: number;
  /** Where result files come from; without it the download routes answer 404. */
  resultFile?: ResultFileSource;
  /** Limit of a webhook delivery's body. */
  bodyLimitBytes?: number;
  metrics?: ServerMetrics;
  logger?: LogSink;
  /** Users, audit, batches: the console and /api/v1. Required for every authenticated route. */
  api: ApiContext;
  /** Trust X-Forwarded-* from a proxy in front (then cookies are Secure behind https): HTTP_TRUST_PROXY. */
  trustProxy: boolean;
}

/**
 * The Fastify server of `payouts serve`. Kept as one function on purpose: the order of hooks, error
 * handlers and plugin registrations is what Fastify applies, and reads best where it is declared.
 */
export async function createHttpServer(options: HttpServerOptions): Promise<FastifyInstance> {
  const metrics = options.metrics ?? new ServerMetrics();
  const app = Fastify({
    logger: false,
    trustProxy: options.trustProxy,
    bodyLimit: DEFAULT_BODY_LIMIT_BYTES,
    // Route ids, row numbers, cursors: nothing legitimate is long.
    routerOptions: { maxParamLength: 200 },
    return503OnClosing: true,
  });

  app.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? "unmatched";
    metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });

  app.setErrorHandler((err: FastifyError | ApiError, request, reply) => {
    if (err instanceof ApiError) {
      return reply.code(err.statusCode).send(errorBody(err.code, err.message, err.details));
    }
    // A deliberate error a route let through: the status of its kind. What a dependency failed with
    // (Redis, the service) is not the client's to read.
    if (err instanceof PayoutsError && err.kind !== "internal") {
      const status = httpStatusOf(err.kind);
      if (err.kind === "unavailable") {
        options.logger?.warn({ err, path: request.url.split("?", 1)[0] }, "request failed: a dependency");
        return reply
          .code(status)
          .send(errorBody("UNAVAILABLE", "a service this server depends on failed; try again"));
      }
      return reply.code(status).send(errorBody(err.code, err.message));
    }
    if (hasZodFastifySchemaValidationErrors(err)) {
      // Say which field and why, as the route's schema has it: `query.limit: Too big: expected …`.
      const where = err.validationContext ?? "request";
      const text = err.validation
        .map((v) => `${where}${v.instancePath.replaceAll("/", ".")}: ${v.message}`)
        .join("; ");
      return reply.code(400).send(errorBody("INVALID_REQUEST", text));
    }
    if (isResponseSerializationError(err)) {
      // An answer that does not match its own schema is our fault: never send it half-checked.
      options.logger?.error(
        { path: request.url.split("?", 1)[0], issues: err.cause.issues },
        "answer off schema",
      );
      return reply.code(500).send(errorBody("INTERNAL", "internal error"));
    }
    const { statusCode } = err as FastifyError;
    const status = typeof statusCode === "number" && statusCode >= 400 ? statusCode : 500;
    if (status >= 500) {
      options.logger?.error({ err, path: request.url.split("?", 1)[0] }, "request failed");
      return reply.code(500).send(errorBody("INTERNAL", "internal error"));
    }
    if (err.code?.startsWith("FST_CSRF")) {
      return reply
        .code(403)
        .send(errorBody("CSRF_INVALID", "missing or invalid CSRF token; reload the page"));
    }
    const code =
      status === 413
        ? "PAYLOAD_TOO_LARGE"
        : status === 415
          ? "UNSUPPORTED_MEDIA_TYPE"
          : status === 429
            ? "RATE_LIMITED"
            : "INVALID_REQUEST";
    return reply.code(status).send(errorBody(code, err.message));
  });
  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send(errorBody("NOT_FOUND", `no route ${request.method} ${request.url.split("?", 1)[0]}`));
  });

  await registerSecurityHeaders(app);
  await app.register(import("@fastify/cookie"));
  await app.register(import("@fastify/csrf-protection"), {
    sessionPlugin: "@fastify/cookie",
    cookieOpts: { path: "/", sameSite: "strict", httpOnly: true, signed: false },
    // Tokens come in the `x-csrf-token` header (fetch) or the `_csrf` form field.
    getToken: (req) =>
      (req.headers["x-csrf-token"] as string | undefined) ??
      (req.body as { _csrf?: string } | undefined)?._csrf,
  });
  await app.register(import("@fastify/rate-limit"), { global: false });
  registerAuth(app, { store: options.api.auth });

  await app.register(
    registerWebhookRoute({
      path: WEBHOOK_PATH,
      receiver: options.receiver,
      metrics,
      limitBytes: options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES,
    }),
  );

  app.get("/healthz", async (_request, reply) => {
    const report = await runHealthChecks(options.healthChecks, options.healthTimeoutMs);
    return reply
      .code(report.status === "ok" ? 200 : 503)
      .header("cache-control", "no-store")
      .send(report);
  });

  app.get("/metrics", { preHandler: allow("metrics.read") }, async (_request, reply) => {
    const text = await metrics.render();
    return reply.header("content-type", "text/plain; version=0.0.4; charset=utf-8").send(text);
  });

  // The download route from before /api/v1 (kept for links and scripts that use it).
  app.get<{ Params: { id: string; format: string } }>(
    "/batches/:id/result.:format",
    { preHandler: allow("batches.read") },
    async (request, reply) => {
      const { id, format } = request.params;
      if (format !== "csv" && format !== "xlsx") throw new ApiError(404, "NOT_FOUND", "no such file");
      await sendResult(reply, options.resultFile, id, format);
    },
  );

  await registerApi(app, options.api, { resultFile: options.resultFile, sendResult });
  await registerConsolePages(app);
  await registerQueueView(app, options.api.queues);
  return app;
}

/** Streams a batch's result file (or answers 404). */
export async function sendResult(
  reply: import("fastify").FastifyReply,
  source: ResultFileSource | undefined,
  batchId: string,
  format: ResultFormat,
): Promise<void> {
  if (!BATCH_ID_PATTERN.test(batchId)) throw new ApiError(404, "NOT_FOUND", "no such batch");
  if (!source) throw new ApiError(404, "NOT_FOUND", `no ${format} result file for batch ${batchId}`);
  reply.hijack();
  const raw = reply.raw;
  if (await sendResultFile(raw, source, batchId, format)) return;
  const text = JSON.stringify(errorBody("NOT_FOUND", `no ${format} result file for batch ${batchId}`));
  raw.writeHead(404, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
  raw.end(text);
}

export interface RunningHttpServer {
  app: FastifyInstance;
  port: number;
  /** `http://host:port` (no trailing slash). */
  url: string;
  /** Stops accepting, lets requests in flight finish within `graceMs`, then drops what is left. */
  close(graceMs?: number): Promise<void>;
}

export async function listen(
  app: FastifyInstance,
  port: number,
  host = "127.0.0.1",
): Promise<RunningHttpServer> {
  await app.listen({ port, host });
  const actual = (app.server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    app,
    port: actual,
    url: `http://${host.includes(":") ? `[${host}]` : host}:${actual}`,
    close: (graceMs = 5_000) => {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => app.server.closeAllConnections(), graceMs);
        timer.unref();
        // Live event streams would hold close() for the whole grace period: end them first.
        app.server.closeIdleConnections();
        void app.close().then(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      return closing;
    },
  };
}
