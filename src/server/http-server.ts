/**
 * The HTTP server of `payouts serve` (node:http, no framework): the webhook receiver, health,
 * metrics and result downloads. Everything it talks to is passed in, so tests and the demo build it
 * around their own Redis, queue and result-file source.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { BATCH_ID_PATTERN } from "../row-identity/index.js";
import { type HealthCheck, runHealthChecks } from "./health.js";
import { ServerMetrics } from "./metrics.js";
import { BodyTooLargeError, readBody } from "./read-body.js";
import { type ResultFileSource, type ResultFormat, sendResultFile } from "./result-download.js";
import type { ReceiverLogger, WebhookReceiver } from "./webhook-receiver.js";

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
  bodyLimitBytes?: number;
  metrics?: ServerMetrics;
  logger?: ReceiverLogger;
}

const RESULT_ROUTE = /^\/batches\/([^/]+)\/result\.(csv|xlsx)$/;

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  extra: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    ...extra,
  });
  res.end(text);
}

export function createHttpServer(options: HttpServerOptions): Server {
  const metrics = options.metrics ?? new ServerMetrics();
  const limit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const { logger } = options;

  async function onWebhook(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw: Buffer;
    try {
      raw = await readBody(req, limit);
    } catch (err) {
      if (err instanceof BodyTooLargeError) {
        metrics.countDelivery("too_large");
        // The rest of the body is not read: close the connection after answering.
        sendJson(res, 413, { error: `body larger than ${limit} bytes` }, { connection: "close" });
        res.on("finish", () => req.destroy());
        return;
      }
      throw err;
    }
    const answer = await options.receiver(raw, req.headers["x-service-signature"]);
    metrics.countDelivery(answer.outcome);
    sendJson(res, answer.status, answer.body);
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const pathname = (req.url ?? "/").split("?", 1)[0] ?? "/";
    const method = req.method ?? "GET";
    if (pathname === WEBHOOK_PATH) {
      if (method !== "POST") return sendJson(res, 405, { error: "use POST" }, { allow: "POST" });
      return onWebhook(req, res);
    }
    if (method !== "GET" && method !== "HEAD") {
      return sendJson(res, 405, { error: "method not allowed" }, { allow: "GET" });
    }
    if (pathname === "/healthz") {
      const report = await runHealthChecks(options.healthChecks, options.healthTimeoutMs);
      return sendJson(res, report.status === "ok" ? 200 : 503, report);
    }
    if (pathname === "/metrics") {
      const text = metrics.render();
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
      res.end(text);
      return;
    }
    const result = RESULT_ROUTE.exec(pathname);
    if (result) {
      const batchId = decodeURIComponent(result[1] ?? "");
      const format = result[2] as ResultFormat;
      if (!BATCH_ID_PATTERN.test(batchId)) return sendJson(res, 404, { error: "no such batch" });
      if (options.resultFile && (await sendResultFile(res, options.resultFile, batchId, format))) return;
      return sendJson(res, 404, { error: `no ${format} result file for batch ${batchId}` });
    }
    sendJson(res, 404, { error: "not found" });
  }

  return createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      logger?.error({ err: (err as Error).message, path: req.url?.split("?", 1)[0] }, "request failed");
      if (!res.headersSent) sendJson(res, 500, { error: "internal error" });
      else res.destroy();
    });
  });
}

export interface RunningHttpServer {
  server: Server;
  port: number;
  /** `http://host:port` (no trailing slash). */
  url: string;
  /** Stops accepting, lets requests in flight finish within `graceMs`, then drops what is left. */
  close(graceMs?: number): Promise<void>;
}

export async function listen(server: Server, port: number, host = "127.0.0.1"): Promise<RunningHttpServer> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const actual = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  return {
    server,
    port: actual,
    url: `http://${host.includes(":") ? `[${host}]` : host}:${actual}`,
    close: (graceMs = 5_000) => {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
