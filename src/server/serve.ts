/**
 * `startServer`: the server of `payouts serve` with its resources: a Redis connection for dedupe keys
 * and the health ping, the reconcile queue (own connection), and the API client for the health check.
 */
import { Redis } from "ioredis";
import { DEFAULT_KEY_PREFIX } from "../batches/index.js";
import type { PayoutsClient } from "../payouts-api/index.js";
import { connectRedis } from "../pipeline/index.js";
import { createReconcileQueue, reconcileEnqueuer } from "../reconcile/index.js";
import { createHttpServer, listen, type RunningHttpServer } from "./http-server.js";
import { ServerMetrics } from "./metrics.js";
import type { ResultFileSource } from "./result-download.js";
import { createWebhookReceiver, type ReceiverLogger } from "./webhook-receiver.js";

export interface ServerOptions {
  redisUrl: string;
  /** Key prefix of the pipeline's data (default `payouts`). */
  prefix?: string;
  /** The webhook signing secret (PAYOUTS_WEBHOOK_SECRET; default the API key). */
  webhookSecret: string;
  /** Used by `/healthz` only (GET /limitations); owned by the caller, not closed here. */
  client: PayoutsClient;
  /** Default 0 (an ephemeral port). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  resultFile?: ResultFileSource;
  bodyLimitBytes?: number;
  dedupeTtlSeconds?: number;
  logger?: ReceiverLogger;
}

export interface RunningServer extends RunningHttpServer {
  metrics: ServerMetrics;
  /** The connection used for dedupe keys (for tests and the demo). */
  redis: Redis;
}

function waitUntilReady(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === "ready") return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off("ready", done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    redis.once("ready", done);
  });
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const prefix = options.prefix ?? DEFAULT_KEY_PREFIX;
  // Fails fast while Redis is away (no offline queue): the receiver answers 503 and the service retries.
  const redis = new Redis(options.redisUrl, {
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
  });
  // Without an offline queue, commands sent before the connection is up fail: wait for it (briefly;
  // if Redis is down, the server still starts, answers 503 to deliveries and says so in /healthz).
  await waitUntilReady(redis, 5_000);
  const queueConnection = connectRedis(options.redisUrl);
  const queue = createReconcileQueue(queueConnection, prefix);
  const metrics = new ServerMetrics();
  const receiver = createWebhookReceiver({
    secret: options.webhookSecret,
    redis,
    prefix,
    enqueuer: reconcileEnqueuer(queue),
    ...(options.dedupeTtlSeconds !== undefined ? { dedupeTtlSeconds: options.dedupeTtlSeconds } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  const server = createHttpServer({
    receiver,
    metrics,
    healthChecks: {
      redis: () => redis.ping(),
      api: (signal) => options.client.limitations.get({ signal }),
    },
    ...(options.resultFile ? { resultFile: options.resultFile } : {}),
    ...(options.bodyLimitBytes !== undefined ? { bodyLimitBytes: options.bodyLimitBytes } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  });
  let running: RunningHttpServer;
  try {
    running = await listen(server, options.port ?? 0, options.host ?? "127.0.0.1");
  } catch (err) {
    await queue.close();
    queueConnection.disconnect();
    redis.disconnect();
    throw err;
  }
  let closing: Promise<void> | undefined;
  return {
    ...running,
    metrics,
    redis,
    close: (graceMs) => {
      closing ??= (async () => {
        await running.close(graceMs);
        await queue.close();
        await queueConnection.quit().catch(() => queueConnection.disconnect());
        await redis.quit().catch(() => redis.disconnect());
      })();
      return closing;
    },
  };
}
